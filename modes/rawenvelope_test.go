package modes

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// TestEnvelopeResultRaw: the envelope result built from a raw plain
// result equals the one MakeEnvelope builds from the go-sdk's decoding of
// the same bytes; results that are not plain are refused (decoded way).
func TestEnvelopeResultRaw(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"{\"a\":1,\"b\":[1,2.5,\"x\"]}"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":true}`,
		`{"content":[{"type":"text","text":"x"}],"isError":false,"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":12345678901,"s":"é"}}`,
		`{"content":[{"type":"text","text":"[1]"}],"structuredContent":null}`,
		`{"content":[],"structuredContent":[1,2]}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"k":{"v":true}}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":null}`,
	} {
		m, ok := envelopeResultRaw(json.RawMessage(raw))
		if !ok {
			t.Errorf("%s: refused", raw)
			continue
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			t.Fatal(err)
		}
		want, err := MakeEnvelope(catalog.Hit{}, &res, ViaTool)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(m)
		wb, _ := json.Marshal(want.Result)
		if string(gb) != string(wb) || !reflect.DeepEqual(jsonValue(t, gb), jsonValue(t, wb)) {
			t.Errorf("%s:\n raw way %s\n decoded %s", raw, gb, wb)
		}
	}
	for _, raw := range []string{
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`,
		`{"content":[{"type":"text","text":"x","_meta":{"a":1}}]}`,
		`{"content":[{"type":"text","text":"x"}],"task":{"taskId":"t"}}`,
		`{"content":null}`,
		`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":[1]}`,
		`[1]`,
		`{"content":`,
	} {
		if m, ok := envelopeResultRaw(json.RawMessage(raw)); ok {
			t.Errorf("%s: taken raw (%v), want the decoded way", raw, m)
		}
	}
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
