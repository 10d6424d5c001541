package proxy

// Relaying an upstream's notifications to the clients without holding up
// the upstream. The go-sdk calls the proxy's
// notification handlers of one upstream session one after another and
// queues the notifications that wait in an unbounded slice; a handler that
// blocks on a client (a slow stream, many sessions) makes that queue — the
// proxy's memory — grow as fast as the upstream writes. Trust: upstream
// servers are not trusted. So the handlers only hand the notification to a
// relayQueue and return; the queue's own goroutine does the slow part:
//
//   - notifications/message: one queue per upstream, at most
//     logRelayMax messages waiting; more are dropped and counted, with one
//     warning and one "suppressed N" summary per relayDropWindow. (The
//     upstream leg already rate-limits them per session:
//     upstream/notifygate.go.)
//   - notifications/resources/updated: one queue per upstream, at most
//     updatedRelayMax URIs waiting, one entry per URI (a second update of
//     a URI still waiting says nothing new).
//   - notifications/resources/list_changed and prompts/list_changed: one
//     run at a time plus at most one waiting, per kind (every client
//     re-lists anyway).

import (
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/logwindow"
)

const (
	logRelayMax     = 256
	updatedRelayMax = 1024
	relayDropWindow = 10 * time.Second
)

// relayQueue runs run on its items in order, on one goroutine at a time
// (started when the first item comes, ending when the queue is empty), and
// holds at most max items waiting. push never blocks.
type relayQueue[T any] struct {
	max  int
	same func(a, b T) bool // when set, an item equal to one waiting is not added again
	run  func(T)

	mu      sync.Mutex
	items   []T
	running bool
}

// push adds v; false when the queue was full and v was dropped (an item
// that equals a waiting one counts as added).
func (q *relayQueue[T]) push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.same != nil {
		for _, w := range q.items {
			if q.same(w, v) {
				return true
			}
		}
	}
	if len(q.items) >= q.max {
		return false
	}
	q.items = append(q.items, v)
	if !q.running {
		q.running = true
		go q.drain()
	}
	return true
}

func (q *relayQueue[T]) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.running = false
			q.items = nil // the backing array of a burst is not kept
			q.mu.Unlock()
			return
		}
		v := q.items[0]
		var zero T
		q.items[0] = zero
		q.items = q.items[1:]
		q.mu.Unlock()
		q.run(v)
	}
}

// coalescer runs run once for any number of kicks that come while a run
// is waiting: at most one run at a time and one waiting.
type coalescer struct{ q relayQueue[struct{}] }

func newCoalescer(run func()) *coalescer {
	c := &coalescer{}
	c.q = relayQueue[struct{}]{max: 1, same: func(struct{}, struct{}) bool { return true }, run: func(struct{}) { run() }}
	return c
}

func (c *coalescer) kick() { c.q.push(struct{}{}) }

// dropCounter counts items a relay dropped for one upstream and logs one
// warning and one summary per relayDropWindow (the window counts them).
type dropCounter struct {
	log    *slog.Logger
	what   string
	up     string
	window *logwindow.Window
}

func newDropCounter(log *slog.Logger, what, up string) *dropCounter {
	d := &dropCounter{log: log, what: what, up: up}
	d.window = logwindow.New(relayDropWindow, func(n int, every time.Duration) {
		// n counts the drops after the window's first.
		d.log.Warn("suppressed "+d.what+" from upstream (relay queue full)", "upstream", d.up, "suppressed", n+1, "in_last", every)
	})
	return d
}

func (d *dropCounter) drop() {
	if d.window.Allow() {
		d.log.Warn(d.what+" from upstream arrive faster than the proxy relays them to its clients; dropping the excess (a summary follows)", "upstream", d.up)
	}
}

// upstreamRelay is the relay state of one upstream.
type upstreamRelay struct {
	logs        *relayQueue[logItem]
	logDrops    *dropCounter
	logUnrouted *logwindow.Window // log messages whose client is not known (logroute.go)
	updated     *relayQueue[updatedItem]
	updateDrops *dropCounter
	listed      *logwindow.Window // "upstream tools listed" lines (proxy.go)
	invalid     *logwindow.Window // "upstream sent an invalid tool result" lines (forward.go)
}

// relays holds the relay state per upstream name.
type relays struct {
	mu  sync.Mutex
	ups map[string]*upstreamRelay
}

// of returns up's relay state, made with mk on first use.
func (r *relays) of(up string, mk func() *upstreamRelay) *upstreamRelay {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u, ok := r.ups[up]; ok {
		return u
	}
	if r.ups == nil {
		r.ups = map[string]*upstreamRelay{}
	}
	u := mk()
	r.ups[up] = u
	return u
}

// upRelay is up's relay state.
func (pt *passthrough) upRelay(up string) *upstreamRelay {
	return pt.relay.of(up, func() *upstreamRelay {
		u := &upstreamRelay{
			logDrops:    newDropCounter(pt.p.log, "notifications/message", up),
			updateDrops: newDropCounter(pt.p.log, "notifications/resources/updated", up),
		}
		u.logs = &relayQueue[logItem]{max: logRelayMax, run: func(it logItem) {
			pt.sendLog(it.ctx, up, it.owner, it.params)
			if it.done != nil {
				it.done()
			}
		}}
		u.logUnrouted = unroutedLogWindow(pt.p.log, up)
		u.updated = &relayQueue[updatedItem]{
			max:  updatedRelayMax,
			same: func(a, b updatedItem) bool { return a.params.URI == b.params.URI },
			run:  func(it updatedItem) { pt.sendResourceUpdated(it.ctx, up, it.params) },
		}
		u.listed = logwindow.New(time.Minute, func(n int, every time.Duration) {
			if n > 0 {
				pt.p.log.Info("upstream tools listed more times", "upstream", up, "times", n, "in_last", every)
			}
		})
		u.invalid = logwindow.New(time.Minute, func(n int, every time.Duration) {
			if n > 0 {
				pt.p.log.Warn("more invalid tool results from upstream", "upstream", up, "times", n, "in_last", every)
			}
		})
		return u
	})
}
