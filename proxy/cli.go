package proxy

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/modes"
)

// Env returns a modes.Env for a client that is not connected over MCP (the
// CLI's list, describe, call and search): the same policy and the same call
// path as a session of a client named clientName on endpoint ("" = main).
func (p *Proxy) Env(clientName, endpoint string) modes.Env {
	return &session{p: p, client: clientName, endpoint: endpoint}
}

// Config returns the deployment's config.
func (p *Proxy) Config() *config.Config { return p.conf() }

// API returns the search/describe/call API with this deployment's limits.
func (p *Proxy) API() modes.API { return p.api }

// CallRef resolves ref (id, exposed name or unique original name, of a
// catalog or a direct-only tool) for the CLI and runs it through the call
// path, returning the upstream's result.
func (p *Proxy) CallRef(ctx context.Context, env modes.Env, ref string, args json.RawMessage) (*catalog.Entry, *mcp.CallToolResult, error) {
	e, err := p.api.Resolve(env, ref, modes.ViaCLI)
	if err != nil {
		return nil, nil, err
	}
	res, err := env.Call(ctx, e, args, modes.ViaCLI)
	return e, res, err
}
