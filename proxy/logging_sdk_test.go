package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStatelessRequestsLogNoSessionLines: a 2026-07-28 client,
// whose every request gets a go-sdk session of its own on the stateless
// server, adds no "server connecting" / "server session connected" /
// "server session disconnected" INFO lines per request; a 2025-11-25
// client's session, which lives for the connection, still logs them.
func TestStatelessRequestsLogNoSessionLines(t *testing.T) {
	upSrv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	upSrv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}}}, nil
	})
	uh := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil))
	t.Cleanup(uh.Close)
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p := startProxyIn(t, t.TempDir(), fmt.Sprintf("[server]\ntransport = \"http\"\n[upstreams.t]\nurl = %s\n", tomlQuote(uh.URL)), nil, Options{Logger: log})
	url := frontURL(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	count := func() int { return strings.Count(buf.String(), `msg="server session connected"`) }
	for _, version := range []string{"", "2025-11-25"} {
		before := count()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t__one", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		got, want := count()-before, 0
		if version != "" {
			want = 1
		}
		if got != want {
			t.Errorf("client at %q: %d INFO lines \"server session connected\" for one session of 5 calls, want %d:\n%s", cs.InitializeResult().ProtocolVersion, got, want, buf.String())
		}
	}
}
