package proxy

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestHTTPUnknownMethodIsJSONRPC (trial round 6, M2): over the session
// Streamable HTTP front (and the stateless one, for a 2025-11-25 client),
// a request of an unknown method gets the JSON-RPC error -32601 with its
// id, as over stdio, instead of the go-sdk's HTTP 400 text; known methods
// and other refusals are unchanged.
func TestHTTPUnknownMethodIsJSONRPC(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		text := "[server]\ntransport = \"http\"\n"
		if stateless {
			text += "stateless = true\n"
		}
		_, url, _ := httpProxy(t, text+"[upstreams.up]\nurl = %[1]s\n")
		c := &rawClient{t: t, url: url}
		if res := c.initialize("x"); res["error"] != nil {
			t.Fatalf("stateless=%v: initialize: %v", stateless, res["error"])
		}
		resp := c.post(context.Background(), "foo/bar", map[string]any{}, false)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"jsonrpc":"2.0","id":` + itoa(c.id) + `,"error":{"code":-32601,"message":"method not found: \"foo/bar\""}}`
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("stateless=%v: foo/bar: HTTP %d %s %s\nwant HTTP 200 application/json %s", stateless, resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
		}
		// tools/call without params: the go-sdk's "invalid request" as -32600.
		resp = c.post(context.Background(), "tools/call", nil, false)
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := `{"jsonrpc":"2.0","id":` + itoa(c.id) + `,"error":{"code":-32600,"message":"invalid request: missing required \"params\""}}`; resp.StatusCode != 200 || strings.TrimSpace(string(b)) != want {
			t.Errorf("stateless=%v: tools/call without params: HTTP %d %s\nwant %s", stateless, resp.StatusCode, b, want)
		}
		if res := c.call("ping", map[string]any{}); res["error"] != nil || res["result"] == nil {
			t.Errorf("stateless=%v: ping after: %v", stateless, res)
		}
		// A notification of an unknown method is not a call: unchanged.
		resp = c.post(context.Background(), "notifications/zzz", map[string]any{}, true)
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "-32601") {
			t.Errorf("stateless=%v: a notification got %s", stateless, b)
		}
	}
}

// TestClientNameOfAsTheSDK (review round 6): the client name the
// Mcp-Param-* check and the HTTP fast path read from a client-declared
// clientInfo is the one the go-sdk's session gets (keys matched with
// case), so a decoy "NAME" cannot make the check evaluate another
// client's policy.
func TestClientNameOfAsTheSDK(t *testing.T) {
	for raw, want := range map[string]string{
		`{"name":"good","version":"1","NAME":"evil"}`: "good",
		`{"NAME":"evil","version":"1"}`:               "",
		`{"name":"a","name":"b"}`:                     "b",
		`not json`:                                    "",
	} {
		if got := clientNameOf([]byte(raw)); got != want {
			t.Errorf("clientNameOf(%s) = %q, want %q", raw, got, want)
		}
	}
}
