package proxy

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestShapeRaw(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"hi"}]}`, `{"content":[{"type":"text","text":"hi"}]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[],"resultType":"complete"}`, `{"content":[]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"keep":1},"content":[],"isError":true}`, `{"_meta":{"keep":1},"content":[],"isError":true}`},
		{`{"_meta":{"io.modelcontextprotocol\/serverInfo":{}},"content":[]}`, `{"content":[]}`}, // escaped key
		{`{"_meta":{"own":"x"},"content":[]}`, `{"_meta":{"own":"x"},"content":[]}`},
	} {
		got := shapeRaw([]byte(c.in))
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("shapeRaw(%s) = %s: %v", c.in, got, err)
		}
		_ = json.Unmarshal([]byte(c.want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("shapeRaw(%s) = %s, want %s", c.in, got, c.want)
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

// TestStampSpare: an answer with spare capacity (session.AnswerRaw) is
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
		got, ok := stampSpare(b, c.extra, c.complete)
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
		// Written twice (a second MarshalJSON): the same bytes.
		b = make([]byte, len(c.in), len(c.in)+256)
		copy(b, c.in)
		r := &rawToolResult{json: b, modern: c.complete, spare: true}
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
		if got, ok := stampSpare([]byte(in), si, true); ok {
			t.Errorf("%s: stamped in place (%s), want stampRaw", in, got)
		}
	}
}
