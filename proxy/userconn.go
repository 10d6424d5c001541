package proxy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Per-user upstream sessions. An upstream with a per-user
// credential source ([upstreams.NAME.credential] source = "passthrough",
// "exchange" or "oauth") is called on a session of its own per verified
// user, opened on the user's first call with the user's credential and
// sending it on every request (a protected MCP server binds its session to
// the user who opened it, so users cannot share one). The shared session
// (with the configured headers: the proxy's own service credential, if the
// upstream needs one to list its tools) keeps the catalog, resources and
// prompts.
//
// Such sessions offer no sampling, elicitation or roots to the upstream:
// a user's session outlives any one client session, so requests the
// upstream sends back could not be routed to the right client.
//
// Bounds: a session unused for userConnIdle is closed; at most
// maxUserConns are open (the least recently used is closed first).

const (
	userConnIdle  = 15 * time.Minute
	maxUserConns  = 1000
	userConnSweep = time.Minute
)

type userConns struct {
	mu        sync.Mutex
	m         map[string]*userConn
	lastSweep time.Time
	closed    bool
}

type userConn struct {
	ready chan struct{} // closed when the open attempt ended
	cc    *upstream.ClientConn
	err   error
	ident atomic.Pointer[identity.Identity] // the user's latest identity (its token may be refreshed)
	last  atomic.Int64                      // unix nanoseconds of the last use
}

func newUserConns() *userConns { return &userConns{m: map[string]*userConn{}} }

// userConn returns the calling user's session of upstream up when up has
// a per-user credential source (nil, nil otherwise). The user's credential
// is resolved first: a user without one gets *credentials.ConnectRequired
// (or another error naming what is missing) and no session is opened.
func (p *Proxy) userConn(ctx context.Context, s *session, up string) (*upstream.ClientConn, error) {
	if p.idn == nil || !p.idn.creds.PerUser(up) {
		return nil, nil
	}
	id := s.ident()
	if _, err := p.idn.creds.Authorization(ctx, up, id); err != nil {
		return nil, err
	}
	us := p.idn.users
	key := up + "\x00" + id.Subject
	now := time.Now()
	us.mu.Lock()
	if us.closed {
		us.mu.Unlock()
		return nil, fmt.Errorf("upstream %q: %w: shutting down", up, upstream.ErrUnavailable)
	}
	us.sweepLocked(now)
	uc, ok := us.m[key]
	if !ok {
		uc = &userConn{ready: make(chan struct{})}
		uc.ident.Store(id)
		uc.last.Store(now.UnixNano())
		us.m[key] = uc
		us.mu.Unlock()
		creds := p.idn.creds
		octx := upstream.WithAuthorization(ctx, func(rctx context.Context) (string, error) {
			return creds.Authorization(rctx, up, uc.ident.Load())
		})
		uc.cc, uc.err = p.ups.OpenSession(octx, up, &mcp.ClientOptions{}, nil, nil)
		close(uc.ready)
		if uc.err != nil {
			us.drop(key, uc)
			return nil, uc.err
		}
		p.log.Debug("per-user upstream session opened", "upstream", up, "user", id.Subject)
		return uc.cc, nil
	}
	us.mu.Unlock()
	uc.ident.Store(id)
	uc.last.Store(now.UnixNano())
	select {
	case <-uc.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if uc.err != nil {
		return nil, uc.err
	}
	return uc.cc, nil
}

// dropUserConn closes the calling user's session of up (after it was lost,
// so that the next call opens a new one).
func (p *Proxy) dropUserConn(s *session, up string) {
	id := s.ident()
	if p.idn == nil || p.idn.users == nil || id == nil {
		return
	}
	key := up + "\x00" + id.Subject
	us := p.idn.users
	us.mu.Lock()
	uc := us.m[key]
	us.mu.Unlock()
	if uc != nil {
		us.drop(key, uc)
	}
}

// drop removes uc (if still registered under key) and closes its session.
func (us *userConns) drop(key string, uc *userConn) {
	us.mu.Lock()
	if us.m[key] == uc {
		delete(us.m, key)
	}
	us.mu.Unlock()
	go func() {
		<-uc.ready
		if uc.cc != nil {
			uc.cc.Close()
		}
	}()
}

// sweepLocked closes idle sessions, and the least recently used ones past
// maxUserConns.
func (us *userConns) sweepLocked(now time.Time) {
	if now.Sub(us.lastSweep) < userConnSweep && len(us.m) < maxUserConns {
		return
	}
	us.lastSweep = now
	var oldestKey string
	var oldest int64
	for k, uc := range us.m {
		last := uc.last.Load()
		if now.Sub(time.Unix(0, last)) > userConnIdle {
			delete(us.m, k)
			go closeWhenReady(uc)
			continue
		}
		if oldestKey == "" || last < oldest {
			oldestKey, oldest = k, last
		}
	}
	if len(us.m) >= maxUserConns && oldestKey != "" {
		uc := us.m[oldestKey]
		delete(us.m, oldestKey)
		go closeWhenReady(uc)
	}
}

func closeWhenReady(uc *userConn) {
	<-uc.ready
	if uc.cc != nil {
		uc.cc.Close()
	}
}

// closeAll closes every per-user session and refuses new ones (nil-safe).
func (us *userConns) closeAll() {
	if us == nil {
		return
	}
	us.mu.Lock()
	us.closed = true
	all := us.m
	us.m = map[string]*userConn{}
	us.mu.Unlock()
	var wg sync.WaitGroup
	for _, uc := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closeWhenReady(uc)
		}()
	}
	wg.Wait()
}
