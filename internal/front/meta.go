package front

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hopMetaKeys are the _meta keys that describe one protocol hop, not the
// request: on 2026-07-28 a client puts its protocol version, capabilities,
// identity and log level in every request's _meta (SEP-2575), and a server
// its identity in every result's. They belong to the client↔proxy leg; the
// proxy's own upstream leg sends its own (or none, on an initialize-era
// leg, where an upstream would read a 2026-07-28 protocolVersion as a
// request for a version it refuses).
var hopMetaKeys = []string{
	mcp.MetaKeyProtocolVersion,
	mcp.MetaKeyClientCapabilities,
	mcp.MetaKeyClientInfo,
	mcp.MetaKeyLogLevel,
	mcp.MetaKeyServerInfo,
	mcp.MetaKeySubscriptionID,
	TaskMetaKey, // tasks.go: the proxy's own carrier of a client's "task" member
}

// ForwardMeta is m without the hop keys (nil when nothing is left). m is
// not modified.
func ForwardMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	var out mcp.Meta
	for k, v := range m {
		if IsHopMetaKey(k) {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

func IsHopMetaKey(k string) bool { return slices.Contains(hopMetaKeys, k) }
