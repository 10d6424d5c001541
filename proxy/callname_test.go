package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestToolsCallWithoutName: a tools/call whose params
// have no name (or an empty one) is -32602 saying the name is required,
// not "unknown tool """ with a neighbour's name, on either stdio path.
func TestToolsCallWithoutName(t *testing.T) {
	url, _, _ := slowUpstream(t)
	p := startProxyText(t, fmt.Sprintf("[tool_search]\nenabled = false\n[upstreams.slowup]\nurl = %s\n", tomlQuote(url)))
	for _, fast := range []bool{false, true} {
		lc := startLineClient(t, p, fast)
		fastInit(lc)
		for i, params := range []string{`{"arguments":{}}`, `{"name":"","arguments":{}}`} {
			l := string(lc.call(10+i, "tools/call", params))
			if !strings.Contains(l, `"code":-32602`) || !strings.Contains(l, "params.name is required") {
				t.Errorf("fast=%v %s: %s", fast, params, l)
			}
		}
	}
}
