package upstream

import (
	"context"
	"net/http"
)

type authKey struct{}
type hookKey struct{}

// WithAuthorization returns ctx for OpenSession (per-user
// credentials): the HTTP session it opens sends, on every request to the
// upstream's origin (initialize, calls, the GET stream, DELETE), the
// Authorization value fn returns for that request's context, instead of a
// configured Authorization header. An error from fn fails the request.
// Only HTTP upstreams use it.
func WithAuthorization(ctx context.Context, fn func(context.Context) (string, error)) context.Context {
	return context.WithValue(ctx, authKey{}, fn)
}

func authorizationFrom(ctx context.Context) func(context.Context) (string, error) {
	fn, _ := ctx.Value(authKey{}).(func(context.Context) (string, error))
	return fn
}

// WithRequestHook returns ctx whose HTTP requests to an upstream (those
// the go-sdk client makes with it, e.g. the POST of a tools/call) are
// passed to fn to add headers first (W3C trace context).
func WithRequestHook(ctx context.Context, fn func(http.Header)) context.Context {
	return context.WithValue(ctx, hookKey{}, fn)
}

func requestHookFrom(ctx context.Context) func(http.Header) {
	fn, _ := ctx.Value(hookKey{}).(func(http.Header))
	return fn
}
