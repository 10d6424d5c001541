package catalog

import (
	"encoding/json"
	"testing"
)

// A request that names an upstream ("create a GitHub issue") gets that
// upstream's tool before a copy of it elsewhere: a registry's create_issue
// with the same name and description (and no parameters, so the dense
// signal finds it a little nearer), its score raised by the rule's factor.
// A request that names no upstream is ranked as without the rule. (On the
// shipped config.toml catalog the copy passes the github tool without the
// rule when the dense signal is on: integration TestCodeModeSeedExample.)
func TestServerNamedBeforeItsCopy(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string","description":"Repository name"},"title":{"type":"string","description":"Issue title"},"body":{"type":"string","description":"Issue body"}}}`)
	es := []*Entry{
		{ID: "mcp:github:create_issue", Upstream: "github", Name: "create_issue", Exposed: "github__create_issue", Description: "Create a new issue in a GitHub repository", InputSchema: schema},
		{ID: "mcp:registry:create_issue", Upstream: "registry", Name: "create_issue", Exposed: "registry__create_issue", Description: "Create a new issue in a GitHub repository"},
		{ID: "mcp:registry:ingest_github_issues", Upstream: "registry", Name: "ingest_github_issues", Exposed: "registry__ingest_github_issues", Description: "Ingest the issues of a GitHub repository into a search index"},
	}
	for _, f := range filler {
		es = append(es, testIndex(t, [][3]string{f}).docs[0].e)
	}
	p := DefaultRankParams()
	p.Dense = DefaultDenseWeight
	ix := NewIndexWithParams(es, p)
	if got := ids(ix.Search("create a GitHub issue", 3, nil)); len(got) == 0 || got[0] != "mcp:github:create_issue" {
		t.Errorf("create a GitHub issue: %v, want the github upstream's create_issue first", got)
	}
	off := p
	off.ServerNamed = 0
	ixOff := NewIndexWithParams(es, off)
	// The rule's own effect: the named upstream's tool scores higher by
	// about its factor (the rescoring after it is relative to the top).
	score := func(ix *Index, q, id string) float64 {
		for _, h := range ix.Search(q, 5, nil) {
			if h.Entry.ID == id {
				return h.Score
			}
		}
		return 0
	}
	on, without := score(ix, "create a GitHub issue", "mcp:github:create_issue"), score(ixOff, "create a GitHub issue", "mcp:github:create_issue")
	if without == 0 || on < without*(1+p.ServerNamed/2) {
		t.Errorf("github's create_issue scores %.4f with the rule, %.4f without: want about ×%.2f", on, without, 1+p.ServerNamed)
	}
	// A request that names no upstream ranks as without the rule.
	sameHits(t, "with the rule", ix, "without it", ixOff, "open an issue about the crash", "ingest issues into the index")
}
