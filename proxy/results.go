package proxy

// Hidden characters in tool results, on the one call path ((*Proxy).call):
// every route (direct tools/call, tool_call, the code bridge, a hydrated
// directory name, the CLI's call) gets the result cleaned the same way.
//
// Tool definitions are cleaned at the ingest point (ingest.HiddenChars);
// results were not, so a tool returning Unicode TAG characters delivered
// a hidden instruction to the model (92 hidden code points in direct mode,
// 274 through tool_call and the code bridge, which carry the result in
// two places). Every string of a result (text content, structuredContent,
// embedded resource text, resource links, _meta; member names too) is
// cleaned by [security] hidden_characters:
//
//   - "strip" (default): the characters are removed, the result goes on,
//     and the operator is told (a warning naming the tool and what was
//     removed, at most one a minute per tool; the counter
//     mcp_toolsearch_hidden_characters_results_total);
//   - "block": the result is withheld: the client gets an isError result
//     saying what it held.
//
// A result that holds none passes untouched: a result kept as the
// upstream's bytes (rawslot.go) is scanned for the bytes of the hidden
// ranges and their \u escapes (ingest.JSONMayHoldHidden) and stays bytes;
// a decoded one is walked. Only a result that may hold some is decoded,
// cleaned and encoded again.
//
// Trust: tool results are not trusted (they are an upstream server's
// text); this guards against instructions a person cannot see reaching
// the model through a tool's output.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

// cleanResult applies [security] hidden_characters to res, the result of
// e's call (or, when ctx's raw slot holds the upstream's bytes, to those).
func (p *Proxy) cleanResult(ctx context.Context, e *catalog.Entry, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	var doc []byte
	if raw := rawSlotFrom(ctx); raw != nil && raw.JSON != nil {
		if !ingest.JSONMayHoldHidden(raw.JSON) {
			return res, nil
		}
		doc = raw.JSON
	} else {
		if res == nil || !resultMayHide(res) {
			return res, nil
		}
		b, err := json.Marshal(res)
		if err != nil {
			return res, nil
		}
		doc = b
	}
	cleaned, removed := ingest.StripHiddenJSON(doc)
	if len(removed) == 0 {
		return res, nil
	}
	if raw := rawSlotFrom(ctx); raw != nil {
		raw.JSON = nil // the decoded, cleaned result goes out instead
	}
	what := ingest.DescribeHidden(removed)
	p.metrics.HiddenInResult(e.Upstream, len(removed))
	p.hiddenResultLog(e, what)
	if p.conf().Security.HiddenCharacters == config.HiddenBlock {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"mcp-toolsearch: the result of %s was withheld: it held %s, which a person cannot see but a model reads (security.hidden_characters = \"block\")", e.Exposed, what)}}}, nil
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(cleaned, &out); err != nil {
		return nil, fmt.Errorf("upstream %q: the tool's result, cleaned of hidden characters, is not a tool result: %w", e.Upstream, err)
	}
	return &out, nil
}

// resultMayHide reports whether a decoded result may hold a hidden
// character: its text content, resource text and links, structuredContent
// and _meta are looked at; a content type it does not know counts as yes.
func resultMayHide(res *mcp.CallToolResult) bool {
	if valueMayHide(map[string]any(res.Meta)) || valueMayHide(res.StructuredContent) {
		return true
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			if ingest.HasHidden(x.Text) || valueMayHide(map[string]any(x.Meta)) || x.Annotations != nil && ingest.HasHidden(x.Annotations.LastModified) {
				return true
			}
		case *mcp.ImageContent:
			if ingest.HasHidden(x.MIMEType) || valueMayHide(map[string]any(x.Meta)) {
				return true
			}
		case *mcp.AudioContent:
			if ingest.HasHidden(x.MIMEType) || valueMayHide(map[string]any(x.Meta)) {
				return true
			}
		case *mcp.ResourceLink:
			if ingest.HasHidden(x.URI) || ingest.HasHidden(x.Name) || ingest.HasHidden(x.Title) || ingest.HasHidden(x.Description) ||
				ingest.HasHidden(x.MIMEType) || valueMayHide(map[string]any(x.Meta)) {
				return true
			}
		case *mcp.EmbeddedResource:
			if x.Resource != nil && (ingest.HasHidden(x.Resource.Text) || ingest.HasHidden(x.Resource.URI) || ingest.HasHidden(x.Resource.MIMEType) ||
				valueMayHide(map[string]any(x.Resource.Meta))) || valueMayHide(map[string]any(x.Meta)) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// valueMayHide walks a decoded JSON value (or a Go value of the same
// shapes); a shape it does not know counts as yes.
func valueMayHide(v any) bool {
	switch x := v.(type) {
	case nil, bool, float64, int, int64, json.Number:
		return false
	case string:
		return ingest.HasHidden(x)
	case []any:
		for _, e := range x {
			if valueMayHide(e) {
				return true
			}
		}
		return false
	case map[string]any:
		for k, e := range x {
			if ingest.HasHidden(k) || valueMayHide(e) {
				return true
			}
		}
		return false
	case json.RawMessage:
		return ingest.JSONMayHoldHidden(x)
	}
	return true
}

// hiddenResultLog warns that e's result held hidden characters, at most
// once a minute per tool (an upstream that puts them in every result
// would fill the log).
func (p *Proxy) hiddenResultLog(e *catalog.Entry, what string) {
	now, key := time.Now(), fmt.Sprintf("%p %s", p, e.ID)
	if last, ok := hiddenLogged.Load(key); ok && now.Sub(last.(time.Time)) < time.Minute {
		return
	}
	hiddenLogged.Store(key, now)
	action := "removed"
	if p.conf().Security.HiddenCharacters == config.HiddenBlock {
		action = "result withheld"
	}
	p.log.Warn("a tool's result held hidden characters; "+action+" (security.hidden_characters)", "upstream", e.Upstream, "tool", e.ID, "found", what)
}

// hiddenLogged holds, per proxy and tool id, when its last warning was
// logged.
var hiddenLogged sync.Map
