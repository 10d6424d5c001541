package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/credentials"
	"github.com/mcp-toolsearch/mcp-toolsearch/policy"
	"github.com/mcp-toolsearch/mcp-toolsearch/ratelimit"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
	"github.com/mcp-toolsearch/mcp-toolsearch/tracing"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// The identity steps of THE call path ((*Proxy).call): a span per
// call with children for policy, approval and the upstream call; the rate
// limits; the per-user credential (with the connect prompt); the audit
// line. With traces, limits, audit and per-user credentials all off each
// step is a nil check (measured: BenchmarkCallPathIdentityOff).

// Meta keys of results the proxy makes.
const (
	// MetaKeyRetryAfterMs is the retry hint (milliseconds) of a call
	// refused by [rate_limits].
	MetaKeyRetryAfterMs = "io.github.mcp-toolsearch/retryAfterMs"
	// MetaKeyConnectURL is the authorization URL of a "connect first" result.
	MetaKeyConnectURL = "io.github.mcp-toolsearch/connectUrl"
)

// startCallSpan starts the span of one call through the call path.
func (p *Proxy) startCallSpan(ctx context.Context, s *session, e *catalog.Entry, via string) (context.Context, trace.Span) {
	if !p.idn.tracer.On() {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := p.idn.tracer.Start(ctx, "call "+e.ID, trace.SpanKindInternal)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("mcp.tool.name", e.Exposed), attribute.String("mcp_toolsearch.tool.id", e.ID),
			attribute.String("mcp_toolsearch.upstream", e.Upstream), attribute.String("mcp_toolsearch.via", via),
			attribute.String("mcp_toolsearch.subject", s.subjectKey()))
	}
	return ctx, span
}

// decideTraced is the policy step, in its own span.
func (p *Proxy) decideTraced(ctx context.Context, s *session, e *catalog.Entry) policy.Decision {
	_, span := p.idn.tracer.Start(ctx, "policy", trace.SpanKindInternal)
	d := s.decide(e)
	if span.IsRecording() {
		span.SetAttributes(attribute.Bool("mcp_toolsearch.allowed", d.Allowed), attribute.String("mcp_toolsearch.rule", d.Rule))
		span.End()
	}
	return d
}

// rateLimited takes a token for the call from every [rate_limits] bucket
// that applies; it returns the blocked result when one is empty.
func (p *Proxy) rateLimited(ctx context.Context, s *session, e *catalog.Entry) *mcp.CallToolResult {
	if p.idn.limiter == nil || resumedCall(ctx, e) {
		return nil
	}
	err := p.idn.limiter.Allow(ctx, s.subjectKey(), e.Upstream, e.ID, e.Exposed)
	if err == nil {
		return nil
	}
	r, ok := errors.AsType[*ratelimit.Refusal](err)
	if !ok { // *ratelimit.Unavailable: the shared store is down, fail closed
		p.idn.limited.WithLabelValues("store").Inc()
		text := fmt.Sprintf("call to %s refused: %s. The upstream %q did not receive it.", e.ID, p.conf().Redact(err.Error()), e.Upstream)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
			Meta: mcp.Meta{MetaKeyBlocked: "rate_limit", MetaKeyRetryAfterMs: int64(1000)}}
	}
	p.idn.limited.WithLabelValues(r.Kind).Inc()
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("rate limited", trace.WithAttributes(attribute.String("mcp_toolsearch.bucket", r.Kind)))
	}
	text := fmt.Sprintf("call to %s refused: %s. The upstream %q did not receive it.", e.ID, err.Error(), e.Upstream)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta: mcp.Meta{MetaKeyBlocked: "rate_limit", MetaKeyRetryAfterMs: ratelimit.RoundUp(r.RetryAfter).Milliseconds()}}
}

// approveTraced is the approval step in its own span, with its decision
// in the audit log.
func (p *Proxy) approveTraced(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string) (*mcp.CallToolResult, error) {
	actx, span := p.idn.tracer.Start(ctx, "approval", trace.SpanKindInternal)
	res, err := p.approve(actx, s, e, args, rule)
	outcome, detail := "allowed", rule
	if err == errHandedOff {
		outcome, detail = "asked", "the question went to the client; its retry continues the call (on any replica)"
	} else if res != nil || err != nil {
		outcome = "blocked"
		if res != nil && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				detail = tc.Text
			}
		}
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.String("mcp_toolsearch.approval", outcome))
		span.End()
	}
	p.idn.audit.Record(audit.Event{Kind: audit.KindApproval, Subject: s.subjectKey(), Session: sessionID(s), Tool: e.ID, Upstream: e.Upstream,
		Outcome: outcome, Detail: p.conf().Redact(detail), TraceID: tracing.TraceID(ctx)})
	return res, err
}

// forwardTraced is the upstream step: a span of kind client, W3C trace
// context passed on (HTTP headers for HTTP upstreams, params._meta for
// all), and, for an upstream with a per-user credential source, the
// user's credential; a user who has not connected it gets the connect
// prompt (connect).
func (p *Proxy) forwardTraced(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage) (*mcp.CallToolResult, error) {
	ctx, span := p.idn.tracer.Start(ctx, "upstream tools/call", trace.SpanKindClient)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("mcp_toolsearch.upstream", e.Upstream), attribute.String("mcp.tool.name", e.Name))
		tr := p.idn.tracer
		sctx := ctx
		ctx = upstream.WithRequestHook(ctx, func(h http.Header) { tr.Inject(sctx, h) })
	}
	res, err := p.forward(ctx, s, e, args)
	if cr, ok := errors.AsType[*credentials.ConnectRequired](err); ok { // no heap pointer per call (errors.As's target escapes)
		res, err = p.connect(ctx, s, e, args, cr)
	} else if err != nil && errors.Is(err, upstream.ErrUnavailable) {
		p.dropUserConn(s, e.Upstream) // a lost per-user session is opened again next time
	}
	if err != nil {
		tracing.End(span, errors.New(p.conf().Redact(err.Error())))
	} else {
		if span.IsRecording() && res != nil && res.IsError {
			span.SetAttributes(attribute.Bool("mcp.tool.is_error", true))
		}
		tracing.End(span, nil)
	}
	return res, err
}

// injectTrace puts the trace context of ctx into an upstream call's
// params._meta (traceparent, tracestate), replacing the client's.
func (p *Proxy) injectTrace(ctx context.Context, params *mcp.CallToolParams) {
	if !p.idn.tracer.On() || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	meta := mcp.Meta{}
	for k, v := range params.Meta {
		meta[k] = v
	}
	p.idn.tracer.InjectMeta(ctx, meta)
	params.Meta = meta
}

// connect handles a user who has not connected an upstream with
// credential source "oauth". A client that supports URL-mode elicitation
// (MCP spec 2025-11-25 client/elicitation, "URL Mode") is sent the
// authorization URL; once the user accepted and finished signing in
// (within auth.connect_wait), the call goes on with the new credential.
// Otherwise the call ends with an isError result naming the URL:
// "connect first".
func (p *Proxy) connect(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, cr *credentials.ConnectRequired) (*mcp.CallToolResult, error) {
	id := s.ident()
	if st, resumed := resumedConnect(ctx, e, args); resumed && id != nil { // resume.go: answered in the retry
		wait := p.conf().Auth.ConnectWait.Duration
		if st.OK && p.idn.creds.Wait(ctx, e.Upstream, id.Subject, wait) {
			return p.forward(ctx, s, e, args)
		}
	} else if s.ss != nil && clientElicitsURL(s.ss) && id != nil {
		msg := fmt.Sprintf("The tool %s needs your own %s account. Open the link to sign in and connect it; the call goes on when you are done.", e.ID, e.Upstream)
		q := &mcp.ElicitParams{Mode: "url", Message: msg, URL: cr.URL, ElicitationID: cr.ElicitationID}
		if p.handOffConnect(ctx, s, e, args, q) {
			return nil, errHandedOff
		}
		p.idn.elicits.Store(cr.ElicitationID, s.ss)
		ectx, cancel := context.WithTimeout(ctx, p.conf().Auth.ConnectWait.Duration)
		defer cancel()
		res, err := askClient(ectx, s, q)
		r, _ := res.(*mcp.ElicitResult)
		switch {
		case err != nil:
			p.log.Info("connect: URL elicitation failed", "upstream", e.Upstream, "err", p.conf().Redact(err.Error()))
		case r != nil && r.Action == "accept" && p.idn.creds.Wait(ectx, e.Upstream, id.Subject, p.conf().Auth.ConnectWait.Duration):
			return p.forward(ctx, s, e, args)
		}
	}
	text := cr.Error()
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta: mcp.Meta{MetaKeyBlocked: "connect", MetaKeyConnectURL: cr.URL}}, nil
}

// clientElicitsURL reports whether the client declared URL-mode elicitation.
func clientElicitsURL(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil && ip.Capabilities.Elicitation.URL != nil
}

// connected is the credentials manager's callback: audit it and tell the
// client whose URL elicitation it was (notifications/elicitation/complete).
func (p *Proxy) connected(up, subject, elicitationID string) {
	p.idn.audit.Record(audit.Event{Kind: audit.KindConnect, Subject: "user:" + subject, Upstream: up, Outcome: "ok"})
	if v, ok := p.idn.elicits.LoadAndDelete(elicitationID); ok {
		ss := v.(*mcp.ServerSession)
		if err := ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: elicitationID}); err != nil {
			p.log.Debug("elicitation complete notification failed", "err", err)
		}
	}
}

// callDone ends the call's span and writes its audit line.
func (p *Proxy) callDone(ctx context.Context, span trace.Span, s *session, e *catalog.Entry, via string, args json.RawMessage, outcome string, ms float64, err error) {
	tracing.EndOutcome(span, outcome)
	if p.idn.audit == nil {
		return
	}
	kind := audit.KindCall
	switch outcome {
	case telemetry.OutcomeBlockedPolicy:
		kind = audit.KindDenied
	case telemetry.OutcomeRateLimited:
		kind = audit.KindLimited
	}
	ev := audit.Event{Kind: kind, Subject: s.subjectKey(), Session: sessionID(s), Tool: e.ID, Upstream: e.Upstream, Via: via,
		Outcome: outcome, DurationMs: ms, TraceID: tracing.TraceID(ctx)}
	if kind != audit.KindDenied { // a denied tool's arguments are not kept: it does not exist for the caller
		ev.Args = p.auditArgs(args)
	}
	if err != nil {
		ev.Detail = p.conf().Redact(err.Error())
	}
	p.idn.audit.Record(ev)
}

func sessionID(s *session) string {
	if s.ss == nil {
		return ""
	}
	return s.ss.ID()
}

// auditDenied writes the audit line of an attempt to call or describe a
// tool the session's policy denies (the client was answered as for an
// unknown tool; session.Denied calls this).
func (p *Proxy) auditDenied(s *session, e *catalog.Entry, via, rule string) {
	if p.idn == nil || p.idn.audit == nil {
		return
	}
	p.idn.audit.Record(audit.Event{Kind: audit.KindDenied, Subject: s.subjectKey(), Session: sessionID(s), Tool: e.ID, Upstream: e.Upstream, Via: via,
		Outcome: telemetry.OutcomeBlockedPolicy, Detail: rule})
}
