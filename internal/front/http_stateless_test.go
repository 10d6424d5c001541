package front

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestScanHTTPCall: what the fast path reads from a body itself, and the
// shapes it leaves to the go-sdk.
func TestScanHTTPCall(t *testing.T) {
	const trip = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	good := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__b","arguments":{"x":1},"_meta":{` + trip + `}}}`
	c, ok := scanHTTPCall([]byte(good))
	if !ok || string(c.name) != "a__b" || string(c.args) != `{"x":1}` || c.ci != nil || string(c.caps) != `{}` || c.id.Raw() != int64(7) {
		t.Fatalf("scanHTTPCall(%s) = %+v, %v", good, c, ok)
	}
	if c, ok := scanHTTPCall([]byte(strings.Replace(good, `"id":7`, `"id":"s-1"`, 1))); !ok || c.id.Raw() != "s-1" {
		t.Errorf("string id: %+v %v", c.id, ok)
	}
	for _, bad := range []string{
		strings.Replace(good, `"jsonrpc":"2.0",`, ``, 1),
		strings.Replace(good, `"2.0"`, `"1.0"`, 1),
		strings.Replace(good, `"id":7`, `"id":7.5`, 1),
		strings.Replace(good, `"id":7`, `"id":null`, 1),
		strings.Replace(good, `"id":7`, `"id":"a\"b"`, 1),
		strings.Replace(good, `"id":7`, `"id":"é"`, 1),
		strings.Replace(good, `"id":7`, `"id":9007199254740993`, 1),
		strings.Replace(good, `"id":7,`, ``, 1),
		strings.Replace(good, `"tools/call"`, `"tools/list"`, 1),
		strings.Replace(good, `"name":"a__b"`, `"name":"a\u005fb"`, 1),
		strings.Replace(good, `"name":"a__b"`, `"name":"a__b","name":"c"`, 1),
		strings.Replace(good, `"arguments"`, `"Arguments"`, 1),
		strings.Replace(good, trip, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, 1),
		strings.Replace(good, trip, `"io.modelcontextprotocol/clientCapabilities":{}`, 1),
		strings.Replace(good, trip, trip+`,"io.modelcontextprotocol/clientInfo":null`, 1),
		strings.Replace(good, trip, trip+`,"io.modelcontextprotocol/logLevel":"info"`, 1),
		strings.Replace(good, trip, trip+`,"io.modelcontextprotocol/other":1`, 1),
		strings.Replace(good, trip, trip+`,"progressToken":1`, 1),
		strings.Replace(good, trip, trip+`,"io.modelcontextprotocol\/protocolVersion":"2026-07-28"`, 1),
		strings.Replace(good, trip, trip+`,"x":1,"x":2`, 1),
		strings.Replace(good, `"_meta":{`+trip+`}`, `"_meta":null`, 1),
		strings.Replace(good, `,"_meta":{`+trip+`}`, ``, 1),
		good + ` x`,
		`[` + good + `]`,
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xffb\",\"_meta\":{" + trip + "}}}",
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `,"_meta":{` + trip + `}}}`,
	} {
		if _, ok := scanHTTPCall([]byte(bad)); ok {
			t.Errorf("scanHTTPCall took %.200s", bad)
		}
	}
}

// TestFastHTTPConnStaleContext: a kept session's connection writes a
// message only for the request it serves now: one sent with an earlier
// request's context (a call goroutine that outlived its request) is
// refused, as on the closed session of before.
func TestFastHTTPConnStaleContext(t *testing.T) {
	c := &fastHTTPConn{done: make(chan struct{})}
	r1, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
	r2, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
	w1, w2 := httptest.NewRecorder(), httptest.NewRecorder()
	ctx1 := context.WithValue(context.Background(), fastHTTPKey{}, r1)
	ctx2 := context.WithValue(context.Background(), fastHTTPKey{}, r2)
	note := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)}
	c.start(w1, r1)
	if err := c.Write(ctx1, note); err != nil {
		t.Fatalf("write for the current request: %v", err)
	}
	c.answer(ctx1, jsonrpc.ID{}, nil, &jsonrpc.Error{Code: 1, Message: "done"})
	c.start(w2, r2)
	if err := c.Write(ctx1, note); !errors.Is(err, errRejected) {
		t.Errorf("write with the ended request's context: %v, want rejected", err)
	}
	if err := c.Write(context.Background(), note); !errors.Is(err, errRejected) {
		t.Errorf("write without a request: %v, want rejected", err)
	}
	if err := c.Write(ctx2, note); err != nil {
		t.Errorf("write for the new request: %v", err)
	}
	if strings.Count(w1.Body.String(), "notifications/message") != 1 || strings.Count(w2.Body.String(), "notifications/message") != 1 {
		t.Errorf("bodies:\n%s\n%s", w1.Body, w2.Body)
	}
}

// TestAcceptsJSONAndStream: the Accept check reads every comma-separated
// media range of every Accept value, as go-sdk v1.8.0's streamableAccepts.
func TestAcceptsJSONAndStream(t *testing.T) {
	for _, c := range []struct {
		values       []string
		json, stream bool
	}{
		{nil, false, false},
		{[]string{""}, false, false},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json", "text/event-stream;q=0.9"}, true, true},
		{[]string{" Application/JSON ;q=1,"}, true, false},
		{[]string{"text/*"}, false, true},
		{[]string{",,*/*"}, true, true},
		{[]string{"application/jsonx,text/event-streams"}, false, false},
	} {
		if j, s := acceptsJSONAndStream(c.values); j != c.json || s != c.stream {
			t.Errorf("acceptsJSONAndStream(%q) = %v, %v; want %v, %v", c.values, j, s, c.json, c.stream)
		}
	}
}
