package upstream

import "github.com/mcp-toolsearch/mcp-toolsearch/config"

// offeredVersion is the protocol version the proxy offers upstream u
// (issue 17: each leg negotiates the newest version its upstream speaks):
//
//   - stdio: "" = the go-sdk's newest, 2026-07-28: the client asks
//     server/discover first and falls back to initialize (offering
//     2025-11-25) when the server does not know it, so older servers are
//     met at their version. On 2026-07-28 there is no session: every
//     request carries the version in its _meta; input-required results
//     come back to the proxy (proxy/mrtr.go); list changes come through
//     subscriptions/listen, which the go-sdk client opens itself.
//   - Streamable HTTP: the same; the proxy's own client transport
//     (httpconn.go) sends 2026-07-28's per-request headers
//     (headers2026.go); a 2026-07-28 server keeps no session, and without
//     notifications/initialized no standalone GET stream is opened.
//   - SSE: ProtocolVersion (2025-11-25); the legacy SSE transport is of
//     2024-11-05.
func offeredVersion(u *config.Upstream) string {
	if u != nil && (!u.IsHTTP() || u.Transport != "sse") {
		return ""
	}
	return ProtocolVersion
}
