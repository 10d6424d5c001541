// Package connlimit caps the concurrent connections of a listener, in
// total and per remote address, so that connections which never
// authenticate cannot take every file descriptor of the process.
//
// A connection starts unvetted; the server marks it vetted (Vet) once one
// of its requests passed authentication. When a new connection would
// exceed a cap, the oldest unvetted connection (of that address for the
// per-address cap, of any address for the total cap) is closed to make
// room; when every connection in the way is vetted, the new connection is
// closed at once instead. So clients without a token can crowd out only
// each other, never a client that has shown its token.
//
// Trust (docs/security.md): remote peers that have not authenticated are
// not trusted; the operator's caps are.
package connlimit

import (
	"container/list"
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Limits are the caps of a Listener. Max is the most connections open at
// once; PerAddr the most from one remote IP address. A value <= 0 means no
// cap.
type Limits struct {
	Max     int
	PerAddr int
	// OnDrained, when set, is called (on its own goroutine) when the open
	// connections fall to a quarter of their peak, after a peak of at
	// least DrainedPeak: a flood ended, and what it made the process
	// hold can be given back (the proxy returns memory to the OS then).
	OnDrained func()
}

// DrainedPeak is the least peak of open connections after which
// Limits.OnDrained is called.
const DrainedPeak = 256

// Stats are a Listener's counters since it was made.
type Stats struct {
	Open           int    // connections open now
	Accepted       uint64 // connections handed to the server
	RefusedTotal   uint64 // closed at accept: the total cap was full of vetted connections
	RefusedPerAddr uint64 // closed at accept: the address's cap was full of vetted connections
	Evicted        uint64 // unvetted connections closed to make room for a new one
}

// Listener wraps a net.Listener with Limits. Accept never returns a
// connection over a cap: it closes what must go and waits for the next one.
// Safe for concurrent use.
type Listener struct {
	net.Listener
	lim Limits

	mu       sync.Mutex
	open     int
	peak     int // most open since OnDrained was last called
	byAddr   map[string]int
	unvetted *list.List // of *Conn, oldest first

	accepted, refusedTotal, refusedPerAddr, evicted atomic.Uint64
}

// New wraps ln with lim.
func New(ln net.Listener, lim Limits) *Listener {
	return &Listener{Listener: ln, lim: lim, byAddr: map[string]int{}, unvetted: list.New()}
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	open := l.open
	l.mu.Unlock()
	return Stats{Open: open, Accepted: l.accepted.Load(), RefusedTotal: l.refusedTotal.Load(),
		RefusedPerAddr: l.refusedPerAddr.Load(), Evicted: l.evicted.Load()}
}

// Accept returns the next connection that fits the caps (see the package
// doc). Errors are the wrapped listener's.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteIP(raw)
		var victims []*Conn
		l.mu.Lock()
		if l.lim.PerAddr > 0 && l.byAddr[addr] >= l.lim.PerAddr {
			v := l.oldestUnvetted(addr)
			if v == nil {
				l.mu.Unlock()
				_ = raw.Close()
				l.refusedPerAddr.Add(1)
				continue
			}
			l.releaseLocked(v)
			victims = append(victims, v)
		}
		if l.lim.Max > 0 && l.open >= l.lim.Max {
			v := l.oldestUnvetted("")
			if v == nil {
				l.mu.Unlock()
				_ = raw.Close()
				closeAll(victims) // already released: their room is given up
				l.refusedTotal.Add(1)
				continue
			}
			l.releaseLocked(v)
			victims = append(victims, v)
		}
		c := &Conn{Conn: raw, l: l, addr: addr}
		l.open++
		l.peak = max(l.peak, l.open)
		l.byAddr[addr]++
		c.elem = l.unvetted.PushBack(c)
		l.mu.Unlock()
		l.evicted.Add(uint64(len(victims)))
		closeAll(victims)
		l.accepted.Add(1)
		return c, nil
	}
}

func closeAll(cs []*Conn) {
	for _, c := range cs {
		_ = c.Conn.Close()
	}
}

// oldestUnvetted returns the oldest unvetted connection of addr ("" any).
func (l *Listener) oldestUnvetted(addr string) *Conn {
	for e := l.unvetted.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*Conn); addr == "" || c.addr == addr {
			return c
		}
	}
	return nil
}

// releaseLocked takes c out of the accounting (once).
func (l *Listener) releaseLocked(c *Conn) {
	if c.released {
		return
	}
	c.released = true
	l.open--
	if l.lim.OnDrained != nil && l.peak >= DrainedPeak && l.open <= l.peak/4 {
		l.peak = l.open
		go l.lim.OnDrained()
	}
	if l.byAddr[c.addr]--; l.byAddr[c.addr] <= 0 {
		delete(l.byAddr, c.addr)
	}
	if c.elem != nil {
		l.unvetted.Remove(c.elem)
		c.elem = nil
	}
}

// Conn is a connection accepted by a Listener.
type Conn struct {
	net.Conn
	l    *Listener
	addr string
	// guarded by l.mu
	elem     *list.Element // in l.unvetted while unvetted
	released bool
}

// Close closes the connection and frees its place under the caps.
func (c *Conn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// Vet marks the connection as having passed authentication: it is no
// longer closed to make room for others.
func (c *Conn) Vet() {
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.unvetted.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
}

type ctxKey struct{}

// WithConn returns ctx carrying c; use it as http.Server.ConnContext so
// that handlers can Vet their connection (VetContext).
func WithConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, ctxKey{}, lc)
	}
	return ctx
}

// AddressOf returns the per-address key (an IPv4 address, an IPv6 /64) of
// the connection carried by ctx (WithConn), if any.
func AddressOf(ctx context.Context) (string, bool) {
	if c, ok := ctx.Value(ctxKey{}).(*Conn); ok {
		return c.addr, true
	}
	return "", false
}

// VetContext vets the connection carried by ctx (WithConn), if any.
func VetContext(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*Conn); ok {
		c.Vet()
	}
}

// remoteIP is the key of c's remote address for the per-address cap: the
// IPv4 address, or the /64 prefix of an IPv6 address (one host usually
// holds a whole /64); the whole address text when it has no IP.
func remoteIP(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	var ip net.IP
	if ta, ok := a.(*net.TCPAddr); ok {
		ip = ta.IP
	} else if h, _, err := net.SplitHostPort(a.String()); err == nil {
		ip = net.ParseIP(h)
	}
	if ip == nil {
		return a.String()
	}
	return AddrKey(ip)
}

// AddrKey is the per-address key of ip: the IPv4 address (also for an
// IPv4-mapped IPv6 address), or the /64 prefix of an IPv6 address.
func AddrKey(ip net.IP) string {
	if ip.To4() != nil {
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
