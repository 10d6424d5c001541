package upstream

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestChildEnvMinimal: by default a child keeps only the minimal variables
// of the proxy's environment plus its own env (which wins); inherit_env
// keeps everything.
func TestChildEnvMinimal(t *testing.T) {
	base := []string{"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "GITHUB_TOKEN=ghp_secret", "AWS_SECRET_ACCESS_KEY=aws", "LANG=en_US.UTF-8", "broken"}
	u := &config.Upstream{Name: "x", Env: map[string]string{"API_KEY": "mine", "LANG": "C"}}
	got := childEnv(u, base)
	want := []string{"API_KEY=mine", "HOME=/home/u", "LANG=C", "LC_ALL=C.UTF-8", "PATH=/usr/bin"}
	if runtime.GOOS == "windows" {
		want = []string{"API_KEY=mine", "LANG=C", "PATH=/usr/bin"}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
	u.InheritEnv = true
	got = childEnv(u, base)
	for _, kv := range []string{"GITHUB_TOKEN=ghp_secret", "AWS_SECRET_ACCESS_KEY=aws", "API_KEY=mine", "LANG=C"} {
		if !slices.Contains(got, kv) {
			t.Errorf("inherit_env: %q missing from %q", kv, got)
		}
	}
}

// TestCommandOnChildPath: a command found only on the upstream's env.PATH
// starts (it is looked up in the child's PATH, not the proxy's); a missing
// one fails naming that PATH.
func TestCommandOnChildPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a symlink to the test binary")
	}
	dir := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(dir, "only-on-env-path")); err != nil {
		t.Fatal(err)
	}
	u := stdioUpstream("p", "plain")
	u.Command = "only-on-env-path"
	u.Env["PATH"] = dir + string(os.PathListSeparator) + os.Getenv("PATH")
	missing := stdioUpstream("m", "plain")
	missing.Command = "only-on-env-path"
	missing.Env["PATH"] = t.TempDir()
	m, _ := startManager(t, []*config.Upstream{u, missing}, Options{Grace: 100 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour})
	if st, _ := m.Status("p"); st.State != StateReady {
		t.Fatalf("p: %s %s", st.State, st.Err)
	}
	st, _ := m.Status("m")
	if st.State != StateFailed || !strings.Contains(st.Err, `exec: "only-on-env-path": executable file not found in $PATH (the upstream's env.PATH)`) {
		t.Fatalf("m: %s %q", st.State, st.Err)
	}
}
