package modes

import "testing"

// TestUnavailableSentence: the sentence the instructions and the catalog
// summary carry for unavailable upstreams agrees in number with them.
func TestUnavailableSentence(t *testing.T) {
	one := []Unavailable{{Name: "fetch", Reason: "exec: \"uvx\": executable file not found in $PATH"}}
	two := append(one, Unavailable{Name: "crash", Reason: "the process exited with status 3 during initialize"})
	for _, c := range []struct {
		us   []Unavailable
		want string
	}{
		{nil, ""},
		{one, ` MCP server "fetch" is unavailable (exec: "uvx": executable file not found in $PATH); its tools are not in the catalog.`},
		{two, ` 2 MCP servers are unavailable: "fetch" (exec: "uvx": executable file not found in $PATH), "crash" (the process exited with status 3 during initialize); their tools are not in the catalog.`},
	} {
		if got := unavailableSentence(c.us); got != c.want {
			t.Errorf("unavailableSentence(%d upstreams) =\n%q\nwant\n%q", len(c.us), got, c.want)
		}
	}
}
