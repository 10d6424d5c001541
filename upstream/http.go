package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// sseFraming is the room past max_message_bytes an event of the legacy
// HTTP+SSE transport gets for its framing ("event: message", "data: " and
// line ends, an id).
const sseFraming = 4 << 10

// maxIdleConnsPerUpstream is how many idle connections to one HTTP
// upstream are kept for reuse (net/http's default is 2).
const maxIdleConnsPerUpstream = 64

// httpTransport builds the client transport for an HTTP upstream:
// Streamable HTTP (transport "" or "streamable-http", MCP spec 2025-11-25
// basic/transports; the proxy's own, httpconn.go) or the legacy HTTP+SSE
// transport ("sse", spec 2024-11-05; the go-sdk's). Each upstream gets its own http.Transport (closed on
// teardown) and an http.Client without Timeout: deadlines come from the
// contexts of connect and calls. The configured headers are set on every
// request to the configured origin; redirects are checked (redirect.go).
func httpTransport(u *config.Upstream, log *slog.Logger, maxBytes int) (mcp.Transport, *http.Transport, error) {
	return httpTransportAuth(u, log, maxBytes, nil)
}

// httpTransportAuth is httpTransport whose requests to the configured
// origin carry the Authorization value auth returns (a per-user
// session, see WithAuthorization); nil auth keeps the configured headers.
func httpTransportAuth(u *config.Upstream, log *slog.Logger, maxBytes int, auth func(context.Context) (string, error)) (mcp.Transport, *http.Transport, error) {
	parsed, err := url.Parse(u.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("url %q: %w", u.URL, err)
	}
	if parsed.Scheme != "http" && parsed.Scheme != "https" {
		return nil, nil, fmt.Errorf("url %q: scheme must be http or https", u.URL)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Keep a connection for each concurrent call: net/http keeps 2 idle
	// per host by default, so with more calls in flight most of them
	// opened a new TCP (and TLS) connection and closed it after.
	base.MaxIdleConnsPerHost = maxIdleConnsPerUpstream
	client := &http.Client{Transport: &headerRoundTripper{base: base, headers: u.Headers, target: parsed, auth: auth},
		CheckRedirect: guardRedirects(base, parsed, u.AllowInternalRedirects)} // redirect.go
	switch u.Transport {
	case "", "streamable-http", "streamable":
		return &streamableTransport{url: u.URL, client: client, log: log, maxBytes: maxBytes}, base, nil
	case "sse":
		// The legacy HTTP+SSE transport stays the go-sdk's (deprecated in
		// the spec since 2025-03-26): the faults the proxy's own transports
		// contain still end such a session.
		// The cap holds while an event is read (eventCap, sse.go; the
		// go-sdk's own bound, MaxEventSize, is 16 MiB by default whatever
		// the cap, and it ends the session without saying why): past it
		// the stream fails, the session ends with a WARN naming the cap,
		// and the manager connects again. The prefix tripper puts a reverse
		// proxy's path prefix before the advertised message endpoint.
		client.Transport = &ssePrefixRoundTripper{base: eventCapTripper{base: client.Transport, max: maxBytes + sseFraming, log: log}, target: parsed, prefix: u.SSEPathPrefix}
		return &mcp.SSEClientTransport{Endpoint: u.URL, HTTPClient: client, MaxEventSize: maxBytes + 2*sseFraming}, base, nil
	default:
		return nil, nil, fmt.Errorf("transport %q: want \"streamable-http\" or \"sse\"", u.Transport)
	}
}

// headerRoundTripper sets fixed headers on every request (on a clone, as
// http.RoundTripper must not modify the request).
type headerRoundTripper struct {
	base    http.RoundTripper
	headers map[string]string
	target  *url.URL // the configured url: headers go only to its origin (redirect.go)
	// auth, when set, gives the Authorization value of each request to the
	// target's origin (a per-user session, credential.go).
	auth func(context.Context) (string, error)
}

func (h *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	hook := requestHookFrom(req.Context()) // credential.go: trace context
	same := sameOrigin(req.URL, h.target)
	if hook == nil && (!same || len(h.headers) == 0 && h.auth == nil) {
		return h.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	if same {
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
		if h.auth != nil {
			v, err := h.auth(req.Context())
			if err != nil {
				return nil, err
			}
			r.Header.Set("Authorization", v)
		}
	}
	if hook != nil {
		hook(r.Header)
	}
	return h.base.RoundTrip(r)
}

// httpTransport is httpTransportAuth for cfg (c.cfg, or it as SSE) with
// the manager's WrapHTTP hook, authorized as ctx says (credential.go).
func (c *conn) httpTransport(ctx context.Context, cfg *config.Upstream) (mcp.Transport, *http.Transport, error) {
	t, tr, err := httpTransportAuth(cfg, c.log, c.m.opts.MaxMessageBytes, authorizationFrom(ctx))
	if err != nil {
		return nil, nil, err
	}
	if wrap := c.m.opts.WrapHTTP; wrap != nil {
		switch ht := t.(type) {
		case *streamableTransport:
			ht.client.Transport = wrap(c.name, ht.client.Transport)
		case *mcp.StreamableClientTransport:
			ht.HTTPClient.Transport = wrap(c.name, ht.HTTPClient.Transport)
		case *mcp.SSEClientTransport:
			ht.HTTPClient.Transport = wrap(c.name, ht.HTTPClient.Transport)
		}
	}
	return t, tr, nil
}

// ssePrefixRoundTripper puts a reverse proxy's path prefix before the
// message endpoint a legacy SSE server advertises as an absolute path
// ("/greeter1?sessionid=…"): the go-sdk client resolves it against the
// url's host, which drops a prefix the server does not know
// (http://gw/tools/greeter1 → http://gw/greeter1: 404). Only POSTs to the
// url's origin whose path lacks the prefix are rewritten. The prefix is
// sse_path_prefix, or, unset, what is left of url's path before the
// advertised path when that path is its end (the go-sdk's SSE handler,
// supergateway with its message path under the SSE one).
type ssePrefixRoundTripper struct {
	base   http.RoundTripper
	target *url.URL
	prefix string
}

func (s *ssePrefixRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !sameOrigin(req.URL, s.target) {
		return s.base.RoundTrip(req)
	}
	p := req.URL.Path
	prefix := s.prefix
	if prefix == "" {
		if t := s.target.Path; len(p) > 1 && strings.HasPrefix(p, "/") && len(t) > len(p) && strings.HasSuffix(t, p) {
			prefix = t[:len(t)-len(p)]
		}
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/") {
		return s.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Path = prefix + p
	r.URL.RawPath = ""
	return s.base.RoundTrip(r)
}

// refusals are the answers to the Streamable HTTP POST after which a url
// upstream without transport is tried with the legacy SSE transport (MCP
// spec 2025-11-25 basic/transports, "Backwards Compatibility": a 4xx such
// as 404 or 405; the go-sdk's SSE handler answers a POST without its
// session id 400 "sessionid must be provided"). Not 401 or 403: an
// authorization problem is reported as it is.
var refusals = []string{"HTTP 400 ", "HTTP 404 ", "HTTP 405 "}

// refusalStatus is the refusal in err ("HTTP 400"), or "".
func refusalStatus(err error) string {
	msg := err.Error()
	for _, r := range refusals {
		if strings.Contains(msg, r) {
			return strings.TrimSpace(r)
		}
	}
	return ""
}

// sseFallback reports whether the failed initialize of cfg (Streamable
// HTTP, transport not configured) is to be tried again with the legacy
// SSE transport: not when the server refused the offered version by
// JSON-RPC (an MCP server on Streamable HTTP; version.go eraRefused).
func sseFallback(cfg *config.Upstream, err error) bool {
	return cfg.TransportAuto && cfg.Transport == "streamable-http" && refusalStatus(err) != "" && !versionRefusal(err)
}

// asSSE is a copy of cfg speaking the legacy SSE transport.
func asSSE(cfg *config.Upstream) *config.Upstream {
	c := *cfg
	c.Transport = "sse"
	return &c
}

// wrongTransportHint adds the likely fix to a failed initialize of an HTTP
// upstream whose server speaks the other HTTP transport: a legacy SSE server answers the Streamable HTTP POST with 404 or
// 405; a Streamable HTTP server answers the SSE transport's GET with 400,
// 404 or 405. Any other error is returned unchanged.
func wrongTransportHint(u *config.Upstream, err error) error {
	if err == nil || !u.IsHTTP() {
		return err
	}
	msg := err.Error()
	if u.Transport == "sse" && u.SSEPathPrefix == "" && strings.Contains(msg, "failed to write: 404 ") {
		return fmt.Errorf(`%w (the message endpoint the server advertised answers 404: behind a reverse proxy that serves the server under a path prefix, set sse_path_prefix to that prefix)`, err)
	}
	if u.Transport == "sse" {
		for _, s := range []string{"failed to connect: Bad Request", "failed to connect: Not Found", "failed to connect: Method Not Allowed"} {
			if strings.Contains(msg, s) {
				return fmt.Errorf(`%w (if this is a Streamable HTTP server, try transport = "streamable-http"; its URL usually ends in /mcp)`, err)
			}
		}
		return err
	}
	if refusalStatus(err) != "" && !versionRefusal(err) {
		return fmt.Errorf(`%w (if this is a legacy SSE server, try transport = "sse"; its URL usually ends in /sse)`, err)
	}
	return err
}
