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
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
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
// does not answer must not hold every client's answer for minutes
// (docs/config.md, startup_timeout).
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
	// readyOn is each upstream's session last seen by upstreamReady.
	readyOn map[string]*mcp.ClientSession
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
		readyOn: map[string]*mcp.ClientSession{},
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
// spec basic/lifecycle "Capability Negotiation"). While an upstream s may
// see is not ready (still starting: a search mode answers initialize at
// once; or failed and retrying) resources and prompts are announced with
// listChanged too, since it may bring them: when it comes up the client is
// told to list them (upstreamReady). Without that a client that connects
// at start, as every stdio client does, never saw an upstream's resources
// or prompts.
func (pt *passthrough) capabilities(s *session) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	ready := pt.upstreamCaps()
	for _, st := range pt.p.ups.Statuses() {
		if _, ok := ready[st.Name]; ok || !pt.visible(s, st.Name) {
			continue
		}
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		break
	}
	for up, c := range ready {
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

// upstreamReady tells the client sessions that resources or prompts changed
// when upstream up's session is a new one (it came up, or was restarted)
// whose initialize result offers them; called with each listing of up.
func (pt *passthrough) upstreamReady(up string) {
	cs, err := pt.p.ups.SessionFor(up)
	if err != nil || cs.InitializeResult() == nil || cs.InitializeResult().Capabilities == nil {
		return
	}
	pt.mu.Lock()
	seen := pt.readyOn[up] == cs
	pt.readyOn[up] = cs
	pt.mu.Unlock()
	if seen {
		return
	}
	c := cs.InitializeResult().Capabilities
	if c.Resources != nil {
		pt.listChanged("resources")
	}
	if c.Prompts != nil {
		pt.listChanged("prompts")
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
