package proxy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// TestCallRacingReloadGoesToNewManager: a call that got the old manager
// of an upstream just before a reload replaced it (the old one refuses
// it unsent: upstream.ErrRetired) is sent to the new manager; when the
// upstream was removed, the error says so.
func TestCallRacingReloadGoesToNewManager(t *testing.T) {
	up := startTestUpstream(t)
	text := fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.t]\nurl = %s\n", tomlQuote(up.URL))
	p := startProxyText(t, text)
	ctx := context.Background()
	reload := func(text string) {
		t.Helper()
		next, err := config.Parse([]byte(text), filepath.Join(t.TempDir(), "config.toml"), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Reload(ctx, next); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := p.ups.Get("t")
	reload(text + "call_timeout = \"20s\"\n") // t restarted: switched once the new instance started
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}}
	waitFor(t, "the switch to the new manager of t, the old one retired", func() bool {
		cur, _ := p.ups.Get("t")
		_, err := old.CallToolWith(ctx, "t", params, upstream.CallOptions{})
		return cur != old && errors.Is(err, upstream.ErrRetired)
	})
	if res, err := p.ups.CallOn(ctx, old, "t", params, upstream.CallOptions{}); err != nil || res.IsError {
		t.Fatalf("a call that raced the reload: %+v, %v; want it served by the new manager", res, err)
	}
	cur, _ := p.ups.Get("t")
	reload(fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.u]\nurl = %s\n", tomlQuote(up.URL))) // t removed
	_, err := p.ups.CallOn(ctx, cur, "t", params, upstream.CallOptions{})
	if err == nil || !strings.Contains(err.Error(), `upstream "t" was removed by a config reload`) {
		t.Fatalf("a call that raced the removal: %v", err)
	}
}
