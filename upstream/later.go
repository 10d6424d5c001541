package upstream

import (
	"context"
	"sync"
)

// Later holds work an HTTP call leaves for after its answer (issue 16): when
// an upstream's answer came before the end of its event stream, the end
// must still be read (so the connection is reused) off the caller's path.
// Without a Later that is a goroutine of its own per call; with one in the
// call's context (WithLater), the goroutine that ran the call reads it once
// it has handed the answer on (Run), instead of going idle.
//
// Only a call read on its caller's goroutine (an own request,
// httpConn.Write) leaves work here, at most one piece; any more, or any
// after Run, get a goroutine as before, so nothing is left unread.
type Later struct {
	mu   sync.Mutex
	f    func()
	shut bool // Run was called
}

type laterKey struct{}

// WithLater returns ctx carrying l.
func WithLater(ctx context.Context, l *Later) context.Context {
	return context.WithValue(ctx, laterKey{}, l)
}

func laterOf(ctx context.Context) *Later {
	l, _ := ctx.Value(laterKey{}).(*Later)
	return l
}

// Run runs the work left, if any, and takes none after. The caller calls
// it once, after the call returned and its answer was handed on.
func (l *Later) Run() {
	l.mu.Lock()
	f := l.f
	l.f, l.shut = nil, true
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// leave runs f later on the goroutine that calls Run, or now on a
// goroutine of its own when l is nil, already holds work, or ran.
func (l *Later) leave(f func()) {
	if l != nil {
		l.mu.Lock()
		ok := !l.shut && l.f == nil
		if ok {
			l.f = f
		}
		l.mu.Unlock()
		if ok {
			return
		}
	}
	go f()
}
