package front

// The HTTP front's answers to a request that failed a check, and the
// read deadline of one that passed. Trust: clients without a token are
// not trusted; a rejected request's body is never read, so a trickled
// body cannot hold a connection.

import (
	"io"
	"net/http"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/connlimit"
)

// Reject answers a request that failed the Host/Origin or token check
// with code and msg, and closes the connection without reading the body.
func Reject(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Connection", "close")
	// An expired read deadline makes net/http drop the unread body at once
	// instead of reading it to reuse the connection.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	http.Error(w, msg, code)
}

// Admit is called for a request that passed the checks: when a token was
// checked its connection is vetted (never closed to make room), and the
// body must arrive within readTimeout (server.read_timeout).
func Admit(w http.ResponseWriter, r *http.Request, tokenChecked bool, readTimeout time.Duration) {
	if tokenChecked {
		connlimit.VetContext(r.Context())
	}
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(readTimeout)) != nil {
		return // not an HTTP/1 connection of ours (e.g. a test recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
}

// deadlineBody lifts the body's read deadline once the body is read to its
// end or closed, so that a long-running response (an SSE stream, a slow
// tool call) is not cut when it passes.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return b.ReadCloser.Close()
}
