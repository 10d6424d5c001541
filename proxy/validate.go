package proxy

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcp-toolsearch/catalog"
)

// outputCheck prepares output validation for a trusted tool that declares
// an outputSchema (SPEC §4): the schema is compiled before the call runs,
// so a schema that does not compile is an error before any side effect.
// It returns nil when there is nothing to check.
func (p *Proxy) outputCheck(e *catalog.Entry) (func(*mcp.CallToolResult) *mcp.CallToolResult, error) {
	return nil, nil
}
