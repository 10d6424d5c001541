package upstream

import (
	"encoding/json"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

// RawResult receives a tools/call result as raw JSON (CallOptions.Raw):
// the bytes the upstream sent, never decoded into go-sdk types. A result
// that is only passed on needs no decode and no encode. Only a call sent
// past the go-sdk client (owntoolcall.go) fills it; on the go-sdk path
// the result comes decoded.
type RawResult struct {
	// JSON is the result object as received; nil when the result came
	// decoded (the call took the go-sdk path, or the result carries more
	// than content, structuredContent, isError, _meta and resultType
	// "complete": then the usual decoded result is returned).
	JSON json.RawMessage
	// Answer: JSON is not an upstream's result but an answer the caller
	// built itself and put here (the proxy's tool_call answer,
	// front.ToolCallAnswer), so its array, spare capacity included, is the
	// caller's own and may be reused once written. The transports never
	// set it.
	Answer bool
	// Plain: JSON has neither a resultType nor a _meta member, as the
	// transport found when it took it raw (rawPassable), so nothing in it
	// needs shaping for the client (front.ShapeRaw: a scan of the result
	// fewer per call). False when not known.
	Plain bool
	// Records: where JSON's members are, as the transport's one scan of
	// the frame recorded them, for the proxy's shaping and
	// stamping; nil when none. They hold for JSON only while JSON is
	// those very bytes (jsonscan.Members.Complete(JSON)), and whoever
	// replaces JSON may leave them (DropRecords).
	Records *Records
}

// Records are the member records of one raw tools/call result, made by
// the transport that received it (the upstream frame's scan): each a
// jsonscan.Members, the byte offsets of up to 8 members (key and value)
// from the first byte of the object it was taken from, valid only for
// that very text (Complete(obj): the same array and length, scanned whole
// and well-formed); a reader that finds it not Complete scans the object
// itself. Meta is Complete only when Result is.
type Records struct {
	Result jsonscan.Members // RawResult.JSON's top-level members
	Meta   jsonscan.Members // the members of its _meta member's object
}

// recordsOf returns the Records holding result and meta, or
// nil when result is not a whole record of the object text obj (then
// neither is meta, and a reader would scan obj anyway).
func recordsOf(obj []byte, result, meta *jsonscan.Members) *Records {
	if len(obj) == 0 || !result.Complete(obj) {
		return nil
	}
	return &Records{Result: *result, Meta: *meta}
}

// Members returns the records of r.JSON's members and of its _meta's
// (nil, nil when r has none). Each is read only after Complete(JSON) (or
// Complete(the _meta value)) said it holds for those bytes.
func (r *RawResult) Members() (result, meta *jsonscan.Members) {
	if r.Records == nil {
		return nil, nil
	}
	return &r.Records.Result, &r.Records.Meta
}

// DropRecords leaves r without records (the readers then scan JSON
// themselves): JSON is no longer the text they were taken from.
func (r *RawResult) DropRecords() { r.Records = nil }

// setRecords gives r the records rec (nil: none), dropping any it had.
func (r *RawResult) setRecords(rec *Records) { r.Records = rec }

// rawPassable reports whether result can be passed on raw: an object with
// a content member whose other members are only structuredContent,
// isError, _meta and a resultType of "complete" (the caller shapes _meta
// and resultType for its client: internal/front/raw.go). Anything else (an
// input_required result, cache hints, members of a later protocol) goes
// the decoded way. isError reports the isError member; plain, that there
// is neither a _meta nor a resultType member (RawResult.Plain).
func rawPassable(result []byte) (ok, isError, plain bool) {
	return rawPassableRec(result, nil)
}

// rawPassableRec is rawPassable reading result's members from rec when
// rec holds them all (jsonscan.Members.Complete: result was scanned whole
// and well-formed, so stopping early or not gives the same answer);
// otherwise it scans result (no second scan of the result).
func rawPassableRec(result []byte, rec *jsonscan.Members) (ok, isError, plain bool) {
	ok, plain = true, true
	content := false
	member := func(k, v []byte) bool {
		switch string(k) {
		case "content":
			content = true
		case "structuredContent":
		case "_meta":
			plain = false
		case "resultType":
			ok, plain = string(v) == `"complete"`, false
		case "isError":
			isError = string(v) == "true"
		default:
			ok = false
		}
		return ok
	}
	if rec != nil && rec.Complete(result) {
		for i := 0; i < rec.Len() && member(rec.At(result, i)); i++ {
		}
		return ok && content, isError, plain
	}
	_, err := jsonscan.Object(result, member)
	return ok && content && err == nil, isError, plain
}
