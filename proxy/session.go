package proxy

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// session is the proxy's state for one client session: who the client is
// (clientInfo.name from initialize, and the endpoint it came through) and
// its view of the catalog. It implements modes.Env.
type session struct {
	p  *Proxy
	ss *mcp.ServerSession
	// fixedID is the verified identity of a stateless session, taken when
	// the session was made (ephemeralSession): idState keeps a stateless
	// request's identity only while the request runs (identityMiddleware),
	// and a call it started may outlive it (exchange.go).
	fixedID  *identity.Identity
	endpoint string
	client   string
	ts       *telemetry.Session // nil for CLI use (methods are nil-safe)

	// life ends when the session does (any reason); requests in flight
	// are bound to it (bind) so that they are cancelled then.
	life context.Context
	end  context.CancelFunc

	ex *exchange // exchange.go: set on the copy a 2026-07-28 call runs with
	// base is the session this is a copy of (the copy a 2026-07-28 call
	// runs with), nil on the session itself.
	base *session
	// surface is what the client last saw of its tools (listchanged.go);
	// shared by the copies of the session.
	surface *surfaceMark
	// tasks are the tasks this session created (tasks.go); nil for
	// sessions that cannot hold tasks (stateless, CLI). Shared by copies.
	tasks *taskBook

	// flags: what the stateful HTTP fast path asks of the session
	// (internal/front); shared by copies, nil on stateless sessions.
	flags *front.SessionFlags

	// memo keeps the policy view and the last decision between calls
	// (viewmemo.go); shared by copies, nil where a session lives for one
	// request or command (stateless, CLI).
	memo *viewMemo
}

// Snapshot implements modes.Env.
func (s *session) Snapshot() *catalog.Snapshot {
	// Per-client upstream sessions extend the shared catalog (passthrough_relay.go).
	if snap := s.p.pt.sessionSnapshot(s); snap != nil {
		return snap
	}
	return s.p.catalog().Snapshot()
}

// SearchIndex implements modes.SearchIndexer: an index over only what this
// session's policy allows (catalog.ViewIndexes).
func (s *session) SearchIndex(snap *catalog.Snapshot) *catalog.Index {
	return s.p.viewIx.Index(policyView{s.view()}, snap)
}

// Allowed implements modes.Env: this session's policy (SPEC §6).
func (s *session) Allowed(e *catalog.Entry) bool { return s.allowed(e) }

// allowed reads the session's last decision (viewmemo.go) but does not
// replace it: it runs for every entry of a listing.
func (s *session) allowed(e *catalog.Entry) bool {
	if s.memo != nil {
		return s.memo.memoDecide(s.view(), e, false).Allowed
	}
	return s.view().Allowed(toolOf(e))
}

// decide is the decision for a call (callpath_identity.go decideTraced):
// kept as the session's last, which the next call's resolveCallable
// (allowed) and decide read when they name the same tool.
func (s *session) decide(e *catalog.Entry) policy.Decision {
	if s.memo != nil {
		return s.memo.memoDecide(s.view(), e, true)
	}
	return s.view().Decide(toolOf(e))
}

// Call implements modes.Env: the single call path.
func (s *session) Call(ctx context.Context, e *catalog.Entry, args json.RawMessage, via string) (*mcp.CallToolResult, error) {
	return s.p.call(ctx, s, e, args, via)
}

// CallEnveloped implements modes.EnvelopeCaller: tool_call's one call
// through the single call path, with the upstream's result kept raw where
// nothing on the path needs it decoded (rawslot.go withInnerRawSlot; p.call
// decodes it for output validation and redaction as for direct calls).
// A plain raw result becomes tool_call's answer as bytes
// (front.AppendEnvelope), handed to the front through the client call's
// raw-result slot (answerRaw); anything else is decoded for modes to
// envelope.
func (s *session) CallEnveloped(ctx context.Context, e *catalog.Entry, args json.RawMessage, hit catalog.Hit) (*mcp.CallToolResult, bool, error) {
	inner, slot := withInnerRawSlot(ctx)
	res, err := s.p.call(inner, s, e, args, modes.ViaTool)
	if err != nil || slot.JSON == nil {
		return res, false, err
	}
	bp := front.EnvelopeBufs.Get().(*[]byte)
	defer front.PutEnvelopeBuf(bp)
	env, ok := front.AppendEnvelope((*bp)[:0], hit, slot.JSON)
	if !ok {
		var full mcp.CallToolResult
		if err := json.Unmarshal(slot.JSON, &full); err != nil {
			if ierr, ok := modes.AsInvalidResult(e.Upstream, err); ok {
				return nil, false, ierr
			}
			return nil, false, err
		}
		return &full, false, nil
	}
	*bp = env[:0] // keep a grown buffer
	if s.answerRaw(ctx, front.ToolCallAnswer(env, res.IsError)) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, IsError: res.IsError}, true, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(env)}},
		StructuredContent: json.RawMessage(bytes.Clone(env)), IsError: res.IsError}, true, nil
}

// answerRaw makes result, tool_call's whole result as JSON, the answer to
// the client's tools/call through that call's raw-result slot (server.go
// rawSlotFor; the exchange's for a 2026-07-28 client, stamped when
// written), so the front writes it as it is (front.RawResult). false
// where the call has no such slot, inside a call made for the client by
// the proxy's own tools (innerRawSlot), and for a task-augmented call
// (tasks.go keeps its own reading of the slot).
func (s *session) answerRaw(ctx context.Context, result json.RawMessage) bool {
	slot := rawSlotFrom(ctx)
	if slot == nil || innerRawSlot(ctx) != nil || taskCallFrom(ctx) != nil {
		return false
	}
	slot.JSON, slot.Answer, slot.Plain = result, true, false // read after the call returned
	slot.DropRecords()                                       // not the transport's any more
	return true
}

// Denied implements modes.DeniedRecorder: an attempt
// to describe or call a tool this session's policy denies. The client was
// answered as for an unknown tool (SPEC §6); the session log gets a call
// record with outcome "denied" and the rule, the proxy's log a debug line
// naming the client and the session.
func (s *session) Denied(e *catalog.Entry, ref, via string) {
	d := s.decide(e)
	s.ts.Call(telemetry.CallRecord{ID: e.ID, Upstream: e.Upstream, Trusted: e.Trusted, Mode: s.p.surf().Mode(),
		ViaBridge: via == modes.ViaBridge, Outcome: telemetry.OutcomeDenied, Rule: d.Rule})
	s.p.log.Debug("denied", "id", e.ID, "ref", bounded(ref, 200), "via", via, "rule", d.Rule, "client", s.client, "session", s.id())
	s.p.auditDenied(s, e, via, d.Rule) // the audit log
}

// id is the client session's id ("" for the CLI).
func (s *session) id() string {
	if s.ss == nil {
		return ""
	}
	return s.ss.ID()
}

// Searched implements modes.Env.
func (s *session) Searched(query string, hits int, via string) {
	s.ts.Search(s.p.surf().Mode(), query, hits, via == modes.ViaBridge)
}

// Described implements modes.Env.
func (s *session) Described(id string, found bool, via string) {
	s.ts.Describe(s.p.surf().Mode(), id, found, via == modes.ViaBridge)
}

// CodeRan implements modes.CodeRunRecorder.
func (s *session) CodeRan(out *modes.CodeOutput) {
	t := out.Telemetry
	s.ts.CodeRun(t.DurationMs, out.OK, out.TimedOut, t.SearchCount, t.DescribeCount, t.CallCount)
}

// sessionFor returns the proxy's state for ss, creating it on first use.
// The telemetry session starts here, with the client's name and the
// catalog it can see.
func (p *Proxy) sessionFor(ss *mcp.ServerSession, endpoint, transport string) *session {
	if transport == transportStateless {
		return p.ephemeralSession(ss, endpoint) // stateless.go
	}
	p.mu.Lock()
	if s, ok := p.sessions[ss]; ok {
		p.mu.Unlock()
		return s
	}
	s := &session{p: p, ss: ss, endpoint: endpoint, surface: &surfaceMark{}, tasks: &taskBook{}, flags: &front.SessionFlags{}, memo: &viewMemo{}}
	s.life, s.end = context.WithCancel(context.Background())
	delete(p.reserved, ss)
	info := telemetry.SessionInfo{ID: ss.ID(), Transport: transport, Endpoint: endpoint, Mode: p.surf().Mode()}
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		s.client = ip.ClientInfo.Name
		info.ClientName, info.ClientVersion = ip.ClientInfo.Name, ip.ClientInfo.Version
	}
	// The telemetry session is set before the session is in p.sessions:
	// whoever finds it there (another request, the start's settling,
	// recordCatalog) finds it whole.
	s.ts = p.rec.StartSession(info)
	p.sessions[ss] = s
	p.mu.Unlock()
	s.recordCatalog()
	go func() {
		_ = ss.Wait()
		if transport == transportStateful {
			p.hsess.Drop(ss.ID())
		}
		p.forgetSession(ss) // identity.go
		p.sessionGone(s)
	}()
	return s
}

// recordCatalog writes the catalog the session may see to the session log
// (counts per upstream, trusted or not): at the session's start, and again
// when the upstreams still starting then have settled (proxy.go
// checkPolicyWhenSettled), since the search modes answer clients before.
func (s *session) recordCatalog() {
	byUp := map[string]int{}
	total, trusted := 0, 0
	for _, e := range s.p.catalog().Snapshot().Entries {
		if s.allowed(e) {
			total++
			byUp[e.Upstream]++
			if e.Trusted {
				trusted++
			}
		}
	}
	s.ts.Catalog(total, byUp, trusted, total-trusted)
}
