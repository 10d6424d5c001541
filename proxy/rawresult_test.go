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
