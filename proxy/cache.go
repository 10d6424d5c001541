package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cache hints of protocol 2026-07-28 (SEP-2549): list results,
// resources/read and server/discover carry ttlMs (how long the client may
// keep the answer) and cacheScope ("public": any client or intermediary
// may reuse it; "private": only the asking client). The go-sdk sets them
// only in its own handlers (ServerOptions.SetCacheable), and the proxy
// answers these methods in its middleware, so cacheMiddleware sets them.
//
// cacheScope is "private" whenever the answer depends on who asks:
//   - [tools.by_client] rules exist (the list depends on the client's
//     name, i.e. on its policy view);
//   - an upstream has session = "per-client" (its tools and resources come
//     from the client's own upstream session);
//   - the path needs a bearer token or an OAuth access token (the answer
//     is for token holders only);
//   - resources/read (a resource's content is the upstream's, whose
//     audience the proxy cannot know).
//
// Otherwise every client of that path gets the same answer, and it is
// "public". ttlMs comes from how the catalog changes (cacheClock).

// Bounds of ttlMs.
const (
	// cacheSettle: after a catalog change, answers are not to be kept
	// (ttlMs 0) for this long, since more changes tend to follow
	// (an upstream reconnecting lists its tools again).
	cacheSettle = 10 * time.Second
	// cacheMaxTTL caps ttlMs: a client that does not listen for
	// list_changed still sees a change within this time.
	cacheMaxTTL = 60 * time.Second
)

// cacheClock remembers when the catalog last changed.
type cacheClock struct {
	mu    sync.Mutex
	start time.Time
	last  time.Time // zero: no change since start
}

// changed records a catalog change at now.
func (c *cacheClock) changed(now time.Time) {
	c.mu.Lock()
	c.last = now
	c.mu.Unlock()
}

// ttl is how long a list answered at now may be kept: 0 within
// cacheSettle of the last change (or of the start), then a quarter of the
// time the catalog has been stable, at most cacheMaxTTL. unstable (an
// upstream is down, so its tools may come back any moment) gives 0.
func (c *cacheClock) ttl(now time.Time, unstable bool) time.Duration {
	c.mu.Lock()
	since := c.last
	if since.IsZero() {
		since = c.start
	}
	c.mu.Unlock()
	stable := now.Sub(since)
	if unstable || stable < cacheSettle {
		return 0
	}
	return min(stable/4, cacheMaxTTL)
}

// cacheScope is the cacheScope of an answer of method to a client of
// endpoint (see the package comment above).
func (p *Proxy) cacheScope(method, endpoint string) string {
	// In OAuth mode the answer is for one verified user.
	if method == "resources/read" || len(p.conf().Tools.ByClient) > 0 || p.endpointToken(endpoint) != "" || p.conf().Auth.Enabled() {
		return "private"
	}
	for _, u := range p.conf().EnabledUpstreams() {
		if u.Session == "per-client" {
			return "private"
		}
	}
	return "public"
}

// endpointToken is the bearer token clients of endpoint must send ("" none).
func (p *Proxy) endpointToken(endpoint string) string {
	if ep, ok := p.conf().Endpoints[endpoint]; ok && ep.Token != "" {
		return ep.Token
	}
	return p.conf().Server.BearerToken
}

// cacheMiddleware sets ttlMs and cacheScope on the cacheable results the
// proxy answers to 2026-07-28 requests (outermost middleware, so it sees
// the final result).
// resources/read keeps an upstream's own ttlMs when it gave one (the
// proxy does not know how fast a resource changes).
func (p *Proxy) cacheMiddleware(endpoint string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || res == nil {
				return res, err
			}
			modern := modernRequestOf(req)
			res = eraResult(res, modern) // mrtr.go
			if !modern {
				// Older protocols have no cache hints: their answers
				// leave them out (a 2026-07-28 upstream's hints are
				// dropped; cachehints.go).
				return withoutCacheHints(res), nil
			}
			c := cacheableOf(res)
			if c == nil {
				return res, nil
			}
			if _, ok := res.(*mcp.ReadResourceResult); ok {
				c.CacheScope = p.cacheScope(method, endpoint)
				return res, nil
			}
			snap := p.catalog().Snapshot()
			c.TTLMs = int(p.cacheClk.ttl(time.Now(), len(snap.Unavailable) > 0) / time.Millisecond)
			c.CacheScope = p.cacheScope(method, endpoint)
			return res, nil
		}
	}
}

// cacheableOf is the cache hints of a result that has them (nil if none).
func cacheableOf(res mcp.Result) *mcp.Cacheable {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		return &r.Cacheable
	case *rawToolsList:
		return &r.Cacheable
	case *mcp.ListResourcesResult:
		return &r.Cacheable
	case *mcp.ListResourceTemplatesResult:
		return &r.Cacheable
	case *mcp.ListPromptsResult:
		return &r.Cacheable
	case *mcp.DiscoverResult:
		return &r.Cacheable
	case *mcp.ReadResourceResult:
		return &r.Cacheable
	}
	return nil
}
