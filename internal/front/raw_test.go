package front

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/jsonscan"
)

func TestShapeRaw(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"hi"}]}`, `{"content":[{"type":"text","text":"hi"}]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[],"resultType":"complete"}`, `{"content":[]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"keep":1},"content":[],"isError":true}`, `{"_meta":{"keep":1},"content":[],"isError":true}`},
		{`{"_meta":{"io.modelcontextprotocol\/serverInfo":{}},"content":[]}`, `{"content":[]}`}, // escaped key
		{`{"_meta":{"own":"x"},"content":[]}`, `{"_meta":{"own":"x"},"content":[]}`},
	} {
		got := ShapeRaw([]byte(c.in))
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("ShapeRaw(%s) = %s: %v", c.in, got, err)
		}
		_ = json.Unmarshal([]byte(c.want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("ShapeRaw(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestStampRaw(t *testing.T) {
	si := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcp-toolsearch"}}
	for _, c := range []struct {
		in       string
		extra    map[string]any
		complete bool
		want     string
	}{
		{`{"content":[]}`, nil, true, `{"content":[],"resultType":"complete"}`},
		{`{"content":[]}`, si, true, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-toolsearch"}},"resultType":"complete"}`},
		{`{"_meta":{"keep":1}, "content":[{"type":"text","text":"x"}],"isError":true}`, si, true,
			`{"_meta":{"keep":1,"io.modelcontextprotocol/serverInfo":{"name":"mcp-toolsearch"}},"content":[{"type":"text","text":"x"}],"isError":true,"resultType":"complete"}`},
		// a key the upstream's _meta has keeps its value (annotateServerInfo)
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[]}`, si, true, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[],"resultType":"complete"}`},
		{`{"content":[],"resultType":"complete"}`, nil, true, `{"content":[],"resultType":"complete"}`},
		{`{"content":[]}`, si, false, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-toolsearch"}}}`},
	} {
		got, err := stampRaw([]byte(c.in), c.extra, c.complete)
		if err != nil {
			t.Fatalf("stampRaw(%s): %v", c.in, err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("stampRaw(%s) = %s: %v", c.in, got, err)
		}
		_ = json.Unmarshal([]byte(c.want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("stampRaw(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if _, err := stampRaw([]byte(`{"content":`), nil, true); err == nil {
		t.Error("stampRaw of a cut object: no error")
	}
}

// TestStampSpare: an answer with spare capacity (ToolCallAnswer) is
// stamped in place with the bytes stampRaw writes; results that have a
// _meta or resultType of their own, or are not compact objects, are
// left to stampRaw.
func TestStampSpare(t *testing.T) {
	si := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcp-toolsearch", "version": "1"}}
	for _, c := range []struct {
		in       string
		extra    map[string]any
		complete bool
	}{
		{`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`, si, true},
		{`{"content":[],"isError":true}`, si, true},
		{`{"content":[]}`, nil, true},
		{`{"content":[]}`, si, false},
	} {
		b := make([]byte, len(c.in), len(c.in)+256)
		copy(b, c.in)
		got, ok := stampSpare(b, c.extra, c.complete, false)
		if !ok {
			t.Fatalf("%s: refused", c.in)
		}
		want, err := stampRaw([]byte(c.in), c.extra, c.complete)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n stampSpare %s\n stampRaw   %s", c.in, got, want)
		}
		if &got[0] != &b[0] {
			t.Errorf("%s: not stamped in place", c.in)
		}
		// Known to have neither member (a ToolCallAnswer answer): not
		// scanned, the same bytes.
		b = make([]byte, len(c.in), len(c.in)+256)
		copy(b, c.in)
		if got, ok := stampSpare(b, c.extra, c.complete, true); !ok || string(got) != string(want) {
			t.Errorf("%s: known:\n stampSpare %s\n stampRaw   %s", c.in, got, want)
		}
		// Written twice (a second MarshalJSON): the same bytes.
		b = make([]byte, len(c.in), len(c.in)+256)
		copy(b, c.in)
		r := &RawResult{json: b, modern: c.complete, spare: true}
		if c.extra != nil {
			r.SetMeta(c.extra)
		}
		for i := 0; i < 2; i++ {
			if got, err := r.MarshalJSON(); err != nil || string(got) != string(want) {
				t.Errorf("%s: MarshalJSON #%d = %s, %v; want %s", c.in, i+1, got, err, want)
			}
		}
	}
	for _, in := range []string{`{"_meta":{},"content":[]}`, `{"content":[],"resultType":"complete"}`, `{"content":[]} `, `{}`, `{"content":`} {
		if got, ok := stampSpare([]byte(in), si, true, false); ok {
			t.Errorf("%s: stamped in place (%s), want stampRaw", in, got)
		}
	}
}

// TestShapeStampFromRecord: ShapeRaw and stampRaw give the same bytes
// when they read the result's members from the record the transport's
// scan made (one scan per message) as when they scan it, and
// the record ShapeRaw leaves describes the object it returns.
func TestShapeStampFromRecord(t *testing.T) {
	si := map[string]any{mcp.MetaKeyServerInfo: ServerImpl()}
	for _, in := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1},"resultType":"complete"}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[],"resultType":"complete"}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"keep":1},"content":[],"isError":true}`,
		`{"_meta":{"io.modelcontextprotocol\/serverInfo":{}},"content":[]}`,
		`{"_meta":{"own":"x"},"content":[]}`,
		`{ "content" : [ ] , "resultType" : "complete" , "_meta" : { } }`,
		`{"content":[],"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"resultType":"complete"}`,
		`{"content":[],"resultType":"complete","resultType":"complete"}`,
	} {
		frame := []byte(`{"jsonrpc":"2.0","id":1,"result":` + in + `}`)
		var rec, mrec jsonscan.Members
		var b []byte
		if _, err := jsonscan.ObjectNested2(frame, "result", &rec, "_meta", &mrec, func(k, v []byte) bool {
			if string(k) == "result" {
				b = v
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !rec.Complete(b) && !bytes.Contains(b, []byte(`"h":8`)) {
			t.Fatalf("%s: the frame's scan left no record", in)
		}
		want := ShapeRaw(bytes.Clone(b))
		got := ShapeRawRec(b, &rec, &mrec)
		if !bytes.Equal(got, want) {
			t.Fatalf("ShapeRawRec(%s) = %s, ShapeRaw %s", in, got, want)
		}
		if rec.Complete(got) {
			var again jsonscan.Members
			if _, err := jsonscan.ObjectMembers(got, &again); err != nil || again.Len() != rec.Len() {
				t.Fatalf("ShapeRawRec(%s) = %s: record of %d members, a scan finds %d (%v)", in, got, rec.Len(), again.Len(), err)
			}
			for i := range rec.Len() {
				k, v := rec.At(got, i)
				k2, v2 := again.At(got, i)
				if !bytes.Equal(k, k2) || !bytes.Equal(v, v2) {
					t.Fatalf("ShapeRawRec(%s) = %s: member %d recorded %s:%s, scanned %s:%s", in, got, i, k, v, k2, v2)
				}
			}
		}
		for _, complete := range []bool{true, false} {
			var brec, bmrec jsonscan.Members
			_, _ = jsonscan.ObjectNested2(frame, "result", &brec, "_meta", &bmrec, nil)
			sw, werr := stampRaw(bytes.Clone(b), si, complete)
			sg, gerr := appendStampRaw(nil, b, &brec, &bmrec, si, complete)
			if !bytes.Equal(sw, sg) || (werr == nil) != (gerr == nil) {
				t.Fatalf("appendStampRaw(%s) from the frame's records = %s %v, scanning %s %v", b, sg, gerr, sw, werr)
			}
		}
		for _, complete := range []bool{true, false} {
			sw, werr := stampRaw(bytes.Clone(got), si, complete)
			sg, gerr := appendStampRaw(nil, got, &rec, &mrec, si, complete)
			if !bytes.Equal(sw, sg) || (werr == nil) != (gerr == nil) {
				t.Fatalf("appendStampRaw(%s) from the record = %s %v, scanning %s %v", got, sg, gerr, sw, werr)
			}
		}
	}
}
