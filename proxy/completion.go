package proxy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The completion feature: completion/complete passed on to the upstream
// that owns the prompt or resource template it completes.

// complete routes completion/complete by its ref: a prompt name through
// the prompt table, a resource template URI through the template table.
func (pt *passthrough) complete(ctx context.Context, s *session, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete: missing ref"}
	}
	p := *params
	ref := *params.Ref
	p.Ref = &ref
	var up string
	switch ref.Type {
	case "ref/prompt":
		r, err := pt.routePrompt(ctx, s, ref.Name)
		if err != nil {
			return nil, err
		}
		up, ref.Name = r.up, r.orig
	case "ref/resource":
		t := pt.tablesFor(s)
		pt.mu.Lock()
		r, ok := t.templates[ref.URI]
		pt.mu.Unlock()
		if !ok {
			if _, err := pt.listTemplates(ctx, s); err == nil {
				pt.mu.Lock()
				r, ok = t.templates[ref.URI]
				pt.mu.Unlock()
			}
		}
		if !ok || !pt.visible(s, r.up) {
			rr, err := pt.routeURI(s, ref.URI)
			if err != nil {
				return nil, err
			}
			r = rr
		}
		up, ref.URI = r.up, r.orig
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion/complete: unknown ref type %q", ref.Type)}
	}
	cs, err := pt.sessionOf(s, up)
	if err != nil {
		return nil, err
	}
	if c := cs.InitializeResult(); c == nil || c.Capabilities == nil || c.Capabilities.Completions == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("upstream %q does not offer completions", up)}
	}
	p.Meta = front.ForwardMeta(p.Meta)
	res, err := cs.Complete(ctx, &p)
	if err != nil {
		return nil, upstreamError(up, "completion/complete", err)
	}
	return res, nil
}
