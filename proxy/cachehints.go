package proxy

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cache hints on older protocols. go-sdk v1.8.0's
// mcp.Cacheable has no omitempty: every list result and resources/read
// answer it encodes carries "ttlMs": 0 and "cacheScope": "", also to
// clients of protocols before 2026-07-28, which have no such members (and
// "" is not a valid cacheScope of 2026-07-28 either). There is no go-sdk
// option to leave them out, so the answers to those clients are wrapped
// in types whose JSON has no such members: a field of the wrapper with
// the same JSON name is shallower than the embedded result's, so
// encoding/json uses it (and omits it: nil, omitempty), and the result
// is encoded as before otherwise, at the same cost (no MarshalJSON on the
// way; tools/list is the big one). resources/read has a MarshalJSON of
// its own in the go-sdk, which would be promoted past the shadowing, so
// its wrapper encodes its fields through a defined type without methods
// (as the go-sdk's own MarshalJSON does), at the cost of one more pass
// of encoding/json over the answer.
//
// Only answers to older clients are wrapped: the go-sdk stamps
// 2026-07-28 results (resultType, server identity) through methods of
// its own types, and those keep them.

// noCacheHints leaves "ttlMs" and "cacheScope" out of the JSON of the
// struct that embeds it next to a go-sdk result.
type noCacheHints struct {
	TTLMs      *int    `json:"ttlMs,omitempty"`
	CacheScope *string `json:"cacheScope,omitempty"`
}

type (
	toolsNoHints struct {
		*mcp.ListToolsResult
		noCacheHints
	}
	rawToolsNoHints struct {
		*rawToolsList
		noCacheHints
	}
	resourcesNoHints struct {
		*mcp.ListResourcesResult
		noCacheHints
	}
	templatesNoHints struct {
		*mcp.ListResourceTemplatesResult
		noCacheHints
	}
	promptsNoHints struct {
		*mcp.ListPromptsResult
		noCacheHints
	}
	readNoHints struct{ *mcp.ReadResourceResult }
)

// readFields is mcp.ReadResourceResult without its methods (so without
// its MarshalJSON).
type readFields mcp.ReadResourceResult

func (r readNoHints) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		*readFields
		noCacheHints
	}{readFields: (*readFields)(r.ReadResourceResult)})
}

// withoutCacheHints is res for a client of a protocol before 2026-07-28:
// a cacheable result wrapped so that its JSON has no "ttlMs" and
// "cacheScope"; any other result as it is.
func withoutCacheHints(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		return toolsNoHints{ListToolsResult: r}
	case *rawToolsList:
		return rawToolsNoHints{rawToolsList: r}
	case *mcp.ListResourcesResult:
		return resourcesNoHints{ListResourcesResult: r}
	case *mcp.ListResourceTemplatesResult:
		return templatesNoHints{ListResourceTemplatesResult: r}
	case *mcp.ListPromptsResult:
		return promptsNoHints{ListPromptsResult: r}
	case *mcp.ReadResourceResult:
		return readNoHints{r}
	}
	return res
}
