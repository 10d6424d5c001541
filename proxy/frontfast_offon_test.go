package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// The stdio fast path (internal/front) against the go-sdk: each test runs
// the same exchange with the fast path off (the go-sdk's behaviour, the
// reference) and on.

func fastInit(lc *lineClient) {
	lc.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
	lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	lc.call(2, "ping", `{}`)
}

// linesUntil reads lines up to the one with id, failing on a line that
// contains bad.
func linesUntil(t *testing.T, lc *lineClient, id int, bad, what string) {
	t.Helper()
	for {
		l := string(lc.next())
		if strings.Contains(l, bad) {
			t.Fatalf("%s: %s", what, l)
		}
		if strings.Contains(l, fmt.Sprintf(`"id":%d,`, id)) || strings.Contains(l, fmt.Sprintf(`"id":%d}`, id)) {
			return
		}
	}
}

// TestFrontFastPathIDInUse: a call whose id is in flight is dropped
// unrun and unanswered, as jsonrpc2's acceptRequest does, whichever path
// holds the id and whichever the duplicate would take.
func TestFrontFastPathIDInUse(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		for _, c := range []struct{ first, dup string }{
			{`slowup\u005f_slow`, `slowup__quick`}, // held by the go-sdk (escaped name), duplicate fit for the fast path
			{`slowup__slow`, `slowup\u005f_quick`}, // held by the fast path, duplicate for the go-sdk
		} {
			what := fmt.Sprintf("fast=%v first=%s: the duplicate id 7 ran", fast, c.first)
			lc := startLineClient(t, p, fast)
			fastInit(lc)
			lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + c.first + `","arguments":{}}}`)
			waitSignal(t, started, "slow did not start")
			lc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + c.dup + `","arguments":{}}}`)
			lc.send(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{}}`)
			linesUntil(t, lc, 8, "quick", what)
			lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
			waitSignal(t, cancelled, "slow was not cancelled")
			lc.send(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{}}`)
			linesUntil(t, lc, 9, "quick", what)
		}
	}
}

// TestFrontFastPathCancelIDForms: notifications/cancelled names the
// request as the go-sdk's canceller reads it (a JSON value through
// jsonrpc.MakeID): 3.0 and 3e0 are id 3.
func TestFrontFastPathCancelIDForms(t *testing.T) {
	url, started, cancelled := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		for _, id := range []string{"3.0", "3e0"} {
			lc := startLineClient(t, p, fast)
			fastInit(lc)
			lc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slowup__slow","arguments":{}}}`)
			waitSignal(t, started, "slow did not start")
			lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
			waitSignal(t, cancelled, fmt.Sprintf("fast=%v: requestId %s did not cancel call 3", fast, id))
		}
	}
}

// TestFrontFastPathNotesHeal: a notification the go-sdk refuses before
// its receiving chain (undecodable params) does not keep the fast path
// off once the go-sdk has answered a later request.
func TestFrontFastPathNotesHeal(t *testing.T) {
	p, _ := testProxy(t, fastPathConfig)
	lc := startLineClient(t, p, true)
	fastInit(lc)
	lc.call(3, "tools/call", `{"name":"up__echo","arguments":{}}`)
	lc.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":"NaN"}}`)
	lc.call(4, "ping", `{}`)
	before := lc.fastCalls()
	for i := 5; i < 10; i++ {
		if l := lc.call(i, "tools/call", `{"name":"up__echo","arguments":{}}`); !strings.Contains(string(l), "result") {
			t.Fatal(string(l))
		}
	}
	if n := lc.fastCalls() - before; n != 5 {
		t.Fatalf("%d of 5 calls after the refused notification took the fast path", n)
	}
}

// TestFrontFastPathBatchNote: notifications/initialized inside a batch
// is handled before a tools/call that follows takes the fast path (the
// per-client upstream session it opens exists).
func TestFrontFastPathBatchNote(t *testing.T) {
	p, _ := testProxy(t, `
[tool_search]
enabled = false
[upstreams.up]
url = %[1]s
session = "per-client"
`)
	for _, fast := range []bool{false, true} {
		for i := 0; i < 10; i++ {
			lc := startLineClient(t, p, fast)
			lc.call(1, "initialize", `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
			lc.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
			l := lc.call(2, "tools/call", `{"name":"up__echo","arguments":{}}`)
			if strings.Contains(string(l), `"error"`) || strings.Contains(string(l), `"isError":true`) {
				t.Fatalf("fast=%v, connection %d: %s", fast, i, l)
			}
		}
	}
}
