//go:build nootlp

package tracing

import (
	"errors"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter: this binary was built with -tags nootlp (no OTLP exporter).
func otlpExporter(Config) (sdktrace.SpanExporter, error) {
	return nil, errors.New("this binary was built without the OTLP exporter (-tags nootlp); build without that tag to export traces")
}
