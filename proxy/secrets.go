package proxy

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// redactResult hides the config's secrets (config.Config.Redact: every
// secret in every escaping) in the text of an upstream's isError result
// before a client sees it (errors to clients). An upstream
// server is not trusted, and its error text often echoes what it was
// started with (a URL with a key, an env value). Results that are not
// errors pass unchanged: they are the tool's output.
func redactResult(cfg *config.Config, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || !res.IsError {
		return res
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = cfg.Redact(t.Text)
		}
	}
	return res
}
