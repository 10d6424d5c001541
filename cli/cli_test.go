package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nosuch"}, exitUsage, `unknown command "nosuch"`},
		{[]string{"describe"}, exitUsage, "want exactly one ID"},
		{[]string{"call", "x", "--args", "[1,2]"}, exitUsage, "--args is not a JSON object"},
		{[]string{"serve", "--config", "/nonexistent/config.toml"}, exitUsage, "/nonexistent/config.toml"},
		{[]string{"bench", "what"}, exitUsage, `unknown benchmark "what"`},
		{[]string{"bench", "search", "--tools", "x"}, exitUsage, "--tools and --queries are required"},
		{[]string{"stats"}, exitUsage, "session log"},
	}
	for _, c := range cases {
		code, out, errs := run(c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", c.args, code, out+errs, c.code, c.want)
		}
	}
}

func TestModeOverrideValidated(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("[upstreams.x]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("list", "--config", cfg, "--mode", "turbo")
	if code != exitUsage || !strings.Contains(out+errs, `--mode "turbo"`) {
		t.Fatalf("exit %d, output %q", code, out+errs)
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := run("version"); code != exitOK || !strings.HasPrefix(out, "mcp-toolsearch ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, out, _ := run("--help"); code != exitOK || !strings.Contains(out, "Exit codes") {
		t.Fatalf("--help: %d %q", code, out)
	}
}

// TestShippedConfigsLoad keeps config.toml and every example config valid.
func TestShippedConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/*.toml")
	files = append(files, "../config.toml")
	files = append(files, must(filepath.Glob("../examples/*.toml"))...)
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		getenv := func(string) (string, bool) { return "value-for-test", true }
		if _, err := config.Parse(data, f, getenv); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func must(s []string, err error) []string {
	if err != nil {
		panic(err)
	}
	return s
}
