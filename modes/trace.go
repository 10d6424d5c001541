package modes

import "context"

// Spanner is implemented by Envs that trace (the proxy: OpenTelemetry
// spans). StartSpan starts a child of the span in ctx and
// returns the context to pass on and the function that ends the span
// (err marks it failed). With traces off it returns ctx and a function
// that does nothing, allocating nothing.
type Spanner interface {
	StartSpan(ctx context.Context, name string) (context.Context, func(err error))
}

func noEnd(error) {}

// startSpan starts a span through env when it traces.
func startSpan(ctx context.Context, env Env, name string) (context.Context, func(error)) {
	if sp, ok := env.(Spanner); ok {
		return sp.StartSpan(ctx, name)
	}
	return ctx, noEnd
}

// Span names of the modes' own steps.
const (
	spanSandboxRun = "sandbox run"
	spanSearch     = "search"
)

var bridgeSpan = map[string]string{"search": "bridge search", "describe": "bridge describe", "call": "bridge call"}
