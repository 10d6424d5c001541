package proxy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The prompts feature: prompts/list and prompts/get passed on to the
// upstreams that own them (passthrough.go has the rules).

func (pt *passthrough) listPrompts(ctx context.Context, s *session) (*mcp.ListPromptsResult, error) {
	type item struct {
		up string
		p  *mcp.Prompt
	}
	var items []item
	ups := pt.visibleUpstreams(s, hasPrompts)
	lists := listEach(ctx, pt, s, "prompts/list", ups, func(ctx context.Context, cs *mcp.ClientSession, cursor string) ([]*mcp.Prompt, string, error) {
		r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
	for i, up := range ups {
		for _, p := range lists[i] {
			items = append(items, item{up, p})
		}
	}
	inputs := make([]catalog.NameInput, 0, len(items))
	for _, it := range items {
		inputs = append(inputs, catalog.NameInput{ID: it.up + "\x00" + it.p.Name, Prefix: pt.prefix(it.up), Tool: it.p.Name})
	}
	names := catalog.AssignNames(inputs, pt.sep(), nil)
	table := map[string]route{}
	out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	for _, it := range items {
		exposed := names[it.up+"\x00"+it.p.Name]
		if _, dup := table[exposed]; dup || exposed == "" {
			continue
		}
		table[exposed] = route{it.up, it.p.Name}
		c := *it.p
		c.Name = exposed
		out.Prompts = append(out.Prompts, &c)
	}
	t := pt.tablesFor(s)
	pt.mu.Lock()
	t.prompts = table
	pt.mu.Unlock()
	return out, nil
}

func (pt *passthrough) prefix(up string) string {
	if u, ok := pt.p.conf().Upstreams[up]; ok {
		return u.PrefixOrName()
	}
	return up
}

func (pt *passthrough) sep() string {
	if pt.p.conf().Server.NameSeparator != "" {
		return pt.p.conf().Server.NameSeparator
	}
	return "__"
}

// routePrompt finds a prompt's owner among the upstreams whose features s
// may see, listing prompts once when s's table does not know the name yet.
func (pt *passthrough) routePrompt(ctx context.Context, s *session, name string) (route, error) {
	t := pt.tablesFor(s)
	for attempt := 0; attempt < 2; attempt++ {
		pt.mu.Lock()
		r, ok := t.prompts[name]
		pt.mu.Unlock()
		if ok && pt.visible(s, r.up) {
			return r, nil
		}
		if attempt == 0 {
			if _, err := pt.listPrompts(ctx, s); err != nil {
				return route{}, err
			}
		}
	}
	return route{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}

func (pt *passthrough) getPrompt(ctx context.Context, s *session, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompts/get: missing params"}
	}
	r, err := pt.routePrompt(ctx, s, params.Name)
	if err != nil {
		return nil, err
	}
	cs, err := pt.sessionOf(s, r.up)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Name = r.orig
	p.Meta = front.ForwardMeta(p.Meta)
	res, err := cs.GetPrompt(ctx, &p)
	if err != nil {
		return nil, upstreamError(r.up, "prompts/get", err)
	}
	res.Meta = front.ForwardMeta(res.Meta) // meta.go: the upstream's identity is a hop key
	return res, nil
}
