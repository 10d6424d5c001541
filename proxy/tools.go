package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
)

// The tools feature of the front: tools/list and tools/call are answered
// per session, from its surface and policy view; every call goes through
// the surface's Call, which ends in (*Proxy).call.

// onToolsList answers tools/list for session s: every member an upstream
// sent of each tool it may see (rawtools.go).
func (p *Proxy) onToolsList(s *session) mcp.Result {
	tools, extras := p.listedTools(s)
	res := toolsListResult(tools, extras)
	s.surface.swap(surfaceFingerprint(tools, extras)) // listchanged.go
	if p.conf().Telemetry.SessionLog != "" {          // the bytes go only to the session log
		if b, err := json.Marshal(res); err == nil {
			s.ts.ToolsListed(len(b), len(tools), len(tools))
		}
	}
	return res
}

// onToolsCall answers tools/call for session s (ss its go-sdk session): as
// a task when the client asked for one (tasks.go), as an exchange for a
// 2026-07-28 client (exchange.go: input-required rounds), else as a call
// whose result may pass as the upstream's bytes (rawslot.go).
func (p *Proxy) onToolsCall(ctx context.Context, s *session, ss *mcp.ServerSession, req mcp.Request) (mcp.Result, error) {
	cr, _ := req.(*mcp.CallToolRequest)
	if cr == nil || cr.Params == nil || cr.Params.Name == "" {
		// schema.ts CallToolRequestParams: name is required.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call: params.name is required: the name of the tool to call"}
	}
	ctx, stop := s.bind(ctx)
	defer stop()
	args := cr.Params.Arguments
	ctx = withCallRequest(ctx, cr) // forward reads the client's progress token and _meta
	if task := takeTask(cr); task != nil {
		return p.callAsTask(ctx, s, ss, cr, args, task)
	}
	if modernRequestOf(req) {
		res, err := p.callModern(ctx, s, cr, args)
		if err == nil {
			front.StampServerInfo(res) // also when the go-sdk does not (an elided _meta)
		}
		return res, err
	}
	ctx, raw := rawSlotFor(ctx, ss)
	res, err := p.surf().Call(ctx, s, cr.Params.Name, args)
	if err == nil && raw != nil && raw.JSON != nil {
		return front.NewRawResult(raw.JSON, false, raw.Answer), nil
	}
	var ae *ArgumentsError
	if errors.As(err, &ae) {
		// A tool execution error, so the model can correct itself (MCP
		// 2025-11-25, Tools / Error Handling).
		return errorText(p.conf().Redact(ae.Error())), nil
	}
	if err != nil {
		return nil, wireError(err)
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return res, nil
}
