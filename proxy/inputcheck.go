package proxy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/schemacheck"
)

// Input validation: a call's arguments are checked
// against the tool's inputSchema before anything is forwarded, so a model's
// wrong call costs no upstream side effect and the error tells it exactly
// what to change (the field, what was expected, the part of the schema).
//
// It guards against mistakes of the model (arguments are untrusted input),
// not against a hostile upstream: the schema is the upstream's own. On by
// default in the code, tools and directory modes, where the model did not
// get the schema in tools/list (and a host did not check it), off in direct
// mode; `validate_input` per upstream switches it either way.
//
// A schema that does not compile (package schemacheck: draft-03 or a
// custom $schema, an unresolvable or remote $ref, a $ref loop that never
// reaches into the value, over 512 KiB) means no
// validation for that tool, never a refused call; a warning is logged once.

// ArgumentsError is a call refused because its arguments do not match the
// tool's inputSchema; the upstream was not called. Direct tools/call
// answers it as an isError result (MCP 2025-11-25, Tools / Error Handling:
// input validation errors are tool execution errors, so the model can
// correct itself); tool_call as an isError result, the code bridge as a
// rejected Promise.
type ArgumentsError struct {
	ID  string
	Err *schemacheck.ValidationError
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("arguments of %s do not match its inputSchema, so the call was not made: %s", e.ID, e.Err.Error())
}

// validatesInput reports whether calls to tools of upstream up have their
// arguments validated.
func (p *Proxy) validatesInput(up string) bool {
	if u, ok := p.conf().Upstreams[up]; ok && u.ValidateInput != nil {
		return *u.ValidateInput
	}
	return p.surf().Mode() != "direct"
}

// checkInput validates args (a JSON object) against e's inputSchema when
// validation is on for its upstream. It returns nil or an *ArgumentsError.
func (p *Proxy) checkInput(e *catalog.Entry, args json.RawMessage) error {
	if !p.validatesInput(e.Upstream) || len(e.InputSchema) == 0 {
		return nil
	}
	sc, err := schemacheck.Compile(e.InputSchema)
	if err != nil {
		p.warnSchemaOnce(e, "input", err)
		return nil
	}
	var ve *schemacheck.ValidationError
	if err := sc.ValidateJSON(args); errors.As(err, &ve) {
		return &ArgumentsError{ID: e.ID, Err: ve}
	}
	return nil
}
