package front

// Fast turns the fast paths on: a plain tools/call of an open session is
// read, run through the server's receiving chain (the dispatch function
// the proxy hands over) and answered here, without the go-sdk server's
// request handling, on the stdio front, on Streamable HTTP sessions and for
// 2026-07-28 requests over HTTP. With it off every request goes through
// the go-sdk. The protocol cases (proxy/testdata/protocol) run with it on
// and off and require the same bytes.
var Fast = true
