//go:build unix

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUTF8BOMFromUpstreamAndConfig (portability):
// some Windows programs start their stdout with a UTF-8 byte order mark,
// and Windows Notepad starts a saved config.toml with one. The stdio
// upstream transport skips one BOM at the start of the stream: before, the
// first line (the initialize answer) was "not a JSON-RPC message" and the
// upstream never started. A config.toml starting with a BOM is read (the
// TOML parser skips it; line numbers stay right, checked in package
// config).
func TestUTF8BOMFromUpstreamAndConfig(t *testing.T) {
	cfg := writeConfig(t, `
[tool_search]
enabled = false

[upstreams.bom]
command = `+tomlString(fakeUpstreamBin(t))+`
args = ["-scenario", "longname", "-bom"]
startup_timeout = "20s"
`)
	// Saved the way Windows Notepad saves UTF-8 ("UTF-8 with BOM" before
	// Windows 10 1903, still offered), with CRLF line ends.
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = append([]byte("\xEF\xBB\xBF"), strings.ReplaceAll(string(data), "\n", "\r\n")...)
	cfg = filepath.Join(t.TempDir(), "notepad.toml")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := gosdkClientStdio(t, proxyCmd(t, cfg, "--startup-wait", "60s"))
	ctx, cancel := context.WithTimeout(context.Background(), goClientTimeout)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNamesGo(tools.Tools); strings.Join(names, ",") != "bom__free-tier-usage,bom__get-cost-forecast" {
		t.Fatalf("tools/list = %v: the upstream whose stdout starts with a BOM should be up", names)
	}
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "bom__free-tier-usage", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
}
