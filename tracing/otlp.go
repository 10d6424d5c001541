//go:build !nootlp

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter is the official OTLP/HTTP (protobuf) trace exporter. It
// accounts for about 1.3 MB of the release binary (its generated protobuf and
// gRPC service code, docs/performance.md); `go build -tags nootlp` leaves it out.
func otlpExporter(cfg Config) (sdktrace.SpanExporter, error) {
	return otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.Endpoint), otlptracehttp.WithHeaders(cfg.Headers))
}
