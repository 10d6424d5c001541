package proxy

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/upstream"
)

// TestToolRefTypos: a direct_only entry or a pinned
// reference that names no tool of its upstream is reported with a
// did-you-mean, by ToolRefProblems (check) and in the log once per entry,
// however often the upstream re-lists.
func TestToolRefTypos(t *testing.T) {
	p, _, logs := loggedProxy(t, `[tool_search]
mode = "directory"
pinned = ["t__ech0", "t__echo"]
[upstreams.t]
url = %s
direct_only = ["ecoh", "echo"]
`)
	want := []string{
		`direct_only "ecoh" of upstream "t": no such tool; did you mean "echo"?`,
		`pinned "t__ech0": upstream "t" has no such tool; did you mean "t__echo"?`,
	}
	if got := p.ToolRefProblems(); !slices.Equal(got, want) {
		t.Fatalf("ToolRefProblems:\n%q\nwant\n%q", got, want)
	}
	p.onToolsChanged("t", mustGet(t, p.ups, "t").Tools("t"), nil) // a re-listing
	for _, w := range want {
		if n := strings.Count(logs.String(), strings.ReplaceAll(w, `"`, `\"`)); n != 1 {
			t.Errorf("%q logged %d times, want once; log:\n%s", w, n, logs.String())
		}
	}
}

func mustGet(t *testing.T, u *upstream.Set, name string) *upstream.Manager {
	t.Helper()
	m, err := u.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
