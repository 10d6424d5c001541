package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 on; clients and servers of earlier protocols still use them

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/front"
	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// Result types of protocol 2026-07-28 (SEP-2322): every tools/call result
// says "complete" or "input_required".
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// withResultType returns a copy of r whose resultType is rt. go-sdk v1.8.0
// keeps resultType unexported and sets it only in its own tools/call
// handler (mcp/server.go, handleMultiRoundTripResult), which the proxy's
// middleware replaces; CallToolResult.UnmarshalJSON is the one public way
// to set it, so the copy starts from a decoded stub and takes r's exported
// fields.
//
// The stubs are decoded once (callResultStubs): a struct copy carries the
// unexported field, so a call costs no JSON round trip (this ran
// for every tools/call answer).
func withResultType(r *mcp.CallToolResult, rt string) *mcp.CallToolResult {
	var out mcp.CallToolResult
	if rt != "" {
		stub, ok := callResultStubs()[rt]
		if !ok {
			b, _ := json.Marshal(map[string]any{"content": []any{}, "resultType": rt})
			_ = json.Unmarshal(b, &stub)
		}
		out = stub
	}
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, r.Content, r.StructuredContent, r.IsError
	out.InputRequests, out.RequestState = r.InputRequests, r.RequestState
	return &out
}

// callResultStubs are the decoded stubs of withResultType, one per result
// type of SEP-2322.
var callResultStubs = sync.OnceValue(func() map[string]mcp.CallToolResult {
	out := map[string]mcp.CallToolResult{}
	for _, rt := range []string{resultComplete, resultInputRequired} {
		var r mcp.CallToolResult
		b, _ := json.Marshal(map[string]any{"content": []any{}, "resultType": rt})
		_ = json.Unmarshal(b, &r)
		out[rt] = r
	}
	return out
})

// modernRequestOf reports whether req was sent at protocol 2026-07-28 or
// later: its _meta names the version (the go-sdk also fills the session's
// InitializeParams from it, except for server/discover on stdio,
// stdio2026.go), or its session was opened at such a version.
func modernRequestOf(req mcp.Request) bool {
	if params := req.GetParams(); params != nil && !reflect.ValueOf(params).IsNil() {
		if v, ok := params.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok {
			return v >= modernVersion
		}
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= modernVersion
}

// maxInputRounds bounds the input-required rounds of one upstream call.
const maxInputRounds = 10

// callRounds makes one upstream tools/call. An upstream on protocol
// 2026-07-28 cannot send the client a request mid-call; it answers
// input_required instead (SEP-2322). The proxy's upstream clients leave
// such results to it (MultiRoundTripOptions.Disabled, passthrough_relay.go):
// each question goes to the calling client (askClient: a request on a
// legacy client's session, or a question of a 2026-07-28 client's
// exchange) and the call is repeated with the answers and the upstream's
// requestState, up to maxInputRounds times. The upstream's identity in the
// result's _meta (a hop key, meta.go) is dropped.
func (p *Proxy) callRounds(ctx context.Context, s *session, e *catalog.Entry, params *mcp.CallToolParams, opts upstream.CallOptions) (*mcp.CallToolResult, error) {
	for round := 0; ; round++ {
		res, err := p.ups.CallToolWith(ctx, e.Upstream, params, opts)
		if err == nil && opts.Raw != nil && opts.Raw.JSON != nil && !opts.Raw.Plain {
			// rawslot.go: what front.ForwardMeta and eraResult do (a plain
			// result, without _meta and resultType, has nothing to shape)
			rm, mm := opts.Raw.Members()
			opts.Raw.JSON = front.ShapeRawRec(opts.Raw.JSON, rm, mm)
		}
		if err != nil || res == nil || !res.NeedsInput() {
			if res != nil {
				res.Meta = front.ForwardMeta(res.Meta)
			}
			return res, err
		}
		if round >= maxInputRounds {
			return nil, fmt.Errorf("upstream %q: tools/call %q still asked for input after %d rounds", e.Upstream, e.Name, maxInputRounds)
		}
		if len(res.InputRequests) == 0 {
			return nil, fmt.Errorf("upstream %q: tools/call %q: the upstream is busy (input_required without requests); retry later", e.Upstream, e.Name)
		}
		answers, err := p.askAll(ctx, s, e, res.InputRequests)
		if err != nil {
			return nil, err
		}
		next := *params
		next.InputResponses, next.RequestState = answers, res.RequestState
		params = &next
	}
}

// askAll asks the client of s every input request of one upstream round
// at once, each under the upstream's key: a 2026-07-28 client gets them in
// one input_required result, keyed as the upstream keyed them (its
// exchange); an older client gets one request each, concurrently. The
// first failure is the error.
func (p *Proxy) askAll(ctx context.Context, s *session, e *catalog.Entry, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	type answer struct {
		key string
		res mcp.InputResponse
		err error
	}
	ctx, cancel := context.WithCancel(ctx) // the first failure ends the other questions
	defer cancel()
	out := make(chan answer, len(reqs))
	for key, q := range reqs {
		if cm, ok := q.(*mcp.CreateMessageParams); ok { // askClient asks the tools form
			b, _ := json.Marshal(cm)
			var wt mcp.CreateMessageWithToolsParams
			if json.Unmarshal(b, &wt) == nil {
				q = &wt
			}
		}
		go func() {
			a, err := askClient(withInputKey(ctx, key), s, q)
			if err != nil {
				out <- answer{key: key, err: fmt.Errorf("upstream %q asked the client (%s) during tools/call %q: %w", e.Upstream, key, e.Name, err)}
				return
			}
			r, ok := a.(mcp.InputResponse)
			if !ok {
				out <- answer{key: key, err: fmt.Errorf("upstream %q: answer %T to %s is not an input response", e.Upstream, a, key)}
				return
			}
			out <- answer{key: key, res: r}
		}()
	}
	answers := mcp.InputResponseMap{}
	var first error
	for range reqs {
		a := <-out
		if a.err != nil && first == nil {
			first = a.err
			cancel()
		}
		answers[a.key] = a.res
	}
	if first != nil {
		return nil, first
	}
	return answers, nil
}

// stubResultType is a decoded {"resultType": rt}: the one public way to
// give a go-sdk result an unexported resultType (see withResultType).
func stubResultType[T any](rt string) *T {
	var out T
	b, _ := json.Marshal(map[string]any{"resultType": rt})
	_ = json.Unmarshal(b, &out)
	return &out
}

// eraResult gives a result the shape of the client's protocol era. Results
// decoded from a 2026-07-28 upstream carry a resultType and cache hints,
// which older clients never saw; results the proxy builds or passes on to
// a 2026-07-28 client need resultType "complete" (the go-sdk sets it only
// in its own handlers). Input-required results keep their type.
func eraResult(res mcp.Result, modern bool) mcp.Result {
	rt := ""
	if modern {
		rt = resultComplete
	}
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r.NeedsInput() {
			return r
		}
		return withResultType(r, rt)
	case *mcp.GetPromptResult:
		if r.NeedsInput() {
			return r
		}
		out := stubResultType[mcp.GetPromptResult](rt)
		out.Meta, out.Description, out.Messages = r.Meta, r.Description, r.Messages
		return out
	case *mcp.ReadResourceResult:
		if r.NeedsInput() {
			return r
		}
		out := stubResultType[mcp.ReadResourceResult](rt)
		out.Meta, out.Cacheable, out.Contents = r.Meta, r.Cacheable, r.Contents
		if !modern {
			out.Cacheable = mcp.Cacheable{}
		}
		return out
	case *mcp.CompleteResult:
		r.ResultType = ""
	}
	return res
}

// noCapabilities stands for a client that declared none.
var noCapabilities = &mcp.ClientCapabilities{}

// callerCapabilities are the capabilities session s's client declared
// (initialize, or a 2026-07-28 request's _meta, which the go-sdk keeps as
// the session's initialize parameters); nil when there is no client
// session (the CLI), so the upstream sees the proxy's own. A 2026-07-28
// upstream leg sends the relayable part with each call
// (upstream.CallOptions.ClientCapabilities): an upstream then asks only
// for what the client can answer, and refuses a tool that needs more
// with -32021 (MCP 2026-07-28, SEP-2575), as it would for the client
// itself.
// callerModern reports whether the client of a call speaks 2026-07-28:
// its call runs as an exchange, or its session (a 2026-07-28 request's, or
// a stdio connection that took 2026-07-28) was made at that version.
func callerModern(s *session) bool {
	if s == nil {
		return false
	}
	if s.ex != nil {
		return true
	}
	if s.ss == nil {
		return false
	}
	ip := s.ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2026-07-28"
}

func callerCapabilities(s *session) *mcp.ClientCapabilities {
	if s == nil || s.ss == nil {
		return nil
	}
	if ip := s.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return noCapabilities
}
