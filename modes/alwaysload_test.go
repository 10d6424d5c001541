package modes

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
)

func alwaysLoaded(t *mcp.Tool) bool { return t.Meta[AlwaysLoadKey] == true }

// The search modes list every tool they offer with
// _meta["anthropic/alwaysLoad"]: their own tools, the direct-only tools
// and directory mode's pinned tools; an upstream's always_load = false
// takes it off that upstream's tools, never off the surface's own.
func TestSearchModesAlwaysLoad(t *testing.T) {
	env := newTestEnv(t)
	surfaces := func(al map[string]bool) []Surface {
		return []Surface{
			&Tools{API: testAPI(), AlwaysLoad: al},
			&Tools{API: testAPI(), Directory: true, Pinned: []string{"github__create_issue"}, AlwaysLoad: al},
			&Code{API: testAPI(), Timeout: 10 * time.Second, AlwaysLoad: al},
		}
	}
	for _, s := range surfaces(nil) {
		tools := s.Tools(env)
		if len(tools) < 2 {
			t.Fatalf("%s: tools %v", s.Mode(), toolNamesOf(tools))
		}
		for _, tl := range tools {
			if !alwaysLoaded(tl) {
				t.Errorf("%s: %s has _meta %v, want %q: true", s.Mode(), tl.Name, tl.Meta, AlwaysLoadKey)
			}
		}
	}
	for _, s := range surfaces(map[string]bool{"memory": false, "github": false}) {
		for _, tl := range s.Tools(env) {
			own := false
			for _, r := range Reserved {
				own = own || tl.Name == r
			}
			if alwaysLoaded(tl) != own {
				t.Errorf("%s with always_load = false: %s alwaysLoad %v, want %v", s.Mode(), tl.Name, alwaysLoaded(tl), own)
			}
		}
	}
}

// Direct mode leaves _meta as the upstream sent it, unless the
// upstream's always_load says otherwise.
func TestDirectModeAlwaysLoad(t *testing.T) {
	cat := catalog.New("__", Reserved, []catalog.UpstreamInfo{{Name: "a", Prefix: "a"}, {Name: "b", Prefix: "b"}, {Name: "c", Prefix: "c"}})
	schema := json.RawMessage(`{"type":"object"}`)
	for _, up := range []string{"a", "b", "c"} {
		cat.SetTools(up, []*catalog.Entry{
			{Name: "plain", InputSchema: schema},
			{Name: "loaded", InputSchema: schema, Meta: json.RawMessage(`{"anthropic/alwaysLoad":true,"x/keep":1}`)},
		})
	}
	env := &testEnv{cat: cat, deny: map[string]bool{}}
	got := map[string]bool{}
	for _, tl := range (Direct{AlwaysLoad: map[string]bool{"b": true, "c": false}}).Tools(env) {
		got[tl.Name] = alwaysLoaded(tl)
		if strings.HasSuffix(tl.Name, "loaded") && tl.Meta["x/keep"] == nil {
			t.Errorf("%s lost its other _meta: %v", tl.Name, tl.Meta)
		}
	}
	want := map[string]bool{"a__plain": false, "a__loaded": true, "b__plain": true, "b__loaded": true, "c__plain": false, "c__loaded": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("alwaysLoad by tool = %v, want %v", got, want)
	}
	// The catalog's own _meta is never written in place.
	if e := env.Snapshot().ByExposed("c__loaded"); !strings.Contains(string(e.Meta), "alwaysLoad") {
		t.Errorf("catalog entry _meta changed: %s", e.Meta)
	}
}

// What a model must know to use a search surface is in its tools'
// descriptions and stays small: the first contact (the surface's own
// tools in tools/list, and the instructions) is at most 2 KB, with a
// catalog summary naming as many upstreams as it names, with long names
// (30 characters, as in the benchmark catalogs), and while they are
// still starting.
func TestFirstContactBytes(t *testing.T) {
	var infos []catalog.UpstreamInfo
	for i := range 40 {
		infos = append(infos, catalog.UpstreamInfo{Name: fmt.Sprintf("a-rather-long-server-name-%04d", i), Prefix: fmt.Sprintf("s%02d", i)})
	}
	cat := catalog.New("__", Reserved, infos)
	for _, in := range infos {
		cat.SetTools(in.Name, []*catalog.Entry{{Name: "a_tool", Description: "Does a thing.", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	}
	full := &testEnv{cat: cat, deny: map[string]bool{}}
	empty := startingEnv{&testEnv{cat: catalog.New("__", Reserved, infos), deny: map[string]bool{}}}
	api := API{Limits: Limits{Default: 8, Max: 20}, Bounds: catalog.DefaultBounds()}
	for _, env := range []Env{full, empty} {
		for _, s := range []Surface{&Tools{API: api}, &Tools{API: api, Directory: true}, &Code{API: api, Timeout: 55 * time.Second}} {
			n := FirstContact(s, env)
			t.Logf("%s: %d bytes", s.Mode(), n)
			if n > 2048 {
				t.Errorf("%s: first contact %d bytes, want at most 2048", s.Mode(), n)
			}
		}
	}
	d := (&Tools{API: api}).Tools(full)[0].Description
	if !strings.Contains(d, "from 40 MCP servers") || !strings.Contains(d, "and 33 more") {
		t.Errorf("summary: %s", d)
	}
	// The same catalog gives the same bytes (prompt caches stay valid).
	for range 5 {
		if again := (&Tools{API: api}).Tools(full)[0].Description; again != d {
			t.Fatalf("the description changed between two listings:\n%s\n%s", d, again)
		}
	}
}
