package modes

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

// Direct mode sends each tool's search hint in _meta["anthropic/searchHint"]
// (clients that search deferred tools themselves score its words), keeps
// an upstream's own hint, and leaves the rest of _meta as the upstream
// sent it.
func TestDirectSearchHint(t *testing.T) {
	env := newTestEnv(t)
	cat := env.cat
	cat.SetTools("memory", []*catalog.Entry{
		{Name: "read_graph", Description: "Read the entire knowledge graph"},
		{Name: "create_entities", Description: "Create entities in the knowledge graph", Meta: json.RawMessage(`{"anthropic/searchHint":"add nodes","x/keep":1}`)},
		{Name: "search_nodes", Description: "Search for nodes in the knowledge graph by a query.", Meta: json.RawMessage(`{"x/keep":2}`)},
	})
	tools := Direct{}.Tools(env)
	byName := map[string]int{}
	for i, tl := range tools {
		byName[tl.Name] = i
	}
	hintOf := func(name string) (string, map[string]any) {
		i, ok := byName[name]
		if !ok {
			t.Fatalf("%s not listed", name)
		}
		h, _ := tools[i].Meta["anthropic/searchHint"].(string)
		return h, tools[i].Meta
	}
	h, meta := hintOf("memory__search_nodes")
	if h == "" || len(h) > 100 || !strings.Contains(h, "nodes") || !strings.Contains(h, "find") {
		t.Errorf("search_nodes hint %q: want its telling words and the other verbs of search, at most 100 characters", h)
	}
	if meta["x/keep"] == nil {
		t.Errorf("search_nodes lost its own _meta: %v", meta)
	}
	if h, meta := hintOf("memory__create_entities"); h != "add nodes" || meta["x/keep"] == nil {
		t.Errorf("create_entities: hint %q, _meta %v; want the upstream's own hint and _meta", h, meta)
	}
	if h, _ := hintOf("github__create_issue"); h == "" {
		t.Errorf("github__create_issue has no hint")
	}
}

// An upstream served under its own names (prefix = "") is passed through
// as it sent its tools: no hint is added.
func TestDirectNoHintUnprefixed(t *testing.T) {
	cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "everything", Prefix: ""}})
	cat.SetTools("everything", []*catalog.Entry{{Name: "echo", Description: "Echoes back the input message."}})
	env := &testEnv{cat: cat, deny: map[string]bool{}}
	tools := Direct{}.Tools(env)
	if len(tools) != 1 {
		t.Fatalf("%d tools listed, want 1", len(tools))
	}
	for _, tl := range tools {
		if tl.Meta != nil {
			t.Errorf("%s: _meta %v, want none (passed through as sent)", tl.Name, tl.Meta)
		}
	}
}

// viewEnv is a testEnv whose searches use an index over only the entries
// its policy allows, as the proxy's per-view indexes are.
type viewEnv struct{ *testEnv }

func (e viewEnv) SearchIndex(snap *catalog.Snapshot) *catalog.Index {
	var allowed []*catalog.Entry
	for _, en := range snap.Entries {
		if e.Allowed(en) {
			allowed = append(allowed, en)
		}
	}
	return catalog.NewIndex(allowed)
}

// A tool denied to a client cannot change the search hints of the tools
// it sees: hints come from the client's own view of the catalog.
func TestDirectSearchHintIgnoresDenied(t *testing.T) {
	hints := func(withDenied bool) map[string]string {
		cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "files", Prefix: "files"}})
		es := []*catalog.Entry{
			{Name: "read_file", Description: "Read the complete contents of a file from the file system."},
			{Name: "write_file", Description: "Create a new file or overwrite an existing file with new content."},
		}
		deny := map[string]bool{}
		if withDenied {
			// Shares "file" and "contents" with the others: it shifts the
			// statistics every hint is chosen by.
			es = append(es, &catalog.Entry{Name: "delete_file", Description: "Delete a file and its contents forever from the file system, file by file."})
			deny["mcp:files:delete_file"] = true
		}
		cat.SetTools("files", es)
		env := viewEnv{&testEnv{cat: cat, deny: deny}}
		out := map[string]string{}
		for _, tl := range (Direct{}).Tools(env) {
			h, _ := tl.Meta["anthropic/searchHint"].(string)
			out[tl.Name] = h
		}
		return out
	}
	without, with := hints(false), hints(true)
	if len(with) != 2 {
		t.Fatalf("listed %v, want the two allowed tools", with)
	}
	for name, h := range without {
		if with[name] != h {
			t.Errorf("%s: hint %q with a denied tool in the catalog, %q without: a denied tool shows through", name, with[name], h)
		}
	}
}
