package connlimit

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// fakeListener hands out one end of net.Pipe pairs with a chosen remote
// address; the test keeps the other end as the "client".
type fakeListener struct{ conns chan net.Conn }

func (f *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-f.conns
	if !ok {
		return nil, errors.New("closed")
	}
	return c, nil
}
func (f *fakeListener) Close() error   { return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (a addrConn) RemoteAddr() net.Addr { return a.remote }

// dial makes a connection from ip and returns the client end and the
// server end Accept handed out (nil when Accept did not return it).
func dial(t *testing.T, f *fakeListener, l *Listener, ip string, accepted chan net.Conn) (client net.Conn, server net.Conn) {
	t.Helper()
	before := l.Stats()
	s, c := net.Pipe()
	f.conns <- addrConn{Conn: s, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
	// Accept decided once a counter moved (fail-safe bound, not a speed check).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		st := l.Stats()
		if st.Accepted > before.Accepted {
			return c, <-accepted
		}
		if st.RefusedTotal+st.RefusedPerAddr > before.RefusedTotal+before.RefusedPerAddr {
			return c, nil
		}
		if time.Now().After(deadline) {
			t.Fatal("Accept decided nothing")
		}
	}
}

// closed reports whether the server closed the client's connection.
func closed(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

func start(t *testing.T, lim Limits) (*fakeListener, *Listener, chan net.Conn) {
	f := &fakeListener{conns: make(chan net.Conn)}
	l := New(f, lim)
	accepted := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() { close(f.conns) })
	return f, l, accepted
}

// TestTotalCapEvictsOldestUnvetted: at the total cap a new connection
// closes the oldest one that never authenticated.
func TestTotalCapEvictsOldestUnvetted(t *testing.T) {
	f, l, acc := start(t, Limits{Max: 3})
	var clients []net.Conn
	for i := 0; i < 3; i++ {
		c, s := dial(t, f, l, "10.0.0.1", acc)
		if s == nil {
			t.Fatalf("connection %d refused under the cap", i)
		}
		clients = append(clients, c)
	}
	c4, s4 := dial(t, f, l, "10.0.0.2", acc)
	if s4 == nil {
		t.Fatal("a new connection was refused although unvetted ones could make room")
	}
	if !closed(clients[0]) {
		t.Error("the oldest unvetted connection was not closed")
	}
	if closed(clients[1]) || closed(c4) {
		t.Error("a newer connection was closed")
	}
	if st := l.Stats(); st.Open != 3 || st.Evicted != 1 || st.Accepted != 4 {
		t.Errorf("stats = %+v, want 3 open, 1 evicted, 4 accepted", st)
	}
}

// TestVettedNeverEvicted: when every connection has authenticated, a new
// one is refused instead.
func TestVettedNeverEvicted(t *testing.T) {
	f, l, acc := start(t, Limits{Max: 2})
	var clients []net.Conn
	for i := 0; i < 2; i++ {
		c, s := dial(t, f, l, "10.0.0.1", acc)
		s.(*Conn).Vet()
		clients = append(clients, c)
	}
	c3, s3 := dial(t, f, l, "10.0.0.9", acc)
	if s3 != nil {
		t.Fatal("a connection over the cap was accepted although all others are vetted")
	}
	if !closed(c3) {
		t.Error("the refused connection was not closed")
	}
	for i, c := range clients {
		if closed(c) {
			t.Errorf("vetted connection %d was closed", i)
		}
	}
	if st := l.Stats(); st.RefusedTotal != 1 || st.Open != 2 {
		t.Errorf("stats = %+v", st)
	}
}

// TestCloseFreesPlace: a connection that closes frees its place at once.
func TestCloseFreesPlace(t *testing.T) {
	f, l, acc := start(t, Limits{Max: 1, PerAddr: 1})
	_, s1 := dial(t, f, l, "10.0.0.1", acc)
	s1.(*Conn).Vet()
	_ = s1.Close()
	_ = s1.Close() // twice is harmless
	if _, s2 := dial(t, f, l, "10.0.0.1", acc); s2 == nil {
		t.Fatal("the place of a closed connection was not freed")
	}
	if st := l.Stats(); st.Open != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// TestPerAddressCap: one address cannot hold more than PerAddr; its own
// oldest unvetted connection makes room, other addresses are untouched.
func TestPerAddressCap(t *testing.T) {
	f, l, acc := start(t, Limits{Max: 100, PerAddr: 2})
	other, so := dial(t, f, l, "10.0.0.7", acc)
	if so == nil {
		t.Fatal("refused")
	}
	a1, _ := dial(t, f, l, "10.0.0.1", acc)
	a2, s2 := dial(t, f, l, "10.0.0.1", acc)
	s2.(*Conn).Vet()
	a3, s3 := dial(t, f, l, "10.0.0.1", acc)
	if s3 == nil {
		t.Fatal("third connection of an address refused although its first was unvetted")
	}
	if !closed(a1) || closed(a2) || closed(a3) || closed(other) {
		t.Error("want exactly the address's oldest unvetted connection closed")
	}
	s3.(*Conn).Vet()
	a4, s4 := dial(t, f, l, "10.0.0.1", acc)
	if s4 != nil || !closed(a4) {
		t.Error("a connection over the per-address cap of vetted connections was accepted")
	}
	// IPv6 addresses of one /64 share the cap.
	_, x1 := dial(t, f, l, "2001:db8::1", acc)
	_, x2 := dial(t, f, l, "2001:db8::2", acc)
	x1.(*Conn).Vet()
	x2.(*Conn).Vet()
	if _, x3 := dial(t, f, l, "2001:db8::3", acc); x3 != nil {
		t.Error("a third address of the same /64 was accepted over the cap")
	}
	if st := l.Stats(); st.RefusedPerAddr != 2 || st.Evicted != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// TestOnDrained: after a peak of DrainedPeak connections, OnDrained is
// called once when they fall to a quarter of it, and not for small ups and
// downs.
func TestOnDrained(t *testing.T) {
	calls := make(chan struct{}, 10)
	f := &fakeListener{conns: make(chan net.Conn)}
	l := New(f, Limits{OnDrained: func() { calls <- struct{}{} }})
	accepted := make(chan net.Conn, DrainedPeak+10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() { close(f.conns) })
	open := func(n int) []net.Conn {
		var out []net.Conn
		for i := 0; i < n; i++ {
			_, s := dial(t, f, l, "127.0.0.1", accepted)
			out = append(out, s)
		}
		return out
	}
	small := open(10)
	for _, c := range small {
		c.Close()
	}
	select {
	case <-calls:
		t.Fatal("OnDrained after 10 connections")
	case <-time.After(50 * time.Millisecond):
	}
	flood := open(DrainedPeak)
	for i, c := range flood {
		c.Close()
		if i == DrainedPeak*3/4-2 {
			select {
			case <-calls:
				t.Fatalf("OnDrained with %d of %d still open", DrainedPeak-i-1, DrainedPeak)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	select {
	case <-calls:
	case <-time.After(5 * time.Second):
		t.Fatal("no OnDrained after the flood ended")
	}
	select {
	case <-calls:
		t.Fatal("OnDrained called twice for one flood")
	case <-time.After(50 * time.Millisecond):
	}
}
