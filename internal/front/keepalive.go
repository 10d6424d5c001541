package front

// Keepalive on long-lived event streams: intermediaries
// (load balancers, reverse proxies) and clients with a body timeout (Node's
// fetch: 300 s without a byte) cut a stream that stays silent. Every
// response of an MCP route that is an event stream (Content-Type
// text/event-stream: the Streamable HTTP GET stream, a POST answered as a
// stream while a long call runs, the SSE transport's stream) gets an SSE
// comment line, ": keepalive", whenever it has been silent for
// server.keepalive_interval. Clients ignore comment lines (HTML Living
// Standard, "Server-sent events", event stream interpretation). A comment
// is written only between events: the go-sdk writes each event with one
// Write, and keepaliveWriter tracks whether the last byte ended one.
//
// When a keepalive cannot be written (the client is gone), the request's
// context is cancelled, so the stream ends (for the SSE transport, its
// session) without waiting for TCP to give up. Over HTTP/1.x (what the
// proxy serves: no TLS, no h2c) net/http does that itself: a failed write
// to the connection cancels the connection's context, the parent of the
// request's (net/http server.go, checkConnErrorWriter), so keepalive
// derives no context of its own there (a context, its place in
// the request context's children and a request copy per request); for
// any other protocol it does.
//
// A handler that writes its whole answer at once (the HTTP fast path,
// http_stateless.go) writes it with writeLast, which arms no timer.

import (
	"context"
	"mime"
	"net/http"
	"sync"
	"time"
)

// Keepalive wraps h as described above; interval <= 0 disables it.
func Keepalive(interval time.Duration, h http.Handler) http.Handler {
	if interval <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := &keepaliveWriter{w: w, interval: interval, cancel: func() {}, boundary: true}
		defer kw.stop()
		if r.ProtoMajor != 1 {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			kw.cancel = cancel
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(kw, r)
	})
}

// keepaliveWriter is the http.ResponseWriter the wrapped handler writes to.
type keepaliveWriter struct {
	w        http.ResponseWriter
	interval time.Duration
	cancel   context.CancelFunc // also net/http's own over HTTP/1.x (see the top)

	mu       sync.Mutex
	wrote    bool      // header written
	last     time.Time // last write of the handler or of a keepalive
	boundary bool      // the bytes so far end with a complete event (or there are none)
	tail     [2]byte   // last two bytes written
	timer    *time.Timer
	done     bool
}

func (k *keepaliveWriter) Header() http.Header { return k.w.Header() }

// Unwrap lets http.ResponseController reach the underlying writer for
// what keepaliveWriter does not implement (deadlines, hijacking).
func (k *keepaliveWriter) Unwrap() http.ResponseWriter { return k.w }

func (k *keepaliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(code)
}

func (k *keepaliveWriter) writeHeaderLocked(code int) {
	if k.wrote {
		return
	}
	k.wrote = true
	k.w.WriteHeader(code)
	k.last = time.Now()
	ct, _, _ := mime.ParseMediaType(k.w.Header().Get("Content-Type"))
	if code == http.StatusOK && ct == "text/event-stream" && !k.done {
		k.timer = time.AfterFunc(k.interval, k.tick)
	}
}

func (k *keepaliveWriter) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(http.StatusOK)
	n, err := k.w.Write(b)
	k.note(b[:n])
	return n, err
}

// note records what was written: when, and whether it ends an event.
func (k *keepaliveWriter) note(b []byte) {
	if len(b) == 0 {
		return
	}
	k.last = time.Now()
	if len(b) >= 2 {
		copy(k.tail[:], b[len(b)-2:])
	} else {
		k.tail[0], k.tail[1] = k.tail[1], b[0]
	}
	k.boundary = k.tail == [2]byte{'\n', '\n'}
}

func (k *keepaliveWriter) Flush() { _ = k.FlushError() }

func (k *keepaliveWriter) FlushError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(http.StatusOK)
	return http.NewResponseController(k.w).Flush()
}

// writeLast writes a handler's whole answer: status, b, and a flush when
// flush is set; nothing is written after it. Written before anything
// else, it arms no keepalive (the stream ends with it); otherwise it is
// Write (and Flush).
func (k *keepaliveWriter) writeLast(status int, b []byte, flush bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.wrote {
		k.wrote, k.done = true, true
		k.w.WriteHeader(status)
		_, _ = k.w.Write(b)
		if flush {
			_ = http.NewResponseController(k.w).Flush()
		}
		return
	}
	n, _ := k.w.Write(b)
	k.note(b[:n])
	if flush {
		_ = http.NewResponseController(k.w).Flush()
	}
}

// tick writes a keepalive comment when the stream has been silent for the
// interval and is between events, then schedules the next check.
func (k *keepaliveWriter) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done {
		return
	}
	wait := k.interval - time.Since(k.last)
	if wait <= 0 {
		if k.boundary {
			comment := []byte(": keepalive\n\n")
			_, err := k.w.Write(comment)
			if err == nil {
				err = http.NewResponseController(k.w).Flush()
			}
			if err != nil {
				k.cancel() // the client is gone
				return
			}
			k.note(comment)
		}
		wait = k.interval
		if !k.boundary { // mid-event: look again soon
			wait = k.interval / 10
		}
	}
	k.timer.Reset(wait)
}

// stop ends the keepalives; the handler has returned.
func (k *keepaliveWriter) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if k.timer != nil {
		k.timer.Stop()
	}
}

// WriteWhole writes a handler's whole answer to w: status, b, and a flush
// when flush is set; nothing may be written after it. Under Keepalive no
// keepalive is armed for it (the stream ends with it).
func WriteWhole(w http.ResponseWriter, status int, b []byte, flush bool) {
	if kw, ok := w.(*keepaliveWriter); ok {
		kw.writeLast(status, b, flush)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
	if flush {
		_ = http.NewResponseController(w).Flush()
	}
}
