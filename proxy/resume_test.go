package proxy

import (
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

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
)

// countingUpstream serves "inc": each call adds one to n and answers the
// new count.
func countingUpstream(t *testing.T, n *atomic.Int32) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "counting", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "inc", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("count %d", n.Add(1))}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestApprovalResumesOnAnyReplica: two stateless proxies on one state
// store. A 2026-07-28 client's call that needs approval is answered by
// replica A with input_required and a sealed requestState; the retry sent
// to replica B runs the call there, once: the same state again, a state
// altered, another caller's retry and a retry with other arguments are
// refused with the reason, and a "no" blocks the call on B. The go-sdk
// client's own retry through a round-robin balancer completes too.
func TestApprovalResumesOnAnyReplica(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	var count atomic.Int32
	cfg := fmt.Sprintf(`
[server]
transport = "http"
stateless = true
state_store = %s
state_store_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
[upstreams.c]
url = %s
[tools]
require_approval = ["c__inc"]
[endpoints.other]
path = "/other/mcp"
token = "token-other"
`, tomlQuote(srv.URL()), tomlQuote(countingUpstream(t, &count)))
	urlA, urlB := frontURL(t, startProxyText(t, cfg)), frontURL(t, startProxyText(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	manual := func(name, url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		})
		tr := &mcp.StreamableClientTransport{Endpoint: url}
		if strings.HasSuffix(url, "/other/mcp") {
			tr.HTTPClient = &http.Client{Transport: bearerClient{"token-other"}}
		}
		cs, err := c.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// other is another subject (an endpoint with its own token); the
	// same client name on another connection from the same address is
	// the same subject (a declared name proves nothing).
	a, b, other := manual("cli", urlA), manual("cli", urlB), manual("cli", strings.TrimSuffix(urlB, "/mcp")+"/other/mcp")
	args := map[string]any{"x": 1}
	r1, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "c__inc", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := r1.InputRequests["approval"].(*mcp.ElicitParams)
	if !r1.NeedsInput() || !ok || !strings.Contains(q.Message, "Approve this tool call?") || !strings.HasPrefix(r1.RequestState, "mts2.") {
		t.Fatalf("first round: needsInput=%v requests=%v state=%.10q; want the approval question with a sealed state", r1.NeedsInput(), r1.InputRequests, r1.RequestState)
	}
	if strings.Contains(r1.RequestState, "c__inc") {
		t.Fatal("the requestState is readable")
	}
	yes := mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	retry := func(cs *mcp.ClientSession, state string, args map[string]any, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "c__inc", Arguments: args, RequestState: state, InputResponses: answers})
	}
	for _, c := range []struct {
		name  string
		cs    *mcp.ClientSession
		state string
		args  map[string]any
		want  string
	}{
		{"altered", b, r1.RequestState[:len(r1.RequestState)-2] + "AA", args, "not made by this deployment, or altered"},
		{"another subject: as a state not made here", other, r1.RequestState, args, "not made by this deployment, or altered"},
		{"other arguments", b, r1.RequestState, map[string]any{"x": 2}, "belongs to another call"},
	} {
		if _, err := retry(c.cs, c.state, c.args, yes); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if count.Load() != 0 {
		t.Fatalf("the upstream ran %d calls before the approval", count.Load())
	}
	r2, err := retry(b, r1.RequestState, args, yes)
	if err != nil || r2.NeedsInput() || resultText(r2) != "count 1" {
		t.Fatalf("retry on replica B: %v %q", err, resultText(r2))
	}
	if _, err := retry(a, r1.RequestState, args, yes); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("the same state again (on A): %v; want already used", err)
	}
	if count.Load() != 1 {
		t.Fatalf("the upstream ran %d calls, want 1", count.Load())
	}
	// A "no" given on B blocks the call started on A.
	r3, _ := a.CallTool(ctx, &mcp.CallToolParams{Name: "c__inc", Arguments: args})
	r4, err := retry(b, r3.RequestState, args, mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "decline"}})
	if err != nil || !r4.IsError || !strings.Contains(resultText(r4), "blocked by approval") || count.Load() != 1 {
		t.Fatalf("declined: %v %q, %d calls", err, resultText(r4), count.Load())
	}

	// The store down at the retry: a clear error, nothing run; the same
	// retry once it is back runs the call.
	r5, _ := a.CallTool(ctx, &mcp.CallToolParams{Name: "c__inc", Arguments: args})
	srv.Stop()
	if _, err := retry(b, r5.RequestState, args, yes); err == nil || !strings.Contains(err.Error(), "cannot continue now") || !strings.Contains(err.Error(), "state store unavailable") {
		t.Fatalf("store down: %v", err)
	}
	srv.Start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := retry(b, r5.RequestState, args, yes)
		if err == nil {
			if resultText(r) != "count 2" {
				t.Fatalf("after the store came back: %q", resultText(r))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store back, retry still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The go-sdk's automatic retry through a round-robin balancer.
	var n atomic.Int32
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := urlA
		if n.Add(1)%2 == 0 {
			to = urlB
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, to, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			k, err := resp.Body.Read(buf)
			w.Write(buf[:k])
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	defer lb.Close()
	auto := mcp.NewClient(&mcp.Implementation{Name: "auto", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	cs, err := auto.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 4 {
		before := n.Load()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "c__inc", Arguments: map[string]any{"i": i}})
		if err != nil {
			t.Fatalf("call %d through the balancer: %v", i, err)
		}
		if r.IsError || !strings.HasPrefix(resultText(r), "count ") {
			t.Fatalf("call %d through the balancer: %q", i, resultText(r))
		}
		if n.Load()-before != 2 {
			t.Fatalf("call %d took %d requests, want 2 (the call, then the retry on the other replica)", i, n.Load()-before)
		}
	}
	if count.Load() != 6 {
		t.Fatalf("upstream calls %d, want 6", count.Load())
	}
}

// TestApprovalInCodeRunStaysOnItsReplica: an approval asked inside a
// tool_search_code run is not handed on (the run is in progress on the
// replica that asked): its requestState is the in-memory kind, the retry
// on that replica runs the call, and on another it is refused saying the
// call waits on another replica (the owner's binding is in the store).
func TestApprovalInCodeRunStaysOnItsReplica(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	var count atomic.Int32
	cfg := fmt.Sprintf(`
[server]
transport = "http"
stateless = true
state_store = %s
state_store_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
[tool_search]
enabled = true
mode = "code"
[upstreams.c]
url = %s
[tools]
require_approval = ["c__inc"]
`, tomlQuote(srv.URL()), tomlQuote(countingUpstream(t, &count)))
	urlA, urlB := frontURL(t, startProxyText(t, cfg)), frontURL(t, startProxyText(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(urlA), connect(urlB)
	run := map[string]any{"code": `return await openclaw.tools.call("mcp:c:inc", {});`}
	for i, retryOn := range []*mcp.ClientSession{a, b} {
		r1, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search_code", Arguments: run})
		if err != nil || !r1.NeedsInput() || !strings.HasPrefix(r1.RequestState, "mts1.") {
			t.Fatalf("run %d: %v needsInput=%v state=%.8q; want an in-memory exchange", i, err, r1 != nil && r1.NeedsInput(), r1.RequestState)
		}
		answers := mcp.InputResponseMap{}
		for k := range r1.InputRequests {
			answers[k] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}
		r2, err := retryOn.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search_code", Arguments: run, RequestState: r1.RequestState, InputResponses: answers})
		if retryOn == a {
			if err != nil || !strings.Contains(resultText(r2), "count 1") {
				t.Fatalf("retry on the replica that asked: %v %q", err, resultText(r2))
			}
		} else if err == nil || !strings.Contains(err.Error(), "held by another replica") {
			t.Fatalf("retry on another replica: %v; want the error saying the call waits on another replica", err)
		}
	}
	if count.Load() != 1 {
		t.Fatalf("upstream calls %d, want 1", count.Load())
	}
}
