package cli

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// benchEnv is a modes.Env over a fixed catalog with no upstreams: every
// tool is allowed, calls fail. Used by `bench surface --tools`.
type benchEnv struct{ snap *catalog.Snapshot }

func (e benchEnv) Snapshot() *catalog.Snapshot { return e.snap }
func (benchEnv) Allowed(*catalog.Entry) bool   { return true }
func (benchEnv) Call(context.Context, *catalog.Entry, json.RawMessage, string) (*mcp.CallToolResult, error) {
	return nil, errors.New("bench surface: no upstreams")
}
func (benchEnv) Searched(string, int, string)   {}
func (benchEnv) Described(string, bool, string) {}
