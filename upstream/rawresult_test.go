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

// TestRecordsOf: a result's records travel with it only when they hold
// the whole result; DropRecords leaves the result without.
func TestRecordsOf(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":-1,"result":{"content":[],"_meta":{"a":1}}}`)
	var rm, mm jsonscan.Members
	var result []byte
	if _, err := jsonscan.ObjectNested2(frame, "result", &rm, "_meta", &mm, func(k, v []byte) bool {
		if string(k) == "result" {
			result = v
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	rec := recordsOf(result, &rm, &mm)
	if rec == nil || !rec.Result.Complete(result) || rec.Result.Len() != 2 {
		t.Fatalf("recordsOf = %+v, want the result's two members", rec)
	}
	_, meta := rec.Result.At(result, 1)
	if !rec.Meta.Complete(meta) || rec.Meta.Len() != 1 {
		t.Fatalf("the _meta record does not hold %s", meta)
	}
	r := &RawResult{JSON: result, Records: rec}
	if got, gotMeta := r.Members(); got != &rec.Result || gotMeta != &rec.Meta {
		t.Fatal("Members does not return the Records' own records")
	}
	r.DropRecords()
	if r.Records != nil {
		t.Fatal("DropRecords left the Records")
	}
	if got, gotMeta := r.Members(); got != nil || gotMeta != nil {
		t.Fatal("Members of a result without Records is not nil, nil")
	}
	r.DropRecords() // none: nothing happens
	if recordsOf(result[:len(result)-1], &rm, &mm) != nil || recordsOf(nil, &rm, &mm) != nil {
		t.Fatal("recordsOf took records that do not hold the text")
	}
}
