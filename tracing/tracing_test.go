package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestOffTracerIsFree(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := tr.Start(ctx, "x", trace.SpanKindInternal)
		End(span, nil)
		_ = c
	})
	if allocs != 0 || tr.On() || TraceID(ctx) != "" {
		t.Fatalf("off tracer allocates %v", allocs)
	}
	if c := tr.Extract(ctx, map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, nil); c != ctx {
		t.Fatal("off tracer extracts")
	}
}

// TestOTLPExport: spans reach an OTLP/HTTP endpoint (protobuf POST to the
// configured URL) with the configured headers, the remote parent from
// _meta kept.
func TestOTLPExport(t *testing.T) {
	var posts atomic.Int32
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			posts.Add(1)
			auth.Store(r.Header.Get("X-Api-Key"))
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	tr, err := New(Config{Endpoint: srv.URL + "/v1/traces", Headers: map[string]string{"X-Api-Key": "k-123"}, SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := tr.Extract(context.Background(), map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, nil)
	ctx, span := tr.Start(ctx, "tools/call x", trace.SpanKindServer)
	if TraceID(ctx) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("trace id %s", TraceID(ctx))
	}
	h := http.Header{}
	tr.Inject(ctx, h)
	if got := h.Get("Traceparent"); len(got) != 55 || got[3:35] != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("traceparent %q", got)
	}
	End(span, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts.Load() == 0 || auth.Load() != "k-123" {
		t.Fatalf("posts %d auth %v", posts.Load(), auth.Load())
	}
}
