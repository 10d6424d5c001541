package front

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestDecodeFront(t *testing.T) {
	for _, c := range []struct {
		frame, want string // want: the go-sdk's own decoding, re-encoded
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x", "arguments":{"a":[1,2]}}}`, ""},
		{`{"jsonrpc":"2.0","id":"s-1","method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"to\u006fls/list"}`, ""},    // escaped: the SDK decodes
		{`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, ""},          // escaped id
		{`{"jsonrpc":"2.0","id":2,"result":{"roots":[]}}`, ""},         // an answer
		{`{"jsonrpc":"2.0","id":3,"method":"ping","params":null}`, ""}, // params null
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, ""},
	} {
		got, err := decodeFront([]byte(c.frame))
		if err != nil {
			t.Fatalf("%s: %v", c.frame, err)
		}
		want, err := jsonrpc.DecodeMessage([]byte(c.frame))
		if err != nil {
			t.Fatalf("%s: go-sdk: %v", c.frame, err)
		}
		g, _ := jsonrpc.EncodeMessage(got)
		w, _ := jsonrpc.EncodeMessage(want)
		if string(g) != string(w) {
			t.Errorf("%s: decoded as %s, the go-sdk as %s", c.frame, g, w)
		}
	}
	for _, bad := range []string{`{"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"`, `nope`} {
		if _, err := decodeFront([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// BenchmarkFrontDecode: one tools/call line decoded by the go-sdk
// (jsonrpc.DecodeMessage: a fresh 32 KiB decoder buffer per internal
// Unmarshal) and by decodeFront.
//
//	go test ./proxy -run XXX -bench FrontDecode -benchmem
func BenchmarkFrontDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"gh__list_issues","arguments":{"owner":"octo","repo":"hello","state":"open"}}}`)
	b.Run("go-sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeFront", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeFront(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
