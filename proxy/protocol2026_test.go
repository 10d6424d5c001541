package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpc2026 posts one JSON-RPC request of protocol 2026-07-28 to url with
// the standard headers (Mcp-Method, Mcp-Name, MCP-Protocol-Version) set
// from the body unless hdr overrides them ("" removes one), and returns
// the HTTP status and the decoded JSON-RPC response (from a JSON body or
// the first message event of an SSE body).
func rpc2026(t *testing.T, url, method string, params map[string]any, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}
	if m, ok := params["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	name, _ := params["name"].(string)
	resp, err := http.DefaultClient.Do(request2026(t, url, method, name, body, hdr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				raw = []byte(d)
				break
			}
		}
	} else {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		raw = b.Bytes()
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: status %d, body %q: %v", method, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

// request2026 is a POST of body to url with the headers of a 2026-07-28
// request of method (Content-Type, Accept, MCP-Protocol-Version,
// Mcp-Method, and Mcp-Name when name is not ""); hdr overrides them (""
// removes one).
func request2026(t *testing.T, url, method, name string, body []byte, hdr map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return req
}

// TestHeaderValidation2026: on 2026-07-28 the MCP HTTP headers must match
// the body (MCP 2026-07-28 Transports, SEP-2243): a mismatched Mcp-Method,
// Mcp-Name or MCP-Protocol-Version, or a missing MCP-Protocol-Version, is
// HTTP 400 with JSON-RPC error -32020 (header mismatch), and the call never
// reaches the upstream; matching headers work.
func TestHeaderValidation2026(t *testing.T) {
	url, up := startProxies(t, 1, statelessConfig)
	url += "/mcp"
	call := map[string]any{"name": "t__echo", "arguments": map[string]any{}}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"Mcp-Method differs", map[string]string{"Mcp-Method": "tools/list"}},
		{"Mcp-Name differs", map[string]string{"Mcp-Name": "t__other"}},
		{"MCP-Protocol-Version differs from _meta", map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{"MCP-Protocol-Version missing", map[string]string{"MCP-Protocol-Version": ""}},
	} {
		status, res := rpc2026(t, url, "tools/call", call, tc.hdr)
		code, _ := jsonPath(res, "error", "code").(float64)
		if status != http.StatusBadRequest || code != -32020 {
			t.Errorf("%s: HTTP %d, response %v; want 400 and error -32020", tc.name, status, res)
		}
	}
	if n := up.count("echo"); n != 0 {
		t.Errorf("upstream got %d calls from mismatched requests", n)
	}
	status, res := rpc2026(t, url, "tools/call", call, nil)
	if status != http.StatusOK || res["error"] != nil || jsonPath(res, "result", "resultType") != "complete" {
		t.Errorf("matching headers: HTTP %d, %v", status, res)
	}
	if n := up.count("echo"); n != 1 {
		t.Errorf("upstream got %d calls, want 1", n)
	}
}

// TestCacheHints2026: list results carry cacheScope "private" when the
// answer depends on who asks (by_client rules, a bearer token) and
// "public" otherwise, and ttlMs 0 while the catalog just changed.
func TestCacheHints2026(t *testing.T) {
	for _, tc := range []struct {
		name, extra, token, want string
	}{
		{"no per-client rules", "", "", "public"},
		{"bearer token", "bearer_token = \"tok-abcdef\"\n", "tok-abcdef", "private"},
		{"by_client rules", "[tools.by_client.\"x*\"]\ndeny = [\"t__echo\"]\n", "", "private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := statelessConfig
			if strings.HasPrefix(tc.extra, "bearer_token") {
				text = strings.Replace(text, "stateless = true\n", "stateless = true\n"+tc.extra, 1)
			} else if tc.extra != "" {
				// by_client needs a stateful front (config refuses it stateless).
				text = strings.Replace(text, "stateless = true\n", "", 1) + tc.extra
			}
			p, _ := testProxy(t, text)
			old := route2026
			route2026 = true // the stateful case serves 2026-07-28 by routing
			defer func() { route2026 = old }()
			url := frontURL(t, p)
			hdr := map[string]string{}
			if tc.token != "" {
				hdr["Authorization"] = "Bearer " + tc.token
			}
			for _, m := range []string{"tools/list", "server/discover"} {
				status, res := rpc2026(t, url, m, nil, hdr)
				if status != http.StatusOK || res["error"] != nil {
					t.Fatalf("%s: HTTP %d %v", m, status, res)
				}
				if got := jsonPath(res, "result", "cacheScope"); got != tc.want {
					t.Errorf("%s cacheScope = %v, want %q", m, got, tc.want)
				}
				if got := jsonPath(res, "result", "ttlMs"); got != float64(0) {
					t.Errorf("%s ttlMs = %v right after start, want 0", m, got)
				}
			}
		})
	}
}

// TestCacheClock: ttlMs is 0 within cacheSettle of a change or while an
// upstream is down, then a quarter of the stable time, capped.
func TestCacheClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := cacheClock{start: t0}
	for _, tc := range []struct {
		at       time.Duration
		unstable bool
		want     time.Duration
	}{
		{5 * time.Second, false, 0},
		{20 * time.Second, false, 5 * time.Second},
		{20 * time.Second, true, 0},
		{10 * time.Minute, false, cacheMaxTTL},
	} {
		if got := c.ttl(t0.Add(tc.at), tc.unstable); got != tc.want {
			t.Errorf("ttl at %v (unstable %v) = %v, want %v", tc.at, tc.unstable, got, tc.want)
		}
	}
	c.changed(t0.Add(10 * time.Minute))
	if got := c.ttl(t0.Add(10*time.Minute+time.Second), false); got != 0 {
		t.Errorf("ttl 1 s after a change = %v, want 0", got)
	}
	if got := c.ttl(t0.Add(10*time.Minute+40*time.Second), false); got != 10*time.Second {
		t.Errorf("ttl 40 s after a change = %v, want 10s", got)
	}
}

func jsonPath(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestParamHeaders2026: Mcp-Param-* headers (MCP 2026-07-28 Streamable
// HTTP, SEP-2243) of a tool whose inputSchema marks an argument
// x-mcp-header. On the front a missing, badly encoded or mismatched
// header, or one for an absent argument, is HTTP 400 with -32020 and the
// call reaches no upstream; matching headers (plain and Base64) work. The
// upstream is a stateless go-sdk server at 2026-07-28, which refuses a
// call without the header itself: the calls that pass show that the
// proxy's upstream leg sends it.
func TestParamHeaders2026(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "regional-upstream", Version: "1"}, nil)
	var calls atomic.Int32
	s.AddTool(&mcp.Tool{Name: "regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "args " + string(req.Params.Arguments)}}}, nil
		})
	_, url := statelessProxyOver(t, "r", s)

	call := func(region any) map[string]any {
		args := map[string]any{"query": "q"}
		if region != nil {
			args["region"] = region
		}
		return map[string]any{"name": "r__regional", "arguments": args}
	}
	for _, tc := range []struct {
		name   string
		region any
		hdr    map[string]string
	}{
		{"header missing", "Hello", nil},
		{"header differs", "Hello", map[string]string{"Mcp-Param-Region": "World"}},
		{"bad Base64 padding", "Hello", map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}},
		{"bad Base64 characters", "Hello", map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}},
		{"header for an absent argument", nil, map[string]string{"Mcp-Param-Region": "Hello"}},
	} {
		status, res := rpc2026(t, url, "tools/call", call(tc.region), tc.hdr)
		code, _ := jsonPath(res, "error", "code").(float64)
		msg, _ := jsonPath(res, "error", "message").(string)
		if status != http.StatusBadRequest || code != -32020 || !strings.Contains(msg, "Mcp-Param-Region") {
			t.Errorf("%s: HTTP %d, response %v; want 400 and error -32020 naming Mcp-Param-Region", tc.name, status, res)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("upstream got %d calls from mismatched requests", n)
	}
	for _, tc := range []struct {
		name, region, header string
	}{
		{"plain", "Hello", "Hello"},
		{"Base64", "Hello", "=?base64?SGVsbG8=?="},
		{"non-ASCII value (Base64 on both legs)", " héllo", "=?base64?IGjDqWxsbw==?="},
	} {
		status, res := rpc2026(t, url, "tools/call", call(tc.region), map[string]string{"Mcp-Param-Region": tc.header})
		content, _ := jsonPath(res, "result", "content").([]any)
		if status != http.StatusOK || res["error"] != nil || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "args ") {
			t.Errorf("%s: HTTP %d, %v; want the upstream's result", tc.name, status, res)
		}
	}
	// Without the argument no header is needed, on either leg.
	if status, res := rpc2026(t, url, "tools/call", call(nil), nil); status != http.StatusOK || res["error"] != nil {
		t.Errorf("no region argument: HTTP %d, %v", status, res)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("upstream got %d calls, want 4", n)
	}
}

// TestParamHeadersDenied2026: the Mcp-Param-* check resolves the tool as
// the requester sees it. A client whose policy
// denies a tool with an x-mcp-header argument and calls it without the
// header gets exactly the answer it gets from a proxy without that tool
// (SPEC §6: a denied tool is answered like an unknown one, naming neither
// the header nor the argument); a client that may see the tool still gets
// HTTP 400 with -32020. Stateful front, 2026-07-28 routed to the stateless
// handler, by_client rule on the clientInfo.name of the request's _meta.
func TestParamHeadersDenied2026(t *testing.T) {
	old := route2026
	route2026 = true
	defer func() { route2026 = old }()
	s := mcp.NewServer(&mcp.Implementation{Name: "regional-upstream", Version: "1"}, nil)
	var calls atomic.Int32
	s.AddTool(&mcp.Tool{Name: "regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(up.Close)
	// (A glob, and not "r__…": in the deployment without r, a literal
	// deny entry would match no tool, and one naming upstream r would
	// refuse the config.)
	const rule = "[tools.by_client.\"x*\"]\ndeny = [\"*__regiona?\"]\n"
	with, _ := testProxy(t, "[server]\ntransport = \"http\"\n[upstreams.t]\nurl = %[1]s\n[upstreams.r]\nurl = "+tomlQuote(up.URL)+"\n"+rule)
	without, _ := testProxy(t, "[server]\ntransport = \"http\"\n[upstreams.t]\nurl = %[1]s\n"+rule)
	withURL, withoutURL := frontURL(t, with), frontURL(t, without)

	call := func(client string) map[string]any {
		return map[string]any{"name": "r__regional", "arguments": map[string]any{"region": "Hello"},
			"_meta": map[string]any{"io.modelcontextprotocol/clientInfo": map[string]any{"name": client, "version": "1"}}}
	}
	for _, hdr := range []map[string]string{nil, {"Mcp-Param-Region": "World"}, {"Mcp-Param-Region": "Hello"}} {
		status, denied := rpc2026(t, withURL, "tools/call", call("xeno"), hdr)
		wantStatus, unknown := rpc2026(t, withoutURL, "tools/call", call("xeno"), hdr)
		if status != wantStatus || fmt.Sprint(denied) != fmt.Sprint(unknown) {
			t.Errorf("denied tool, headers %v: HTTP %d %v; want the unknown tool's HTTP %d %v", hdr, status, denied, wantStatus, unknown)
		}
		if msg := fmt.Sprint(denied); strings.Contains(msg, "Mcp-Param") || strings.Contains(msg, `"region"`) || jsonPath(denied, "error", "code") != float64(-32602) {
			t.Errorf("denied tool, headers %v: %v; want -32602 unknown tool, naming no header or argument", hdr, denied)
		}
	}
	status, res := rpc2026(t, withURL, "tools/call", call("raw"), nil)
	code, _ := jsonPath(res, "error", "code").(float64)
	msg, _ := jsonPath(res, "error", "message").(string)
	if status != http.StatusBadRequest || code != -32020 || !strings.Contains(msg, "Mcp-Param-Region") {
		t.Errorf("allowed tool, header missing: HTTP %d %v; want 400 and -32020 naming Mcp-Param-Region", status, res)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("upstream got %d calls, want 0", n)
	}
	if status, res := rpc2026(t, withURL, "tools/call", call("raw"), map[string]string{"Mcp-Param-Region": "Hello"}); status != http.StatusOK || res["error"] != nil || calls.Load() != 1 {
		t.Errorf("allowed tool, matching header: HTTP %d %v, upstream calls %d; want the upstream's result", status, res, calls.Load())
	}
}

// TestClientCapabilitiesUpstream2026: on a 2026-07-28 upstream leg each
// call declares the calling client's capabilities (what the proxy can
// relay: sampling, elicitation, roots), not the proxy's own (MCP
// 2026-07-28, SEP-2575: capabilities are per request), so the upstream
// sees the same client as it would directly.
func TestClientCapabilitiesUpstream2026(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "caps-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "caps", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var seen []string
			if ip := req.Session.InitializeParams(); ip != nil && ip.Capabilities != nil {
				c := ip.Capabilities
				if c.Sampling != nil {
					seen = append(seen, "sampling")
				}
				if c.Elicitation != nil {
					seen = append(seen, "elicitation")
				}
				if c.RootsV2 != nil {
					seen = append(seen, "roots")
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "caps=" + strings.Join(seen, ",")}}}, nil
		})
	_, url := statelessProxyOver(t, "c", s)
	for _, tc := range []struct {
		caps map[string]any
		want string
	}{
		{map[string]any{}, "caps="},
		{map[string]any{"elicitation": map[string]any{}}, "caps=elicitation"},
		{map[string]any{"sampling": map[string]any{}, "roots": map[string]any{"listChanged": true}, "experimental": map[string]any{"x": map[string]any{}}}, "caps=sampling,roots"},
	} {
		params := map[string]any{"name": "c__caps", "arguments": map[string]any{}, "_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": tc.caps}}
		status, res := rpc2026(t, url, "tools/call", params, nil)
		content, _ := jsonPath(res, "result", "content").([]any)
		text := ""
		if len(content) == 1 {
			text, _ = content[0].(map[string]any)["text"].(string)
		}
		if status != http.StatusOK || text != tc.want {
			t.Errorf("client capabilities %v: HTTP %d, %v; want the upstream to see %q", tc.caps, status, res, tc.want)
		}
	}
}

// statelessProxyOver serves s as a stateless 2026-07-28 Streamable HTTP
// upstream named name (next to the test upstream "t") behind a proxy with
// a stateless front, and returns the proxy and its /mcp URL.
func statelessProxyOver(t *testing.T, name string, s *mcp.Server) (*Proxy, string) {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(up.Close)
	p, _ := testProxy(t, "[server]\ntransport = \"http\"\nstateless = true\n[upstreams.t]\nurl = %[1]s\n[upstreams."+name+"]\nurl = "+tomlQuote(up.URL)+"\n")
	return p, frontURL(t, p)
}
