package proxy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The resources feature: resources/list, resources/templates/list and
// resources/read passed on to the upstreams that own them, and
// subscriptions to a resource's updates (passthrough.go has the rules).

// listResources merges every upstream's resources (all pages) into one
// page and rebuilds the URI table.
func (pt *passthrough) listResources(ctx context.Context, s *session) (*mcp.ListResourcesResult, error) {
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	table := map[string]route{}
	ups := pt.visibleUpstreams(s, hasResources)
	lists := listEach(ctx, pt, s, "resources/list", ups, func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*mcp.Resource, string, error) {
		r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
	for i, up := range ups {
		for _, res := range lists[i] {
			c := *res
			c.URI = pt.exposeURI(table, up, res.URI)
			out.Resources = append(out.Resources, &c)
		}
	}
	t := pt.tablesFor(s)
	pt.mu.Lock()
	t.resources = table
	pt.mu.Unlock()
	return out, nil
}

// exposeURI gives (up, uri) its exposed URI in table: unchanged unless an
// earlier upstream took it.
func (pt *passthrough) exposeURI(table map[string]route, up, uri string) string {
	exposed := uri
	if r, taken := table[uri]; taken && r.up != up {
		exposed = proxyURIScheme + up + "/" + uri
		pt.mu.Lock()
		pt.revURI[route{up, uri}] = exposed
		pt.mu.Unlock()
	}
	table[exposed] = route{up, uri}
	return exposed
}

func (pt *passthrough) listTemplates(ctx context.Context, s *session) (*mcp.ListResourceTemplatesResult, error) {
	out := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}
	table := map[string]route{}
	ups := pt.visibleUpstreams(s, hasResources)
	lists := listEach(ctx, pt, s, "resources/templates/list", ups, func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
	for i, up := range ups {
		for _, t := range lists[i] {
			c := *t
			if _, taken := table[t.URITemplate]; taken {
				c.URITemplate = proxyURIScheme + up + "/" + t.URITemplate
			}
			table[c.URITemplate] = route{up, t.URITemplate}
			out.ResourceTemplates = append(out.ResourceTemplates, &c)
		}
	}
	t := pt.tablesFor(s)
	pt.mu.Lock()
	t.templates = table
	pt.mu.Unlock()
	return out, nil
}

// routeURI finds the upstream and original URI of an exposed URI for s
// (see the rules at the top of this file), among the upstreams whose
// features s may see: a URI of any other upstream gets the answer of a URI
// no upstream lists.
func (pt *passthrough) routeURI(s *session, uri string) (route, error) {
	r, err := pt.findURI(s, uri)
	if err == nil && !pt.visible(s, r.up) {
		err = errResourceNotFound(uri)
	}
	return r, err
}

func errResourceNotFound(uri string) error {
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf("resource %q: no upstream lists it (list resources first)", uri)}
}

func (pt *passthrough) findURI(s *session, uri string) (route, error) {
	t := pt.tablesFor(s)
	pt.mu.Lock()
	r, ok := t.resources[uri]
	templates := make(map[string]route, len(t.templates))
	for k, v := range t.templates {
		templates[k] = v
	}
	pt.mu.Unlock()
	if ok {
		return r, nil
	}
	ups := pt.visibleUpstreams(s, hasResources)
	if rest, ok := strings.CutPrefix(uri, proxyURIScheme); ok {
		for _, up := range ups {
			if orig, ok := strings.CutPrefix(rest, up+"/"); ok {
				return route{up, orig}, nil
			}
		}
	}
	if len(ups) == 1 {
		return route{ups[0], uri}, nil
	}
	// The longest literal template prefix wins.
	best, bestLen := "", 0
	for tmpl, r := range templates {
		lit := r.orig
		if i := strings.IndexByte(lit, '{'); i >= 0 {
			lit = lit[:i]
		}
		if lit != "" && strings.HasPrefix(uri, lit) && len(lit) > bestLen && !strings.HasPrefix(tmpl, proxyURIScheme) {
			best, bestLen = r.up, len(lit)
		}
	}
	if best != "" {
		return route{best, uri}, nil
	}
	return route{}, errResourceNotFound(uri)
}

func (pt *passthrough) readResource(ctx context.Context, s *session, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/read: missing params"}
	}
	r, err := pt.routeURI(s, params.URI)
	if err != nil {
		return nil, err
	}
	cs, err := pt.sessionOf(s, r.up)
	if err != nil {
		return nil, err
	}
	p := *params
	p.URI = r.orig
	p.Meta = front.ForwardMeta(p.Meta)
	res, err := cs.ReadResource(ctx, &p)
	if err != nil {
		return nil, upstreamError(r.up, "resources/read", err)
	}
	res.Meta = front.ForwardMeta(res.Meta) // meta.go: the upstream's identity is a hop key
	if r.orig != params.URI {
		for i, c := range res.Contents {
			if c != nil && c.URI == r.orig {
				cc := *c
				cc.URI = params.URI
				res.Contents[i] = &cc
			}
		}
	}
	return res, nil
}

// subscribe is the front server's SubscribeHandler: on a shared upstream
// session the upstream is subscribed once, when the first client session
// subscribes; the set of subscribed sessions is kept per resource (a
// session subscribing twice counts once). On a per-client session every
// subscribe goes through. The go-sdk server records the client's
// subscription for ResourceUpdated.
func (pt *passthrough) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	s := pt.p.sessionOf(req.Session)
	r, err := pt.routeURI(s, req.Params.URI)
	if err != nil {
		return err
	}
	cs, err := pt.sessionOf(s, r.up)
	if err != nil {
		return err
	}
	if pt.conn(s, r.up) != nil {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: r.orig, Meta: front.ForwardMeta(req.Params.Meta)}); err != nil {
			return upstreamError(r.up, "resources/subscribe", err)
		}
		return nil
	}
	pt.mu.Lock()
	first := len(pt.subs[r]) == 0 || pt.subOn[r] != cs // not yet on this session of the upstream
	pt.mu.Unlock()
	if first {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: r.orig, Meta: front.ForwardMeta(req.Params.Meta)}); err != nil {
			return upstreamError(r.up, "resources/subscribe", err)
		}
	}
	pt.mu.Lock()
	if pt.subs[r] == nil {
		pt.subs[r] = map[*session]bool{}
	}
	pt.subs[r][s] = true
	if first {
		pt.subOn[r] = cs
	}
	pt.mu.Unlock()
	return nil
}

// resubscribe subscribes the current shared session of upstream up to the
// resources that client sessions are subscribed to through the proxy and
// that this session does not hold yet: a new session (a reconnect after
// the upstream crashed or lost its session, or a reload restarting it)
// starts with none (MCP server/resources "Subscriptions" are per
// session). It runs on every (re)listing of up (a no-op while the session
// is unchanged); the subscribes are sent in the background, once per
// resource. A failed one is logged, and the resource then counts as not
// subscribed on this session, so a client's next resources/subscribe of
// it goes to the upstream.
func (pt *passthrough) resubscribe(up string) {
	cs, err := pt.p.ups.SessionFor(up)
	if err != nil {
		return // not ready: resubscribed when it is
	}
	var again []route
	pt.mu.Lock()
	for r, set := range pt.subs {
		if r.up == up && len(set) > 0 && pt.subOn[r] != cs {
			pt.subOn[r] = cs
			again = append(again, r)
		}
	}
	pt.mu.Unlock()
	if len(again) == 0 {
		return
	}
	sort.Slice(again, func(i, j int) bool { return again[i].orig < again[j].orig })
	go func() {
		for _, r := range again {
			ctx, cancel := context.WithTimeout(pt.p.life, 30*time.Second)
			err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: r.orig})
			cancel()
			if err == nil {
				continue
			}
			pt.mu.Lock()
			if pt.subOn[r] == cs {
				delete(pt.subOn, r)
			}
			pt.mu.Unlock()
			pt.p.log.Warn("subscribing the upstream's new session to a resource clients are subscribed to failed; their next resources/subscribe of it goes to the upstream", "upstream", r.up, "uri", r.orig, "err", err)
		}
	}()
}

// unsubscribe is the front server's UnsubscribeHandler. On a shared
// upstream session only a session that subscribed counts, and the upstream
// is unsubscribed when the last one leaves; an unsubscribe from a session
// that never subscribed changes nothing.
func (pt *passthrough) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	s := pt.p.sessionOf(req.Session)
	r, err := pt.routeURI(s, req.Params.URI)
	if err != nil {
		return err
	}
	cs, err := pt.sessionOf(s, r.up)
	if err != nil {
		return err
	}
	if pt.conn(s, r.up) == nil && !pt.dropSub(r, s) {
		return nil
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: r.orig, Meta: front.ForwardMeta(req.Params.Meta)}); err != nil {
		return upstreamError(r.up, "resources/unsubscribe", err)
	}
	return nil
}

// dropSub removes s from r's subscribers and reports whether that left
// none (the shared upstream is to be unsubscribed).
func (pt *passthrough) dropSub(r route, s *session) bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	set := pt.subs[r]
	if !set[s] {
		return false
	}
	delete(set, s)
	if len(set) > 0 {
		return false
	}
	delete(pt.subs, r)
	delete(pt.subOn, r)
	return true
}

// sessionEnded releases the shared subscriptions of a client session that
// went away without unsubscribing.
func (pt *passthrough) sessionEnded(s *session) {
	pt.mu.Lock()
	var routes []route
	for r, set := range pt.subs {
		if set[s] {
			routes = append(routes, r)
		}
	}
	pt.mu.Unlock()
	for _, r := range routes {
		if !pt.dropSub(r, s) {
			continue
		}
		cs, err := pt.p.ups.SessionFor(r.up)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: r.orig}); err != nil {
			pt.p.log.Debug("unsubscribe after the client left failed", "upstream", r.up, "err", err)
		}
		cancel()
	}
}

// resourceUpdated relays an upstream's notifications/resources/updated to
// the client sessions subscribed to the exposed URI (the go-sdk server
// keeps the subscriptions).
// resourceUpdated hands an upstream's notifications/resources/updated to
// up's relay queue (notifyrelay.go) and returns at once.
func (pt *passthrough) resourceUpdated(ctx context.Context, up string, params *mcp.ResourceUpdatedNotificationParams) {
	if params == nil {
		return
	}
	r := pt.upRelay(up)
	if !r.updated.push(updatedItem{ctx, params}) {
		r.updateDrops.drop()
	}
}

type updatedItem struct {
	ctx    context.Context
	params *mcp.ResourceUpdatedNotificationParams
}

// sendResourceUpdated sends one resources/updated to the subscribed client
// sessions, under the URI they know.
func (pt *passthrough) sendResourceUpdated(ctx context.Context, up string, params *mcp.ResourceUpdatedNotificationParams) {
	pt.mu.Lock()
	exposed, ok := pt.revURI[route{up, params.URI}]
	pt.mu.Unlock()
	if !ok {
		exposed = params.URI
	}
	p := *params
	p.URI = exposed
	for _, srv := range pt.p.frontServers() {
		if err := srv.ResourceUpdated(ctx, &p); err != nil {
			pt.p.log.Debug("resources/updated relay failed", "upstream", up, "err", err)
		}
	}
}
