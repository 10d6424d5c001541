package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSetLevel2026IsTheClientsBug: a
// go-sdk v1.8.0 client that negotiated 2026-07-28 sends logging/setLevel,
// a method that revision removed (MCP 2026-07-28 server/utilities/logging:
// the level goes in each request's _meta, io.modelcontextprotocol/logLevel),
// and sends it without the _meta every 2026-07-28 request carries
// (SEP-2575), so the HTTP transport refuses it with 400 "missing or invalid
// _meta field". A plain go-sdk server (no proxy) refuses it alike; the
// proxy's front, stateful and stateless, gives the same answer. The same
// request with its _meta gets -32601 (HTTP 404, SEP-2575): the method is
// not part of 2026-07-28.
func TestSetLevel2026IsTheClientsBug(t *testing.T) {
	url, _, _ := slowUpstream(t)
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	plainURL := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return plain }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(plainURL.Close)
	fronts := map[string]string{"plain go-sdk server": plainURL.URL}
	for _, stateless := range []bool{false, true} {
		p := startProxyText(t, fmt.Sprintf("[server]\ntransport = \"http\"\nstateless = %v\n[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", stateless, tomlQuote(url)))
		fronts[fmt.Sprintf("proxy stateless=%v", stateless)] = frontURL(t, p)
	}
	for name, front := range fronts {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "leveller", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
			t.Fatalf("%s: negotiated %s, want %s", name, v, modernVersion)
		}
		err = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
		if err == nil || !strings.Contains(err.Error(), `missing or invalid _meta field "io.modelcontextprotocol/protocolVersion"`) {
			t.Errorf("%s: go-sdk client's SetLoggingLevel at %s: %v, want the transport's refusal of a request without _meta (if the go-sdk client now sends _meta or refuses the call itself, update docs/design.md)", name, modernVersion, err)
		}
		// With the _meta a 2026-07-28 request carries: the method is gone.
		body := `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, front, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", modernVersion)
		req.Header.Set("Mcp-Method", "logging/setLevel")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"code":-32601`) {
			t.Errorf("%s: logging/setLevel with _meta at %s: HTTP %d %s, want 404 and -32601", name, modernVersion, resp.StatusCode, b)
		}
	}
}
