package front

// Fast turns the fast paths on: a plain tools/call of an open session is
// read, run through the server's receiving chain (the dispatch function
// the proxy hands over) and answered here, without the go-sdk server's
// request handling, on the stdio front, on Streamable HTTP sessions and for
// 2026-07-28 requests over HTTP; and upstream tools/call are written past
// the go-sdk client, their results passed on as the upstream's bytes
// (upstream.Options.SDKCalls, set by the proxy from Fast). With it off
// every request and call goes through the go-sdk. The protocol cases (proxy/testdata/protocol) run with it on
// and off and require the same bytes.
var Fast = true
