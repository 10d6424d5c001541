package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

// Passthrough of the MCP features beyond tools: resources,
// resource templates, subscriptions, prompts, completions and logging,
// routed to the upstream that owns them by tables built from the upstreams'
// own listings, never by splitting a name.
//
// Routing rules:
//   - Resource URIs and URI templates pass UNCHANGED when only one upstream
//     lists them. When several upstreams list the same URI (or template),
//     the first upstream in name order keeps it and each later one's copy
//     is rewritten to "mcp-toolsearch://<upstream>/<original URI>"; reads,
//     subscriptions and completions of such a URI go to that upstream with
//     the original URI, and the URIs inside its answers are mapped back.
//     A URI in no table (e.g. one expanded from a template) goes to the
//     only upstream with resources, else to the upstream whose template's
//     literal prefix matches it, else it is an error -32002 naming it.
//   - Prompt names get the same exposed names as tools (catalog.AssignNames
//     with the upstream's prefix: "<prefix>__<name>", or the bare name with
//     prefix ""), so transparent mode shows the upstream's own names.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
)

// proxyURIScheme prefixes a resource URI rewritten because of a clash:
// mcp-toolsearch://<upstream>/<original URI>.
const proxyURIScheme = "mcp-toolsearch://"

// maxListPages bounds the pages read from one upstream per listing.
const maxListPages = 100

// readPages reads one upstream's paginated list (MCP spec
// server/utilities/pagination): fetch(cursor) returns a page and the next
// cursor. It stops on an empty or repeated cursor or after maxListPages;
// an error ends the listing and is returned with what was read so far.
// nil items are dropped.
func readPages[T any](fetch func(cursor string) ([]*T, string, error)) ([]*T, error) {
	var out []*T
	cursor := ""
	for page := 0; page < maxListPages; page++ {
		items, next, err := fetch(cursor)
		if err != nil {
			return out, err
		}
		for _, it := range items {
			if it != nil {
				out = append(out, it)
			}
		}
		if next == "" || next == cursor {
			break
		}
		cursor = next
	}
	return out, nil
}

// upstreamShareTimeout bounds one running upstream's part of a client's
// resources/list, resources/templates/list or prompts/list (all its pages)
// and of logging/setLevel, which ask every upstream at once. It is not the
// upstream's startup_timeout: that one covers a process start and maybe a
// package download (`init` writes "3m" for npx/uvx/docker servers), while
// these requests go to an upstream that is already running, and one that
// does not answer must not hold every client's answer for minutes (review
// r8 F3). docs/config.md, startup_timeout.
const upstreamShareTimeout = 10 * time.Second

// eachUpstream runs do for every upstream of ups, all at once, on its
// session for s, each bounded by upstreamShareTimeout, and returns once all
// have returned. do gets the upstream's index in ups. Upstreams are not
// trusted: one without a session is passed over, and one that fails or does
// not answer in time is logged naming method, the upstream and the reason
// (README "A broken upstream never takes the others down").
func (pt *passthrough) eachUpstream(ctx context.Context, s *session, method string, ups []string,
	do func(ctx context.Context, i int, cs *mcp.ClientSession) error) {
	var wg sync.WaitGroup
	for i, up := range ups {
		cs, err := pt.sessionOf(s, up)
		if err != nil {
			pt.p.log.Warn(method+": upstream skipped", "upstream", up, "err", err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			uctx, cancel := context.WithTimeout(ctx, upstreamShareTimeout)
			defer cancel()
			if err := do(uctx, i, cs); err != nil {
				if ctx.Err() == nil && errors.Is(uctx.Err(), context.DeadlineExceeded) {
					err = fmt.Errorf("no answer to %s within %s; the answer goes on without this upstream", method, upstreamShareTimeout)
				}
				pt.p.log.Warn(method+": upstream failed", "upstream", up, "err", err)
			}
		}()
	}
	wg.Wait()
}

// listEach reads method's list (all pages, readPages) from every upstream
// of ups at once (eachUpstream) and returns each one's items in the order
// of ups: nil for an upstream passed over, what was read before the error
// for one that failed or did not answer in time. fetch asks cs for the
// page at cursor.
func listEach[T any](ctx context.Context, pt *passthrough, s *session, method string, ups []string,
	fetch func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*T, string, error)) [][]*T {
	out := make([][]*T, len(ups))
	pt.eachUpstream(ctx, s, method, ups, func(ctx context.Context, i int, cs *mcp.ClientSession) error {
		var err error
		out[i], err = readPages(func(cursor string) ([]*T, string, error) { return fetch(ctx, cs, cursor) })
		return err
	})
	return out
}

// codeResourceNotFound is the MCP spec's error for an unknown resource
// (server/resources "Error Handling").
const codeResourceNotFound = -32002

// passthrough is the proxy's state for everything but tools.
type passthrough struct {
	p *Proxy

	mu     sync.Mutex
	tables map[*policy.View]*featureTables // routing tables per policy view (passthrough_policy.go)
	revURI map[route]string                // owner -> exposed URI (rewritten ones only)
	subs   map[route]map[*session]bool     // shared upstream subscriptions -> subscribed client sessions
	subOn  map[route]*mcp.ClientSession    // the shared upstream session each of subs is made on (resubscribe)

	inflight   []*inflight                             // tools/call in flight on shared upstream sessions, oldest first
	ended      []endedCall                             // calls that ended in the last logGrace (logroute.go)
	levels     map[*mcp.ServerSession]mcp.LoggingLevel // each client session's logging/setLevel (logroute.go)
	relaying   map[relayKey]int                        // requests of an upstream relayed to a client session, not yet answered (passthrough_relay.go)
	refused    map[string]*refusedLog                  // per upstream: requests refused over maxRelayedPerClient
	clients    map[*session]*clientState
	perClientN int // per-client upstream sessions open or opening (server.max_per_client_upstreams)

	// notifyrelay.go: the upstreams' notifications on their way to clients.
	relay                     relays
	resChanged, promptChanged *coalescer
}

// route is one upstream's name for something: (upstream, original).
type route struct{ up, orig string }

func newPassthrough(p *Proxy) *passthrough {
	pt := &passthrough{
		p:       p,
		tables:  map[*policy.View]*featureTables{},
		revURI:  map[route]string{},
		subs:    map[route]map[*session]bool{},
		subOn:   map[route]*mcp.ClientSession{},
		clients: map[*session]*clientState{},
	}
	pt.resChanged = newCoalescer(func() { pt.sendListChanged("resources") })
	pt.promptChanged = newCoalescer(func() { pt.sendListChanged("prompts") })
	return pt
}

// perClient reports whether upstream up has session = "per-client".
func (pt *passthrough) perClient(up string) bool {
	u, ok := pt.p.conf().Upstreams[up]
	return ok && u.Session == "per-client"
}

// offersRoots reports whether upstream up is offered the roots capability
// (config key roots, default true).
func (pt *passthrough) offersRoots(up string) bool {
	u, ok := pt.p.conf().Upstreams[up]
	return !ok || u.OffersRoots()
}

// sessionOf is the upstream session that serves client session s for
// upstream up: its per-client session when it has one, else the shared one.
func (pt *passthrough) sessionOf(s *session, up string) (*mcp.ClientSession, error) {
	if cc := pt.conn(s, up); cc != nil {
		return cc.Session(), nil
	}
	return pt.p.ups.SessionFor(up)
}

// upstreamCaps returns the capabilities each ready upstream announced in
// its initialize result, by upstream name.
func (pt *passthrough) upstreamCaps() map[string]*mcp.ServerCapabilities {
	out := map[string]*mcp.ServerCapabilities{}
	for _, up := range pt.p.ups.Names() {
		cs, err := pt.p.ups.SessionFor(up)
		if err != nil || cs.InitializeResult() == nil || cs.InitializeResult().Capabilities == nil {
			continue
		}
		out[up] = cs.InitializeResult().Capabilities
	}
	return out
}

// capabilities is what the proxy announces to s in initialize: tools always
// (with listChanged); resources, prompts, completions and logging only when
// at least one ready upstream whose features s may see offers them, with
// subscribe and listChanged set when any of those upstreams sets them (MCP
// spec basic/lifecycle "Capability Negotiation").
func (pt *passthrough) capabilities(s *session) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	for up, c := range pt.upstreamCaps() {
		if !pt.visible(s, up) {
			continue
		}
		if c.Resources != nil {
			if caps.Resources == nil {
				caps.Resources = &mcp.ResourceCapabilities{}
			}
			caps.Resources.Subscribe = caps.Resources.Subscribe || c.Resources.Subscribe
			caps.Resources.ListChanged = caps.Resources.ListChanged || c.Resources.ListChanged
		}
		if c.Prompts != nil {
			if caps.Prompts == nil {
				caps.Prompts = &mcp.PromptCapabilities{}
			}
			caps.Prompts.ListChanged = caps.Prompts.ListChanged || c.Prompts.ListChanged
		}
		if c.Completions != nil {
			caps.Completions = &mcp.CompletionCapabilities{}
		}
		if c.Logging != nil {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
	}
	return caps
}

// withCap lists, in name order, the ready upstreams whose capabilities
// satisfy has.
func (pt *passthrough) withCap(has func(*mcp.ServerCapabilities) bool) []string {
	caps := pt.upstreamCaps()
	var out []string
	for _, up := range pt.p.ups.Names() {
		if c, ok := caps[up]; ok && has(c) {
			out = append(out, up)
		}
	}
	return out
}

func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }
func hasPrompts(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }
func hasLogging(c *mcp.ServerCapabilities) bool   { return c.Logging != nil }

// upstreamError turns an upstream's error into the client's answer: a
// JSON-RPC error keeps its code and data, its message prefixed with
// `upstream "NAME": ` (README "Results pass through unchanged").
func upstreamError(up, method string, err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &jsonrpc.Error{Code: rpc.Code, Message: fmt.Sprintf("upstream %q: %s", up, rpc.Message), Data: rpc.Data}
	}
	return fmt.Errorf("upstream %q: %s: %w", up, method, err)
}

// handlePassthrough answers the non-tool methods the proxy relays; ok is
// false for any other method.
func (pt *passthrough) handle(ctx context.Context, s *session, method string, req mcp.Request) (res mcp.Result, err error, ok bool) {
	switch method {
	case "resources/list":
		res, err = pt.listResources(ctx, s)
	case "resources/templates/list":
		res, err = pt.listTemplates(ctx, s)
	case "resources/read":
		res, err = pt.readResource(ctx, s, req.(*mcp.ReadResourceRequest).Params)
	case "prompts/list":
		res, err = pt.listPrompts(ctx, s)
	case "prompts/get":
		res, err = pt.getPrompt(ctx, s, req.(*mcp.GetPromptRequest).Params)
	case "completion/complete":
		res, err = pt.complete(ctx, s, req.(*mcp.CompleteRequest).Params)
	default:
		return nil, nil, false
	}
	return res, err, true
}

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

func (pt *passthrough) listPrompts(ctx context.Context, s *session) (*mcp.ListPromptsResult, error) {
	type item struct {
		up string
		p  *mcp.Prompt
	}
	var items []item
	ups := pt.visibleUpstreams(s, hasPrompts)
	lists := listEach(ctx, pt, s, "prompts/list", ups, func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*mcp.Prompt, string, error) {
		r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
	for i, up := range ups {
		for _, p := range lists[i] {
			items = append(items, item{up, p})
		}
	}
	inputs := make([]catalog.NameInput, 0, len(items))
	for _, it := range items {
		inputs = append(inputs, catalog.NameInput{ID: it.up + "\x00" + it.p.Name, Prefix: pt.prefix(it.up), Tool: it.p.Name})
	}
	names := catalog.AssignNames(inputs, pt.sep(), nil)
	table := map[string]route{}
	out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	for _, it := range items {
		exposed := names[it.up+"\x00"+it.p.Name]
		if _, dup := table[exposed]; dup || exposed == "" {
			continue
		}
		table[exposed] = route{it.up, it.p.Name}
		c := *it.p
		c.Name = exposed
		out.Prompts = append(out.Prompts, &c)
	}
	t := pt.tablesFor(s)
	pt.mu.Lock()
	t.prompts = table
	pt.mu.Unlock()
	return out, nil
}

func (pt *passthrough) prefix(up string) string {
	if u, ok := pt.p.conf().Upstreams[up]; ok {
		return u.PrefixOrName()
	}
	return up
}

func (pt *passthrough) sep() string {
	if pt.p.conf().Server.NameSeparator != "" {
		return pt.p.conf().Server.NameSeparator
	}
	return "__"
}

// routePrompt finds a prompt's owner among the upstreams whose features s
// may see, listing prompts once when s's table does not know the name yet.
func (pt *passthrough) routePrompt(ctx context.Context, s *session, name string) (route, error) {
	t := pt.tablesFor(s)
	for attempt := 0; attempt < 2; attempt++ {
		pt.mu.Lock()
		r, ok := t.prompts[name]
		pt.mu.Unlock()
		if ok && pt.visible(s, r.up) {
			return r, nil
		}
		if attempt == 0 {
			if _, err := pt.listPrompts(ctx, s); err != nil {
				return route{}, err
			}
		}
	}
	return route{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}

func (pt *passthrough) getPrompt(ctx context.Context, s *session, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompts/get: missing params"}
	}
	r, err := pt.routePrompt(ctx, s, params.Name)
	if err != nil {
		return nil, err
	}
	cs, err := pt.sessionOf(s, r.up)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Name = r.orig
	p.Meta = front.ForwardMeta(p.Meta)
	res, err := cs.GetPrompt(ctx, &p)
	if err != nil {
		return nil, upstreamError(r.up, "prompts/get", err)
	}
	res.Meta = front.ForwardMeta(res.Meta) // meta.go: the upstream's identity is a hop key
	return res, nil
}

// complete routes completion/complete by its ref: a prompt name through
// the prompt table, a resource template URI through the template table.
func (pt *passthrough) complete(ctx context.Context, s *session, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete: missing ref"}
	}
	p := *params
	ref := *params.Ref
	p.Ref = &ref
	var up string
	switch ref.Type {
	case "ref/prompt":
		r, err := pt.routePrompt(ctx, s, ref.Name)
		if err != nil {
			return nil, err
		}
		up, ref.Name = r.up, r.orig
	case "ref/resource":
		t := pt.tablesFor(s)
		pt.mu.Lock()
		r, ok := t.templates[ref.URI]
		pt.mu.Unlock()
		if !ok {
			if _, err := pt.listTemplates(ctx, s); err == nil {
				pt.mu.Lock()
				r, ok = t.templates[ref.URI]
				pt.mu.Unlock()
			}
		}
		if !ok || !pt.visible(s, r.up) {
			rr, err := pt.routeURI(s, ref.URI)
			if err != nil {
				return nil, err
			}
			r = rr
		}
		up, ref.URI = r.up, r.orig
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion/complete: unknown ref type %q", ref.Type)}
	}
	cs, err := pt.sessionOf(s, up)
	if err != nil {
		return nil, err
	}
	if c := cs.InitializeResult(); c == nil || c.Capabilities == nil || c.Capabilities.Completions == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("upstream %q does not offer completions", up)}
	}
	p.Meta = front.ForwardMeta(p.Meta)
	res, err := cs.Complete(ctx, &p)
	if err != nil {
		return nil, upstreamError(up, "completion/complete", err)
	}
	return res, nil
}

// setLevel passes logging/setLevel on to every upstream with logging that
// serves s, to all at once, each bounded by upstreamShareTimeout
// (eachUpstream: an upstream that never answers must not hold the client's
// request). On a shared upstream session the last level set by any client
// wins; each client session still only receives messages at or above its
// own level (the go-sdk server filters per session).
func (pt *passthrough) setLevel(ctx context.Context, s *session, params *mcp.SetLoggingLevelParams) {
	if params == nil {
		return
	}
	pt.noteLevel(s, params.Level) // logroute.go
	pt.eachUpstream(ctx, s, "logging/setLevel", pt.visibleUpstreams(s, hasLogging), func(ctx context.Context, _ int, cs *mcp.ClientSession) error {
		return cs.SetLoggingLevel(ctx, params)
	})
}

// logMessage relays upstream up's notifications/message to client
// sessions: to the owner of a per-client session (owner != nil), else to
// every client session that may see up's features. Each session filters by
// its own level.
//
// On a shared session the client is chosen here, as the message arrives
// (logroute.go); a message that belongs to calls of several client
// sessions goes to none of them.
func (pt *passthrough) logMessage(ctx context.Context, up string, owner *session, params *mcp.LoggingMessageParams) {
	if params == nil {
		return
	}
	r := pt.upRelay(up)
	var done func()
	if owner == nil {
		call, target, all := pt.logTarget(up, takeLogToken(params))
		if target == nil && !all {
			if r.logUnrouted.Allow() {
				pt.p.log.Warn("upstream log message not relayed: calls of several client sessions are in flight on its shared session and the message does not say whose it is (session = \"per-client\" routes exactly)", "upstream", up)
			}
			return
		}
		owner = target
		if call != nil {
			// On the call's stream, at its log level, before its answer
			// (endCall waits for it, logGrace at most).
			ctx = context.WithoutCancel(call.ctx)
			call.logN.Add(1)
			call.logs.Add(1)
			done = call.logs.Done
		}
	}
	if !r.logs.push(logItem{ctx, owner, params, done}) {
		r.logDrops.drop()
		if done != nil {
			done()
		}
	}
}

type logItem struct {
	ctx    context.Context
	owner  *session
	params *mcp.LoggingMessageParams
	done   func() // nil, or called once sent
}

// sendLog sends one of up's notifications/message to owner (a per-client
// session's client, or the client whose call it belongs to) or, owner
// nil, every client session that may see up.
func (pt *passthrough) sendLog(ctx context.Context, up string, owner *session, params *mcp.LoggingMessageParams) {
	targets := pt.p.clientSessions()
	if owner != nil {
		targets = []*session{owner}
	}
	for _, s := range targets {
		if s.ss != nil && pt.visible(s, up) {
			_ = s.ss.Log(ctx, params)
		}
	}
}

// listChanged asks for notifications/resources/list_changed or
// notifications/prompts/list_changed to every client session; it returns at
// once, and any number of calls while one sending waits make one sending
// (coalescer, notifyrelay.go).
func (pt *passthrough) listChanged(kind string) {
	switch kind {
	case "resources":
		pt.resChanged.kick()
	case "prompts":
		pt.promptChanged.kick()
	}
}

// sendListChanged sends notifications/resources/list_changed or
// notifications/prompts/list_changed to every client session (the go-sdk
// server sends them when its own list changes, so one placeholder is
// added and removed at once; it is never listed, as the middleware answers
// the lists).
func (pt *passthrough) sendListChanged(kind string) {
	pt.p.cacheClk.changed(time.Now())
	for _, srv := range pt.p.frontServers() {
		switch kind {
		case "resources":
			srv.AddResource(&mcp.Resource{URI: proxyURIScheme + "refresh", Name: "refresh"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return nil, fmt.Errorf("not readable")
			})
			srv.RemoveResources(proxyURIScheme + "refresh")
		case "prompts":
			srv.AddPrompt(&mcp.Prompt{Name: "mcp-toolsearch-refresh"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return nil, fmt.Errorf("not a prompt")
			})
			srv.RemovePrompts("mcp-toolsearch-refresh")
		}
	}
}

// frontServers returns the proxy's MCP servers (one per endpoint and
// transport).
func (p *Proxy) frontServers() []*mcp.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*mcp.Server, 0, len(p.servers))
	for _, s := range p.servers {
		out = append(out, s)
	}
	return out
}

// clientSessions returns the connected client sessions.
func (p *Proxy) clientSessions() []*session {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*session, 0, len(p.sessions))
	for _, s := range p.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ss.ID() < out[j].ss.ID() })
	return out
}

// sessionOf returns the proxy session of a go-sdk server session (nil when
// unknown).
func (p *Proxy) sessionOf(ss *mcp.ServerSession) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[ss]
}

// enabledInfos are the catalog's upstream infos (as in New).
func enabledInfos(cfg *config.Config) []catalog.UpstreamInfo {
	var infos []catalog.UpstreamInfo
	for _, u := range cfg.EnabledUpstreams() {
		infos = append(infos, catalog.UpstreamInfo{Name: u.Name, Prefix: u.PrefixOrName(), Trusted: u.Trusted, DirectOnly: u.DirectOnly})
	}
	return infos
}
