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
// origin carry the Authorization value auth returns (issue 18: a per-user
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
	// opened a new TCP (and TLS) connection and closed it after (issue 16).
	base.MaxIdleConnsPerHost = maxIdleConnsPerUpstream
	client := &http.Client{Transport: &headerRoundTripper{base: base, headers: u.Headers, target: parsed, auth: auth},
		CheckRedirect: guardRedirects(base, parsed, u.AllowInternalRedirects)} // redirect.go
	switch u.Transport {
	case "", "streamable-http", "streamable":
		return &streamableTransport{url: u.URL, client: client, log: log, maxBytes: maxBytes}, base, nil
	case "sse":
		// The legacy HTTP+SSE transport stays the go-sdk's (deprecated in
		// the spec since 2025-03-26): the faults the proxy's own transports
		// contain (issue 13 items 4 to 6 and 10) still end such a session.
		// The cap holds while an event is read (eventCap, sse.go; the
		// go-sdk's own bound, MaxEventSize, is 16 MiB by default whatever
		// the cap, and it ends the session without saying why): past it
		// the stream fails, the session ends with a WARN naming the cap,
		// and the manager connects again.
		client.Transport = eventCapTripper{base: client.Transport, max: maxBytes + sseFraming, log: log}
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
		resp, err := h.base.RoundTrip(req)
		gunzipAnswer(req, resp) // gzipbody.go
		return resp, err
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
	resp, err := h.base.RoundTrip(r)
	gunzipAnswer(r, resp) // gzipbody.go
	return resp, err
}

// wrongTransportHint adds the likely fix to a failed initialize of an HTTP
// upstream whose server speaks the other HTTP transport (issue 12 item
// 14): a legacy SSE server answers the Streamable HTTP POST with 404 or
// 405; a Streamable HTTP server answers the SSE transport's GET with 400,
// 404 or 405. Any other error is returned unchanged.
func wrongTransportHint(u *config.Upstream, err error) error {
	if err == nil || !u.IsHTTP() {
		return err
	}
	msg := err.Error()
	if u.Transport == "sse" {
		for _, s := range []string{"failed to connect: Bad Request", "failed to connect: Not Found", "failed to connect: Method Not Allowed"} {
			if strings.Contains(msg, s) {
				return fmt.Errorf(`%w (if this is a Streamable HTTP server, try transport = "streamable-http"; its URL usually ends in /mcp)`, err)
			}
		}
		return err
	}
	if strings.Contains(msg, "HTTP 404 ") || strings.Contains(msg, "HTTP 405 ") {
		return fmt.Errorf(`%w (if this is a legacy SSE server, try transport = "sse"; its URL usually ends in /sse)`, err)
	}
	return err
}
