// Package tracing is the proxy's OpenTelemetry traces ([telemetry]
// traces_endpoint, docs/telemetry.md): one span per client request, with
// child spans for search, policy, approval, the sandbox run, each bridge
// call and each upstream call, exported over OTLP/HTTP.
//
// Off by default. A nil *Tracer is the "off" tracer: Start returns the
// context unchanged and a non-recording span without allocating, so the
// call path pays a nil check per span (measured in
// proxy/trace_bench_test.go; figures in docs/performance.md).
//
// W3C trace context (https://www.w3.org/TR/trace-context/) is taken from
// the client's request (`params._meta.traceparent`/`tracestate`, else the
// HTTP headers of the request that carried it) and passed on to upstreams:
// as HTTP headers to HTTP upstreams and in `params._meta` of the upstream
// tools/call for every upstream.
//
// Trust: trace context from clients is accepted as a parent only (it can
// make the proxy's spans join a client's trace, nothing more); span
// attributes never carry argument values or secrets (tool names, upstream
// names, outcomes and the subject only).
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Config configures traces.
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL, e.g.
	// "http://127.0.0.1:4318/v1/traces". Empty with a nil Exporter: off.
	Endpoint string
	// Headers are sent with every export (e.g. an API key); secrets.
	Headers map[string]string
	// SampleRatio is the share of new traces kept (0..1); traces whose
	// parent (from the client) is sampled are always kept.
	SampleRatio float64
	// ServiceName and Version name the process in the traces.
	ServiceName, Version string
	// Exporter, when set, replaces the OTLP exporter (tests); with Sync
	// each span is exported when it ends instead of in batches.
	Exporter sdktrace.SpanExporter
	Sync     bool
}

// Tracer starts spans. nil is the off tracer.
type Tracer struct {
	tp   *sdktrace.TracerProvider
	t    trace.Tracer
	prop propagation.TextMapPropagator
}

// New returns the tracer for cfg, or nil (off) when cfg names no
// endpoint and no exporter.
func New(cfg Config) (*Tracer, error) {
	exp := cfg.Exporter
	if exp == nil {
		if cfg.Endpoint == "" {
			return nil, nil
		}
		var err error
		exp, err = otlpExporter(cfg) // otlp.go; a build with -tags nootlp has none
		if err != nil {
			return nil, fmt.Errorf("OTLP exporter for %s: %w", cfg.Endpoint, err)
		}
	}
	name := cfg.ServiceName
	if name == "" {
		name = "mcp-toolsearch"
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(cfg.Version))
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	}
	if cfg.Sync {
		opts = append(opts, sdktrace.WithSyncer(exp))
	} else {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracer{tp: tp, t: tp.Tracer("github.com/mcp-toolsearch/mcp-toolsearch"), prop: propagation.TraceContext{}}, nil
}

// On reports whether traces are recorded.
func (t *Tracer) On() bool { return t != nil }

// Start starts a span named name as a child of the span in ctx. With the
// off tracer it returns ctx and the (non-recording) span already in ctx.
// Set attributes only when span.IsRecording(), so that the off path builds
// none.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.t.Start(ctx, name, trace.WithSpanKind(kind))
}

// End ends span, marking it failed with err's text when err is non-nil
// (the text must already be redacted).
func End(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// EndOutcome ends span with an "outcome" attribute; outcomes other than
// "ok" mark it failed.
func EndOutcome(span trace.Span, outcome string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("mcp_toolsearch.outcome", outcome))
	if outcome != "ok" {
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// metaCarrier reads and writes W3C trace context keys in an MCP `_meta`
// object (string values only).
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string {
	if v, ok := m[k].(string); ok {
		return v
	}
	return ""
}
func (m metaCarrier) Set(k, v string) { m[k] = v }
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Extract returns ctx with the remote parent found in meta
// (`traceparent`, `tracestate`), else in header; ctx unchanged when
// neither holds a valid one or the tracer is off.
func (t *Tracer) Extract(ctx context.Context, meta map[string]any, header http.Header) context.Context {
	if t == nil {
		return ctx
	}
	if meta != nil {
		if c := t.prop.Extract(ctx, metaCarrier(meta)); trace.SpanContextFromContext(c).IsValid() {
			return c
		}
	}
	if header != nil {
		return t.prop.Extract(ctx, propagation.HeaderCarrier(header))
	}
	return ctx
}

// Inject writes the trace context of ctx's span into header.
func (t *Tracer) Inject(ctx context.Context, header http.Header) {
	if t == nil {
		return
	}
	t.prop.Inject(ctx, propagation.HeaderCarrier(header))
}

// InjectMeta writes the trace context of ctx's span into meta
// (`traceparent`, `tracestate`), replacing what the client sent.
func (t *Tracer) InjectMeta(ctx context.Context, meta map[string]any) {
	if t == nil {
		return
	}
	t.prop.Inject(ctx, metaCarrier(meta))
}

// TraceID is the trace id of ctx's span ("" when none).
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// Shutdown flushes pending spans and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	err := t.tp.Shutdown(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
