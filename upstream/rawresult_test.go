package upstream

import "testing"

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
	}
}
