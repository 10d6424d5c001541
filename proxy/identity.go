package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/credentials"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/ratelimit"
	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
)

// idState is the proxy's identity state: who is calling (the front's
// verifier, per-session identities), per-user upstream credentials and
// sessions, traces, rate limits and the audit log. Every piece is nil
// (off) unless configured; all of it enters through the single call path
// (*Proxy).call and the MCP middleware.
type idState struct {
	jwt     *identity.JWT          // [auth]; nil when off
	creds   *credentials.Manager   // per-user credential sources; nil when none
	users   *userConns             // per-user upstream sessions (userconn.go)
	tracer  *tracing.Tracer        // nil when off
	limiter *ratelimit.Limiter     // nil when no [rate_limits]
	audit   *audit.Writer          // nil when no [audit] file
	limited *prometheus.CounterVec // mcp_toolsearch_rate_limited_total{kind}
	// state is what replicas share ([server] state_store, statestore.Redis)
	// or this process alone keeps (statestore.Memory): connect links, rate
	// limits with a shared store, marks of resumed approvals.
	state statestore.Store
	// resume seals the requestState of approvals any replica can resume
	// (resume.go); nil without a shared state store.
	resume *sealer
	// shares is the session shares' counter in the shared store; nil
	// without one.
	shares *storeShares

	idents sync.Map // *mcp.ServerSession -> *identity.Identity (latest request's)
	// elicits maps a URL elicitation id to the session that got it, for
	// notifications/elicitation/complete.
	elicits sync.Map // string -> *mcp.ServerSession
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// setupIdentity builds the identity pieces from the config. A piece that
// cannot start (an audit log that cannot be opened, a token store that
// does not decrypt) stops New: a bad config never half-starts.
func (p *Proxy) setupIdentity(opts Options) (err error) {
	cfg := p.conf()
	st := &idState{}
	p.idn = st
	defer func() {
		if err != nil {
			_ = st.audit.Close()
			if st.shares != nil {
				st.shares.close()
			}
			if st.state != nil {
				_ = st.state.Close()
			}
		}
	}()
	if st.state, err = p.openStateStore(); err != nil {
		return err
	}
	if st.state.Shared() {
		if st.resume, err = newSealer(cfg.Server.StateStoreKeyBytes()); err != nil {
			return fmt.Errorf("server.state_store_key: %w", err)
		}
		// Session shares and exchange owners across replicas (shares_store.go).
		st.shares = newStoreShares(st.state)
		p.shares.counter = st.shares
		p.exs.owners = &storeOwners{st: st.state}
	}
	if cfg.Auth.Enabled() {
		st.jwt, err = identity.NewJWT(identity.JWTConfig{
			Issuer: cfg.Auth.Issuer, JWKSURL: cfg.Auth.JWKSURL, Audiences: cfg.Auth.Audiences, Scopes: cfg.Auth.Scopes,
			UserClaim: cfg.Auth.UserClaim, GroupsClaim: cfg.Auth.GroupsClaim, Algorithms: cfg.Auth.Algorithms, ClockSkew: cfg.Auth.ClockSkew.Duration,
		})
		if err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	var ups []credentials.Upstream
	for _, u := range cfg.EnabledUpstreams() {
		if !u.PerUser() {
			continue
		}
		c := u.Credential
		ups = append(ups, credentials.Upstream{Name: u.Name, Source: c.Source, Audience: c.Audience, TokenURL: c.TokenURL,
			AuthorizeURL: c.AuthorizeURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: c.Scopes})
	}
	if len(ups) > 0 {
		var store *credentials.Store
		switch {
		case st.state.Shared() && len(cfg.Auth.TokenStoreKeyBytes()) == 32:
			if store, err = credentials.NewSharedStore(st.state, cfg.Auth.TokenStoreKeyBytes()); err != nil {
				return fmt.Errorf("auth.token_store_key: %w", err)
			}
		case cfg.Auth.TokenStore != "":
			if store, err = credentials.OpenStore(cfg.Auth.TokenStore, cfg.Auth.TokenStoreKeyBytes()); err != nil {
				return fmt.Errorf("auth.token_store: %w", err)
			}
		}
		st.creds, err = credentials.New(credentials.Options{Upstreams: ups, Store: store, States: st.state,
			CallbackURL: p.resourceURL(credentials.CallbackPath), OnConnected: p.connected})
		if err != nil {
			return err
		}
		st.users = newUserConns()
	}
	tc := tracing.Config{Endpoint: cfg.Telemetry.TracesEndpoint, Headers: cfg.Telemetry.TracesHeaders, SampleRatio: cfg.Telemetry.TracesSampleRatio, Version: Version}
	if opts.Tracing != nil {
		tc = *opts.Tracing
		tc.Version = Version
	}
	if st.tracer, err = tracing.New(tc); err != nil {
		return fmt.Errorf("telemetry.traces_endpoint: %w", err)
	}
	st.limiter = ratelimit.New(p.rateLimitConfig(), st.state)
	st.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_toolsearch_rate_limited_total",
		Help: "Tool calls refused by [rate_limits], by the kind of bucket that was empty (subject, upstream, tool), or store when a shared state store could not be reached (refused, fail closed).",
	}, []string{"kind"})
	for _, k := range []string{"subject", "upstream", "tool", "store"} {
		st.limited.WithLabelValues(k)
	}
	if err := p.metrics.Registry().Register(st.limited); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if cfg.Audit.File != "" {
		if st.audit, err = audit.Open(cfg.Audit.File); err != nil {
			return fmt.Errorf("audit.file: %w", err)
		}
		// A start line means a proxy that serves clients began writing
		// (audit.KindStart). A one-shot command (check, list, call, …)
		// serves none: it writes no start line, and what it does write
		// (a `call`'s call line) says via "cli" (every
		// `check` and `list` read as a proxy start).
		if !opts.OneShot {
			st.audit.Record(audit.Event{Kind: audit.KindStart, Detail: "mcp-toolsearch " + Version + " started; config " + cfg.Path})
		}
	}
	return nil
}

// openStateStore opens [server] state_store, or a Memory store without
// one. A store that cannot be reached at start is no error (replicas may
// start before it): it is logged, and what needs it fails closed until it
// answers.
func (p *Proxy) openStateStore() (statestore.Store, error) {
	ss := p.conf().Server.StateStore
	if !ss.Shared() {
		return statestore.NewMemory(0), nil
	}
	failed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_toolsearch_state_store_errors_total",
		Help: "Operations on the shared state store ([server] state_store) that could not reach it, by operation; what needed them failed closed.",
	}, []string{"op"})
	if err := p.metrics.Registry().Register(failed); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	r, err := statestore.OpenRedis(statestore.RedisOptions{URL: ss.StateStoreURL, CAFile: ss.StateStoreCA,
		OnError: func(op string) { failed.WithLabelValues(op).Inc() }})
	if err != nil {
		return nil, fmt.Errorf("server.state_store: %s", p.conf().Redact(err.Error()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), statestore.DefaultTimeout)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		p.log.Warn("state store: not reachable yet; rate-limited and per-user calls are refused until it is", "store", r.Where(), "err", p.conf().Redact(err.Error()))
	} else {
		p.log.Info("state store: connected", "store", r.Where())
	}
	return r, nil
}

// rateLimitConfig converts [rate_limits]; per_tool keys are policy entries
// (names, ids, globs, groups) matched with package policy.
func (p *Proxy) rateLimitConfig() ratelimit.Config {
	rl := p.conf().RateLimits
	var c ratelimit.Config
	lim := func(b *config.Bucket) ratelimit.Limit { return ratelimit.Limit{Rate: b.Rate, Burst: b.Burst} }
	if rl.PerSubject != nil {
		c.PerSubject = lim(rl.PerSubject)
	}
	if len(rl.PerUpstream) > 0 {
		c.PerUpstream = map[string]ratelimit.Limit{}
		for k, b := range rl.PerUpstream {
			c.PerUpstream[k] = lim(b)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rl.PerTool)) {
		m, err := policy.Compile(policy.Spec{Upstreams: p.conf().PolicySpec().Upstreams, Groups: p.conf().Groups, Tools: policy.Rules{Allow: []string{key}}})
		if err != nil {
			p.log.Warn("rate_limits.per_tool: entry ignored", "entry", key, "err", err)
			continue
		}
		c.PerTool = append(c.PerTool, ratelimit.Rule{Key: key, Limit: lim(rl.PerTool[key]), Match: func(id, exposed string) bool {
			e := p.catalog().Snapshot().ByID(id)
			if e == nil {
				return false
			}
			return m.Decide(policy.Subject{}, toolOf(e)).Allowed
		}})
	}
	return c
}

// closeIdentity flushes traces, ends per-user sessions and closes the
// audit log.
func (p *Proxy) closeIdentity(ctx context.Context) {
	if p.idn == nil {
		return
	}
	p.idn.users.closeAll()
	if p.idn.shares != nil {
		p.idn.shares.close()
	}
	if p.idn.state != nil {
		_ = p.idn.state.Close()
	}
	if err := p.idn.tracer.Shutdown(ctx); err != nil {
		p.log.Warn("traces: flushing at shutdown failed", "err", p.conf().Redact(err.Error()))
	}
	if err := p.idn.audit.Close(); err != nil {
		p.log.Error("audit log: write failed", "err", err)
	}
}

// ident is the verified identity of the session (nil when none).
func (s *session) ident() *identity.Identity {
	if s.fixedID != nil {
		return s.fixedID
	}
	if s.ss == nil || s.p.idn == nil {
		return nil
	}
	if v, ok := s.p.idn.idents.Load(s.ss); ok {
		return v.(*identity.Identity)
	}
	return nil
}

// view is the policy view of the session's subject: client name and
// endpoint, plus the verified user, groups and scopes (policy/identity.go).
func (s *session) view() *policy.View {
	if s.memo != nil {
		return s.memo.memoView(s) // viewmemo.go
	}
	return s.p.subjectView(s.client, s.endpoint, s.ident())
}

// subjectView is the policy view of a client named client (its
// self-declared clientInfo.name) on endpoint ("" main) with verified
// identity id (nil when none).
func (p *Proxy) subjectView(client, endpoint string, id *identity.Identity) *policy.View {
	return p.pol().View(subjectOf(client, endpoint, id))
}

// subjectOf is the policy subject of a client named client on endpoint
// with verified identity id (nil when none).
func subjectOf(client, endpoint string, id *identity.Identity) policy.Subject {
	sub := policy.Subject{ClientName: client, Endpoint: endpoint}
	if id != nil {
		sub.User, sub.Groups, sub.Scopes = id.Subject, id.Groups, id.Scopes
	}
	return sub
}

// subjectKey names who calls, for rate limits and the audit log: the
// verified user ("user:alice"), else the client's self-declared name on
// its endpoint ("client:cursor@team-a"; "@main" for the main endpoint).
func (s *session) subjectKey() string {
	if k := s.ident().Key(); k != "" {
		return k
	}
	if s.ss == nil {
		return "cli"
	}
	ep := s.endpoint
	if ep == "" {
		ep = "main"
	}
	return "client:" + s.client + "@" + ep
}

// identityMiddleware runs before every other: it records the request's
// verified identity for its session and starts the request's span (child
// of the trace context in params._meta or the HTTP headers). On the
// stateless transport every request has a ServerSession of its own, so
// the record is dropped when the request returns (one
// entry, ~5 KB, was kept per authenticated 2026-07-28 request forever);
// the proxy's session for it holds the identity from then on (fixedID).
func (p *Proxy) identityMiddleware(transport string) mcp.Middleware {
	stateless := transport == transportStateless
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return p.identityHandler(next, stateless)
	}
}

func (p *Proxy) identityHandler(next mcp.MethodHandler, stateless bool) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			if id := identityOf(req); id != nil {
				p.idn.idents.Store(ss, id)
				if stateless {
					defer p.idn.idents.Delete(ss)
				}
			}
		}
		tr := p.idn.tracer
		if !tr.On() || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		var meta map[string]any
		if pm, ok := req.GetParams().(interface{ GetMeta() map[string]any }); ok && !isNilPointer(pm) {
			meta = pm.GetMeta()
		}
		var header map[string][]string
		if ex := req.GetExtra(); ex != nil {
			header = ex.Header
		}
		ctx = tr.Extract(ctx, meta, header)
		name := method
		if cr, ok := req.(*mcp.CallToolRequest); ok && cr.Params != nil {
			name += " " + cr.Params.Name
		}
		ctx, span := tr.Start(ctx, name, trace.SpanKindServer)
		if span.IsRecording() {
			span.SetAttributes(attribute.String("mcp.method.name", method))
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				span.SetAttributes(attribute.String("mcp.session.id", ss.ID()))
			}
			if id := identityOf(req); id != nil && id.Subject != "" {
				span.SetAttributes(attribute.String("enduser.id", id.Subject))
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			tracing.End(span, fmt.Errorf("%s", p.conf().Redact(err.Error())))
		} else {
			tracing.End(span, nil)
		}
		return res, err
	}
}

// forgetSession drops what idState keeps for a session that ended.
func (p *Proxy) forgetSession(ss *mcp.ServerSession) {
	if p.idn != nil {
		p.idn.idents.Delete(ss)
	}
}

// AuditReload records a config reload in the audit log: applied or refused, with what changed or why. The CLI
// calls it for a file it refuses before Reload (invalid config: the
// problems, as logged); Reload calls it for the rest.
func (p *Proxy) AuditReload(applied bool, detail string) {
	outcome := "applied"
	if !applied {
		outcome = "refused"
	}
	p.idn.audit.Record(audit.Event{Kind: audit.KindReload, Outcome: outcome, Detail: p.conf().Redact(detail)})
}

// auditArgs are a call's arguments for the audit log: only with [audit]
// arguments = true, with secret keys and known secret values hidden.
func (p *Proxy) auditArgs(args json.RawMessage) json.RawMessage {
	if !p.conf().Audit.Arguments || len(args) == 0 {
		return nil
	}
	return redact.JSON(args, p.conf().Redact)
}

// StartSpan implements modes.Spanner: the sandbox run, bridge calls and
// searches of this session's requests get spans.
func (s *session) StartSpan(ctx context.Context, name string) (context.Context, func(error)) {
	if !s.p.idn.tracer.On() {
		return ctx, noSpanEnd
	}
	ctx, span := s.p.idn.tracer.Start(ctx, name, trace.SpanKindInternal)
	return ctx, func(err error) {
		if err != nil {
			err = errors.New(s.p.conf().Redact(err.Error()))
		}
		tracing.End(span, err)
	}
}

func noSpanEnd(error) {}

// keepIdentity makes a reload keep the running [auth], [rate_limits],
// [audit] and each upstream's [credential] (they are built once, at
// start), naming those that changed in rep.NeedsRestart. next must be the
// reload's own copy: its Upstreams map is edited.
func (p *Proxy) keepIdentity(prev, next *config.Config, rep *ReloadReport) {
	if !reflect.DeepEqual(prev.Auth, next.Auth) {
		rep.NeedsRestart = append(rep.NeedsRestart, "auth")
	}
	next.Auth = prev.Auth
	if !reflect.DeepEqual(prev.RateLimits, next.RateLimits) {
		rep.NeedsRestart = append(rep.NeedsRestart, "rate_limits")
	}
	next.RateLimits = prev.RateLimits
	if !reflect.DeepEqual(prev.Audit, next.Audit) {
		rep.NeedsRestart = append(rep.NeedsRestart, "audit")
	}
	next.Audit = prev.Audit
	for name, u := range next.Upstreams {
		old, ok := prev.Upstreams[name]
		if !ok && u.PerUser() {
			// A new upstream with a per-user credential source would be
			// served with its static headers to everyone until a restart
			// builds its credential source: it waits for the restart.
			rep.NeedsRestart = append(rep.NeedsRestart, "upstreams."+name+" (added, per-user credential)")
			delete(next.Upstreams, name)
			continue
		}
		var was *config.Credential
		if ok {
			was = old.Credential
		}
		if !reflect.DeepEqual(was, u.Credential) {
			rep.NeedsRestart = append(rep.NeedsRestart, "upstreams."+name+".credential")
			nu := *u
			nu.Credential = was
			next.Upstreams[name] = &nu
		}
	}
}

// String summarises a reload for the log and the audit line.
func (r ReloadReport) String() string {
	var parts []string
	add := func(what string, names []string) {
		if len(names) > 0 {
			parts = append(parts, what+" "+strings.Join(names, ","))
		}
	}
	add("added", r.Added)
	add("removed", r.Removed)
	add("changed", r.Changed)
	if r.Policy {
		parts = append(parts, "policy changed")
	}
	if r.ModeChanged {
		parts = append(parts, "mode "+r.Mode)
	}
	add("needs restart:", r.NeedsRestart)
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}
