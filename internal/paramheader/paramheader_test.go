package paramheader

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const schema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"priority":{"type":"integer","x-mcp-header":"Priority"},
	"debug":{"type":"boolean","x-mcp-header":"Debug"},
	"bad":{"type":"object","x-mcp-header":"Bad"},
	"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
	"query":{"type":"string"}}}`

// TestSetThenCheck: what Set sends, Check accepts, for plain, Base64-needing
// and nested values; unannotated and invalid-annotated properties get none.
func TestSetThenCheck(t *testing.T) {
	bs := Bindings(json.RawMessage(schema))
	if len(bs) != 4 {
		t.Fatalf("bindings = %v, want region, priority, debug, opts.zone", bs)
	}
	params := json.RawMessage(`{"name":"t","arguments":{"region":" héllo ","priority":42,"debug":true,"opts":{"zone":"eu-1"},"query":"q","bad":{}}}`)
	h := http.Header{}
	Set(h, bs, params)
	want := map[string]string{"Mcp-Param-Region": "=?base64?IGjDqWxsbyA=?=", "Mcp-Param-Priority": "42", "Mcp-Param-Debug": "true", "Mcp-Param-Zone": "eu-1"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers = %v, want only %v", h, want)
	}
	if err := Check(h, bs, params); err != nil {
		t.Errorf("Check of Set's headers: %v", err)
	}
}

// TestCheckRejects: the cases SEP-2243 says a server MUST reject.
func TestCheckRejects(t *testing.T) {
	bs := Bindings(json.RawMessage(schema))
	params := json.RawMessage(`{"name":"t","arguments":{"region":"Hello"}}`)
	for _, tc := range []struct{ name, header, value, want string }{
		{"missing", "", "", "missing Mcp-Param-Region"},
		{"bad padding", "Mcp-Param-Region", "=?base64?SGVsbG8?=", "not valid Base64"},
		{"bad chars", "Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=", "not valid Base64"},
		{"differs", "Mcp-Param-Region", "World", "does not match"},
		{"absent argument", "Mcp-Param-Debug", "true", "absent or null"},
	} {
		h := http.Header{}
		h.Set("Mcp-Param-Region", "Hello")
		if tc.header != "" {
			h.Set(tc.header, tc.value)
		} else {
			h.Del("Mcp-Param-Region")
		}
		err := Check(h, bs, params)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "header mismatch") {
			t.Errorf("%s: Check = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// Accepted: valid Base64 of the same value; a literal that only looks
	// half-wrapped; an integer written as 42.0.
	for _, v := range []string{"=?base64?SGVsbG8=?=", "Hello"} {
		if err := Check(http.Header{"Mcp-Param-Region": {v}}, bs, params); err != nil {
			t.Errorf("Mcp-Param-Region %q: %v", v, err)
		}
	}
	if err := Check(http.Header{"Mcp-Param-Region": {"=?base64?SGVsbG8="}}, bs, json.RawMessage(`{"arguments":{"region":"=?base64?SGVsbG8="}}`)); err != nil {
		t.Errorf("half-wrapped literal: %v", err)
	}
	if err := Check(http.Header{"Mcp-Param-Priority": {"42.0"}}, bs, json.RawMessage(`{"arguments":{"priority":42}}`)); err != nil {
		t.Errorf("42.0 for 42: %v", err)
	}
	if Bindings(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)) != nil {
		t.Error("a schema without x-mcp-header has bindings")
	}
}
