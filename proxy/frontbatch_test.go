package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// postFront POSTs body to the front at url in session sid (version
// 2025-03-26) and returns the status and the body.
func postFront(t *testing.T, url, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid == "" {
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	return resp.StatusCode, string(b)
}

// TestHTTPBatchMalformedElements: on the Streamable HTTP front at
// 2025-03-26 (batches allowed) each malformed element of a batch gets its
// own error object in the answer and the other elements run (an event
// stream: one event each; notifications only: a JSON array with the
// errors); a single message with neither method nor result/error gets
// HTTP 400 with -32600 and its id.
func TestHTTPBatchMalformedElements(t *testing.T) {
	p, _ := testProxy(t, fastPathConfig)
	url := frontURL(t, p)
	_, sid := postFront(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if sid == "" {
		t.Fatal("no session")
	}
	if code, _ := postFront(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d", code)
	}
	noMethod := `"error":{"code":-32600,"message":"invalid request: no \"method\" (a request or notification) and no \"result\" or \"error\" (a response)"}`
	for _, c := range []struct {
		body string
		code int
		want []string
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"mehtod":"tools/list"}]`, 200,
			[]string{`data: {"jsonrpc":"2.0","id":1,"result":{}}`, `data: {"jsonrpc":"2.0","id":2,` + noMethod}},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"},5]`, 200,
			[]string{`data: {"jsonrpc":"2.0","id":3,"result":{}}`, `data: {"jsonrpc":"2.0","id":null,"error":{"code":-32600`}},
		{`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`, 200,
			[]string{`data: {"jsonrpc":"2.0","id":4,"result":{}}`, `"id":4,"error":{"code":-32600,"message":"invalid request: the batch holds request id 4 twice"}`}},
		{`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"x"}]`, 200,
			[]string{`[{"jsonrpc":"2.0","id":"x",` + noMethod + `}]`}},
		{`[1,2]`, 400, []string{`[{"jsonrpc":"2.0","id":null,`, `},{"jsonrpc":"2.0","id":null,`}},
		{`{"jsonrpc":"2.0","id":6,"mehtod":"ping"}`, 400, []string{`{"jsonrpc":"2.0","id":6,` + noMethod + `}`}},
	} {
		code, body := postFront(t, url, sid, c.body)
		if code != c.code {
			t.Errorf("%s: HTTP %d, want %d: %s", c.body, code, c.code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: answer lacks %s:\n%s", c.body, w, body)
			}
		}
	}
}
