package upstream

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/ingest"
)

// rawToolPages is implemented by the proxy's own upstream connections
// (stdio and Streamable HTTP, wire.go): they hand the go-sdk each
// tools/list answer with an empty "tools" array and keep the array's
// elements as received, so that the ingest pipeline decodes each tool on
// its own. One tool the go-sdk could not decode (nesting past its 1,000
// levels, a wrong type) would otherwise fail the whole page and drop every
// tool of the upstream.
type rawToolPages interface {
	// keepToolPages turns the split on (a go-sdk session used directly,
	// without listTools, gets its tools as usual).
	keepToolPages()
	// takeToolsPage returns the raw tools of the last tools/list answer
	// for cursor and forgets them; ok is false when there is none.
	takeToolsPage(cursor string) (tools []json.RawMessage, ok bool)
}

// listTools reads tools/list page by page with explicit cursors (MCP spec
// server/utilities/pagination) and passes every tool of the listing
// through the ingest pipeline (THE tool-ingest point: every tool of every
// session, first listing or re-listing, goes through here). It stops on an
// empty nextCursor; on a repeated cursor or after MaxPages pages it stops
// with a warning and keeps the tools read so far. A listing of zero tools
// is a valid answer (Result.Tools is empty, not nil).
//
// Pages come raw from the proxy's own transports (rawToolPages); over the
// go-sdk's legacy SSE transport each tool the SDK decoded is encoded again
// (a tool it could not decode has already failed that page).
func (c *conn) listTools(ctx context.Context, l *live) (ingest.Result, error) {
	var raws []json.RawMessage
	seen := make(map[string]bool)
	cursor := ""
	for page := 0; ; page++ {
		if page >= c.m.opts.MaxPages {
			c.log.Warn("tools/list: page limit reached, keeping the tools read so far", "max_pages", c.m.opts.MaxPages, "tools", len(raws))
			break
		}
		if rp, isRaw := l.conn.(rawToolPages); isRaw && page == 0 {
			rp.keepToolPages()
		}
		res, err := l.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return ingest.Result{}, err
		}
		var pageTools []json.RawMessage
		ok := false
		if rp, isRaw := l.conn.(rawToolPages); isRaw {
			pageTools, ok = rp.takeToolsPage(cursor)
		}
		if !ok {
			for _, t := range res.Tools {
				if b, err := json.Marshal(t); err == nil {
					pageTools = append(pageTools, b)
				}
			}
		}
		raws = append(raws, pageTools...)
		next := res.NextCursor
		if next == "" {
			break
		}
		if seen[next] {
			c.log.Warn("tools/list: server repeated a cursor, keeping the tools read so far", "cursor", truncate(next, 64), "tools", len(raws))
			break
		}
		seen[next] = true
		cursor = next
	}
	return c.m.opts.Ingest.Run(c.name, raws), nil
}

// logDiagnostics logs ds when they differ from the previous listing's
// (prev), so a re-listing that changes nothing does not repeat them.
func (c *conn) logDiagnostics(prev, ds []ingest.Diagnostic) {
	if ingest.Same(prev, ds) {
		return
	}
	ingest.Log(c.log, ds)
}
