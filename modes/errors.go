package modes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UpstreamError is an upstream's JSON-RPC error answer to a tools/call as
// the call path hands it to every route: one clean line,
// `upstream "NAME": <the upstream's message>`, with the code and data kept
// as data rather than repeated in the text. It unwraps to the
// *jsonrpc.Error (same code, message and data), so a direct tools/call
// answers with the upstream's code and data.
type UpstreamError struct {
	Upstream string
	Code     int64
	// Message is the upstream's message without a leading "MCP error
	// <code>: " (the TypeScript SDK puts the code in its messages).
	Message string
	Data    json.RawMessage
}

func (e *UpstreamError) Error() string { return fmt.Sprintf("upstream %q: %s", e.Upstream, e.Message) }

func (e *UpstreamError) Unwrap() error {
	return &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
}

// NewUpstreamError shapes je, the JSON-RPC error upstream answered with.
func NewUpstreamError(upstream string, je *jsonrpc.Error) *UpstreamError {
	msg := strings.TrimSpace(je.Message)
	msg = strings.TrimPrefix(msg, "MCP error "+strconv.FormatInt(je.Code, 10)+": ")
	if msg == "" {
		msg = fmt.Sprintf("JSON-RPC error %d", je.Code)
	}
	return &UpstreamError{Upstream: upstream, Code: je.Code, Message: msg, Data: je.Data}
}

// errorDetails is the structured form of a call's error for a model or a
// script: {"upstream", "code", "data"} of an upstream's JSON-RPC error
// (nil for any other error).
func errorDetails(err error) map[string]any {
	var ue *UpstreamError
	if !errors.As(err, &ue) {
		return nil
	}
	d := map[string]any{"upstream": ue.Upstream, "code": ue.Code}
	if len(ue.Data) > 0 && json.Valid(ue.Data) {
		d["data"] = ue.Data
	}
	return d
}

// ErrorText renders an error for a model: its message, once (an upstream's
// JSON-RPC code travels in the error's data, see errorDetails).
func ErrorText(err error) string { return err.Error() }

// callErrorResult is tool_call's isError result for a failed call: the
// text names the tool and the error; an upstream's JSON-RPC error adds
// structuredContent {"error": {"message", "upstream", "code", "data"?}}.
func callErrorResult(id string, err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("tool_call %s: %s", clipRef(id), ErrorText(err))
	r := errorResult("%s", msg)
	if d := errorDetails(err); d != nil {
		d["message"] = msg
		r.StructuredContent = map[string]any{"error": d}
	}
	return r
}

// bridgeError is a bridge call's error: the script's Error gets the
// message, and for an upstream's JSON-RPC error the properties upstream,
// code and data (sandbox.PropsError).
// maxBridgeProps bounds the properties a bridge error carries, in bytes
// (the sandbox drops larger ones).
const maxBridgeProps = 400

type bridgeError struct {
	msg   string
	props json.RawMessage
}

func (e *bridgeError) Error() string            { return e.msg }
func (e *bridgeError) JSProps() json.RawMessage { return e.props }

func newBridgeError(err error) error {
	be := &bridgeError{msg: ErrorText(err)}
	if d := errorDetails(err); d != nil {
		be.props, _ = json.Marshal(d)
		if len(be.props) > maxBridgeProps { // large data stays out; code and upstream stay
			delete(d, "data")
			be.props, _ = json.Marshal(d)
		}
	}
	return be
}
