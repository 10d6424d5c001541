package front

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/linewrite"
)

// TestFastParams: what the fast path decodes itself and what it leaves to
// the go-sdk.
func TestFastParams(t *testing.T) {
	var last string
	for i := 0; i < 2; i++ { // the second time the name is the last one's
		p := new(mcp.CallToolParamsRaw)
		ok := fastParams([]byte(`{"name":"a__b","arguments":{"x":[1,{"y":null}]},"_meta":{"progressToken":7}}`), nil, p, &last)
		if !ok || p.Name != "a__b" || string(p.Arguments) != `{"x":[1,{"y":null}]}` || p.GetProgressToken() != float64(7) {
			t.Fatalf("fastParams = %+v, %v", p, ok)
		}
	}
	if p := new(mcp.CallToolParamsRaw); !fastParams([]byte(`{"name":"a__c"}`), nil, p, &last) || p.Name != "a__c" || last != "a__c" {
		t.Fatalf("another name: %+v, last %q", p, last)
	}
	for _, in := range []string{
		``, `null`, `[]`, `{}`,
		`{"name":"a","name":"b"}`,
		`{"name":"a","task":{}}`,
		`{"name":"a","inputResponses":{}}`,
		`{"name":"a","requestState":"s"}`,
		`{"name":"a\"b"}`,
		`{"name":"a\\u0041"}`,
		`{"name":1}`,
		`{"n\u0061me":"a"}`,
		`{"name":"a","_meta":null}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`,
		"{\"name\":\"a\xff\"}",
	} {
		checkScannedOnce(t, in) // frontmeta_test.go
		if p := new(mcp.CallToolParamsRaw); fastParams([]byte(in), nil, p, &last) {
			t.Errorf("fastParams(%s) = %+v: want it left to the go-sdk", in, p)
		}
	}
}

// TestTakeFastGuards: the connection-state guards of the fast path (the
// request itself qualifies in every case): no session yet, a notification
// the go-sdk has not handled yet, a batch, an id already in flight, a
// closing connection; and notifications/cancelled for a fast-path id is
// taken and cancels that call only.
func TestTakeFastGuards(t *testing.T) {
	req := func(id int64) *jsonrpc.Request {
		rid, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Request{ID: rid, Method: "tools/call", Params: json.RawMessage(`{"name":"t","arguments":{}}`)}
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}` + "\n")
	release := make(chan struct{})
	defer close(release)
	newConn := func() *Conn {
		c := &Conn{out: linewrite.New(io.Discard), base: context.Background(), sawInit: true, version: "2025-11-25"}
		c.EnableFast(nil, func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		})
		return c
	}
	c := newConn()
	if !c.takeFast(req(1), line, nil) {
		t.Fatal("an open session's tools/call was not taken")
	}
	if !c.takeFast(req(1), line, nil) || c.fastCalls != 1 {
		t.Errorf("an id in flight on the fast path: not dropped, or run again (%d calls)", c.fastCalls)
	}
	c.toSDK([]jsonrpc.Message{&jsonrpc.Request{Method: "notifications/initialized"}})
	if c.takeFast(req(2), line, nil) {
		t.Error("taken while notifications/initialized is not handled yet")
	}
	c.noteDone()
	if !c.takeFast(req(3), line, nil) {
		t.Error("not taken after the notification was handled")
	}
	if c.takeFast(req(4), append([]byte("["), line...), nil) {
		t.Error("a batch element was taken")
	}
	if !c.takeFast(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":3}`)}, nil, nil) {
		t.Error("notifications/cancelled for a fast-path call was passed on")
	}
	if c.takeFast(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":99}`)}, nil, nil) {
		t.Error("notifications/cancelled for another id was taken")
	}
	c.EndFast() // cancels call 1 (3 was cancelled above) and waits for both
	if c.takeFast(req(5), line, nil) {
		t.Error("taken on a closing connection")
	}
	fresh := &Conn{out: c.out, base: context.Background()}
	fresh.EnableFast(nil, nil)
	if fresh.takeFast(req(1), line, nil) {
		t.Error("taken before the session is open (no initialize answer, no accepted triple)")
	}
	if n := (&Conn{sawInit: true, version: "2025-11-25"}); n.takeFast(req(1), line, nil) {
		t.Error("taken without the go-sdk session (runStdio did not enable it)")
	}
}

// TestBindFast: a fast-path call is bound to its session's life without a
// context of its own (BindFast); the session's end cancels it with
// ErrSessionEnded. A context cut off from the call's (WithoutCancel) or a
// second session on the connection is not bound here (ok false).
func TestBindFast(t *testing.T) {
	c := &Conn{inflight: map[jsonrpc.ID]context.CancelCauseFunc{}}
	life, end := context.WithCancel(context.Background())
	callCtx, cancel := context.WithCancelCause(context.Background())
	id, _ := jsonrpc.MakeID(float64(1))
	c.inflight[id] = cancel
	f := &fastCall{c: c, resp: jsonrpc.Response{ID: id}}
	f.mark(callCtx)
	ctx := context.WithValue(f, struct{ k int }{1}, "a middleware's value")
	if bound, ok := BindFast(ctx, life); !ok || bound != ctx {
		t.Fatal("a fast-path call was not bound as it is")
	}
	if _, ok := BindFast(context.WithoutCancel(ctx), life); ok {
		t.Error("a context cut off from the fast-path call was bound")
	}
	life2, end2 := context.WithCancel(context.Background())
	defer end2()
	if _, ok := BindFast(ctx, life2); ok {
		t.Error("a second session used the connection's binding")
	}
	end()
	select {
	case <-callCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session's end did not cancel the fast-path call")
	}
	if !errors.Is(context.Cause(callCtx), ErrSessionEnded) {
		t.Errorf("cause %v, want ErrSessionEnded", context.Cause(callCtx))
	}
	// A call bound after the session ended is cancelled at once.
	late, cancelLate := context.WithCancelCause(context.Background())
	defer cancelLate(nil)
	lateCall := &fastCall{c: c}
	lateCall.mark(late)
	if b, ok := BindFast(lateCall, life); !ok || b.Err() == nil {
		t.Error("a fast-path call bound after its session ended was not cancelled")
	}
}
