package upstream

import "testing"

func TestRawPassable(t *testing.T) {
	for _, c := range []struct {
		result      string
		ok, isError bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true, false},
		{`{"content":[],"isError":true}`, true, true},
		{`{"_meta":{"x":1},"content":[],"structuredContent":{"a":1},"resultType":"complete"}`, true, false},
		{`{"content":[],"resultType":"input_required","inputRequests":{}}`, false, false},
		{`{"content":[],"ttlMs":0}`, false, false},
		{`{"structuredContent":{}}`, false, false}, // no content: decoded (and repaired) the usual way
		{`{"content":[]`, false, false},
		{`[]`, false, false},
	} {
		ok, isErr := rawPassable([]byte(c.result))
		if ok != c.ok || (ok && isErr != c.isError) {
			t.Errorf("rawPassable(%s) = %v, %v; want %v, %v", c.result, ok, isErr, c.ok, c.isError)
		}
	}
}
