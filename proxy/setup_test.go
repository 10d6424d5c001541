package proxy

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// The one set-up of a started proxy for this package's tests (before, each
// of the exchange, listen, stateless, subscribe, identity and approval tests
// parsed, created, started and closed its own).

// startProxyIn parses text as dir/config.toml (relative paths in it resolve
// against dir) with getenv as the environment (nil: no variable is set),
// creates the proxy with opts, starts it (bounded by 30 s) and closes it
// when the test ends; a failure at any step fails the test with the config
// text. Without opts.Logger, logs go to stderr at debug level under -v,
// else nowhere.
func startProxyIn(t testing.TB, dir, text string, getenv func(string) (string, bool), opts Options) *Proxy {
	t.Helper()
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	cfg, err := config.Parse([]byte(text), filepath.Join(dir, "config.toml"), getenv)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, text)
	}
	if opts.Logger == nil {
		opts.Logger = testLogger()
	}
	p, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// startProxyText is startProxyIn in a fresh temporary folder with no
// environment and default options.
func startProxyText(t testing.TB, text string) *Proxy {
	t.Helper()
	return startProxyIn(t, t.TempDir(), text, nil, Options{})
}

// frontURL serves p's HTTP front (Handler(nil)) on a test server, closed
// when the test ends (before the proxy: cleanups run last-in first-out),
// and returns its /mcp URL.
func frontURL(t testing.TB, p *Proxy) string {
	t.Helper()
	srv := httptest.NewServer(p.Handler(nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// testLogger writes the proxy's log to stderr at debug level under -v,
// else nowhere.
func testLogger() *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler) // no formatting of lines nobody reads
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
