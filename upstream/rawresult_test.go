package upstream

import (
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

func TestRawPassable(t *testing.T) {
	for _, c := range []struct {
		result             string
		ok, isError, plain bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true, false, true},
		{`{"content":[],"isError":true}`, true, true, true},
		{`{"content":[],"structuredContent":{"_meta":1,"resultType":2}}`, true, false, true}, // nested: not the result's
		{`{"_meta":{"x":1},"content":[],"structuredContent":{"a":1},"resultType":"complete"}`, true, false, false},
		{`{"content":[],"_meta":{}}`, true, false, false},
		{`{"content":[],"resultType":"complete"}`, true, false, false},
		{`{"content":[],"resultType":"input_required","inputRequests":{}}`, false, false, false},
		{`{"content":[],"ttlMs":0}`, false, false, false},
		{`{"structuredContent":{}}`, false, false, false}, // no content: decoded (and repaired) the usual way
		{`{"content":[]`, false, false, false},
		{`[]`, false, false, false},
	} {
		ok, isErr, plain := rawPassable([]byte(c.result))
		if ok != c.ok || (ok && (isErr != c.isError || plain != c.plain)) {
			t.Errorf("rawPassable(%s) = %v, %v, %v; want %v, %v, %v", c.result, ok, isErr, plain, c.ok, c.isError, c.plain)
		}
		// The same answers from the members the frame's scan recorded
		// (wire.decode: ObjectNested), and from a record of other bytes.
		frame := []byte(`{"jsonrpc":"2.0","id":1,"result":` + c.result + `}`)
		var f frameFields
		_, _ = jsonscan.ObjectNested(frame, "result", &f.rm, func(k, v []byte) bool {
			if string(k) == "result" {
				f.result = v
			}
			return true
		})
		if f.result != nil {
			ok, isErr, plain := rawPassable(f.result)
			rok, risErr, rplain := rawPassableRec(f.result, &f.rm)
			if rok != ok || risErr != isErr || rplain != plain {
				t.Errorf("rawPassableRec(%s) = %v, %v, %v; rawPassable %v, %v, %v", c.result, rok, risErr, rplain, ok, isErr, plain)
			}
			if rok, _, _ := rawPassableRec([]byte(c.result), &f.rm); rok != c.ok {
				t.Errorf("rawPassableRec(%s) with another text's record = %v, want %v", c.result, rok, ok)
			}
		}
	}
}
