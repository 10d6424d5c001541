package upstream

import (
	"context"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// postBody lends a pooled buffer (the encoded message) to the POST of one
// message (httpConn.Write) and takes it back once net/http is surely done
// reading it (issue 16: a copy of every message, ~0.4 KB per call, since
// the body became a *bytes.Reader for its one write).
//
// The body must be a *bytes.Reader (with its GetBody, set by
// http.NewRequestWithContext): only then does net/http write the header
// and the body in one write (transfer.go isKnownInMemoryReader). Such a
// body has no Close of ours, so the transport cannot tell us when it is
// done with it; an httptrace.ClientTrace on the request does (Go's
// net/http, as of go1.26):
//
//   - Every read of the body happens inside a write of the request (the
//     one read path of a request body with a known length:
//     transferWriter.writeBody, called from Request.write in the HTTP/1
//     transport's writeLoop, or http2clientStream.writeRequestBody in the
//     HTTP/2 transport). The bytes are copied into the connection's
//     bufio.Writer or written before that returns; nothing keeps them.
//   - Each write is preceded, on the same attempt, by the trace's GotConn
//     (HTTP/1: Transport.getConn, on the caller's goroutine, before
//     persistConn.roundTrip hands the request to writeLoop; HTTP/2:
//     http2Transport.RoundTripOpt, before ClientConn.RoundTrip) and
//     followed by its WroteRequest (HTTP/1: deferred first in
//     Request.write, so it runs after the body was closed; HTTP/2: after
//     writeRequestBody returned). A write that never starts, or ends
//     without WroteRequest (HTTP/2 failing to write headers), leaves a
//     reference behind: the buffer is then left to the garbage collector,
//     never reused early.
//   - Every attempt and every redirect hop (new bodies from GetBody) is
//     made inside Client.Do: no GetBody call and no GotConn comes after Do
//     returned. A write may outlive Do (an answer that came before the
//     body was written): its WroteRequest then gives the buffer back.
//
// So refs counts Do (1 until it returned) plus the writes started and not
// finished; the buffer goes back when it reaches zero.
type postBody struct {
	buf   *[]byte
	refs  atomic.Int64
	trace httptrace.ClientTrace // GotConn, WroteRequest; bound to this postBody once
}

var postBodies sync.Pool // of *postBody

func newPostBody() *postBody {
	pb := &postBody{}
	pb.trace.GotConn = func(httptrace.GotConnInfo) { pb.refs.Add(1) }
	pb.trace.WroteRequest = func(httptrace.WroteRequestInfo) { pb.unref() }
	return pb
}

// lendBody lends b (from getBuf, holding the message) to one POST: the
// returned context, the POST's parent, carries the trace; call done when
// Client.Do returned. ok is false when ctx already has a ClientTrace
// (composing would change the pooled trace): the caller then copies.
func lendBody(ctx context.Context, b *[]byte) (pb *postBody, tctx context.Context, ok bool) {
	if httptrace.ContextClientTrace(ctx) != nil {
		return nil, ctx, false
	}
	pb, _ = postBodies.Get().(*postBody)
	if pb == nil {
		pb = newPostBody()
	}
	pb.buf = b
	pb.refs.Store(1) // Do
	return pb, httptrace.WithClientTrace(ctx, &pb.trace), true
}

// done is called once Client.Do returned (with or without an answer).
func (pb *postBody) done() { pb.unref() }

func (pb *postBody) unref() {
	if pb.refs.Add(-1) != 0 {
		return
	}
	b := pb.buf
	pb.buf = nil
	putBuf(b)
	postBodies.Put(pb)
}
