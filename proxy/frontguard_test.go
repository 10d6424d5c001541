package proxy

import (
	"strings"
	"testing"
)

func TestCheckFrameIDs(t *testing.T) {
	for _, c := range []struct {
		frame string
		pass  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":"x","method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, true}, // an answer: the SDK judges it
		{`not json`, true},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2.5,"method":"ping"}]`, false},
	} {
		answers, pass := checkFrame([]byte(c.frame))
		if pass != c.pass {
			t.Errorf("%s: pass %v, want %v (%s)", c.frame, pass, c.pass, answers)
		}
	}
	answers, _ := checkFrame([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`))
	if len(answers) != 1 || !strings.HasPrefix(string(answers[0]), `{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"invalid request id 1.5`) {
		t.Fatalf("%s", answers)
	}
}
