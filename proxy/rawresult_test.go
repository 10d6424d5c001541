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
