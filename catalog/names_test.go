package catalog

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestAssignNamesRules(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 5)
	in := []NameInput{
		{ID: ToolID("a", "echo"), Prefix: "a", Tool: "echo"},
		{ID: ToolID("b", "echo"), Prefix: "b", Tool: "echo"},
		{ID: ToolID("gosdk", "elicit (form)"), Prefix: "gosdk", Tool: "elicit (form)"},
		{ID: ToolID("x", "café"), Prefix: "x", Tool: "café"},
		{ID: ToolID("x", "作成"), Prefix: "x", Tool: "作成"},
		{ID: ToolID("x", "作る"), Prefix: "x", Tool: "作る"},
		{ID: ToolID("x", long), Prefix: "x", Tool: long},
		{ID: ToolID("p", "dup"), Prefix: "", Tool: "dup"},
		{ID: ToolID("q", "dup"), Prefix: "", Tool: "dup"},
		{ID: ToolID("q", "Dup2"), Prefix: "", Tool: "Dup2"},
		{ID: ToolID("r", "dup2"), Prefix: "", Tool: "dup2"},
		{ID: ToolID("r", "tool_search"), Prefix: "", Tool: "tool_search"},
	}
	got := AssignNames(in, "__", []string{"tool_search", "tool_describe", "tool_call", "tool_search_code"})
	if len(got) != len(in) {
		t.Fatalf("got %d names for %d inputs", len(got), len(in))
	}
	seen := map[string]string{}
	for id, n := range got {
		if !NameRE.MatchString(n) {
			t.Errorf("%s: name %q breaks %s", id, n, NameRE)
		}
		if other, ok := seen[strings.ToLower(n)]; ok {
			t.Errorf("%s and %s share name %q", id, other, n)
		}
		seen[strings.ToLower(n)] = id
	}
	want := map[string]string{
		ToolID("a", "echo"):              "a__echo",
		ToolID("b", "echo"):              "b__echo",
		ToolID("gosdk", "elicit (form)"): "gosdk__elicit_form",
		ToolID("x", "café"):              "x__cafe",
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("%s: got %q, want %q", id, got[id], n)
		}
	}
	for _, id := range []string{ToolID("p", "dup"), ToolID("q", "dup"), ToolID("q", "Dup2"), ToolID("r", "dup2"), ToolID("r", "tool_search"), ToolID("x", long), ToolID("x", "作成")} {
		n := got[id]
		if len(n) < 8 || n[len(n)-7] != '_' {
			t.Errorf("%s: expected a hash-suffixed name, got %q", id, n)
		}
	}
	if got[ToolID("x", "作成")] == got[ToolID("x", "作る")] {
		t.Errorf("non-ASCII names collapsed to one name")
	}
	// A lone all-CJK name still keeps the separator and gets a hash.
	lone := AssignNames([]NameInput{{ID: ToolID("y", "検索"), Prefix: "y", Tool: "検索"}}, "__", nil)[ToolID("y", "検索")]
	if !strings.HasPrefix(lone, "y__tool_") || len(lone) != len("y__tool_")+6 {
		t.Errorf("lone CJK tool name became %q, want y__tool_<6 hex>", lone)
	}
}

func TestAssignNamesStableAcrossOrder(t *testing.T) {
	var in []NameInput
	for i := 0; i < 200; i++ {
		up := fmt.Sprintf("u%d", i%5)
		tool := fmt.Sprintf("t%d", i%37)
		in = append(in, NameInput{ID: ToolID(up, tool+fmt.Sprint(i)), Prefix: "", Tool: tool})
	}
	first := AssignNames(in, "__", nil)
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 5; k++ {
		r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		again := AssignNames(in, "__", nil)
		for id, n := range first {
			if again[id] != n {
				t.Fatalf("order %d: %s named %q, before %q", k, id, again[id], n)
			}
		}
	}
}

func FuzzAssignNames(f *testing.F) {
	f.Add("srv", "tool name (x)")
	f.Add("", "ツール")
	f.Fuzz(func(t *testing.T, prefix, tool string) {
		got := AssignNames([]NameInput{{ID: ToolID("u", tool), Prefix: prefix, Tool: tool}, {ID: ToolID("v", tool), Prefix: prefix, Tool: tool}}, "__", nil)
		for _, n := range got {
			if !NameRE.MatchString(n) {
				t.Fatalf("name %q breaks the rule", n)
			}
		}
		if got[ToolID("u", tool)] == got[ToolID("v", tool)] {
			t.Fatalf("clash not resolved")
		}
	})
}

// Room for a client's prefix.
func TestAssignNamesMax(t *testing.T) {
	in := []NameInput{{ID: "mcp:b:free-tier-usage", Prefix: "billing-cost-management-mcp-server", Tool: "free-tier-usage"}, {ID: "mcp:b:x", Prefix: "b", Tool: "x"}}
	full := AssignNames(in, "__", nil)
	if full["mcp:b:free-tier-usage"] != "billing-cost-management-mcp-server__free-tier-usage" {
		t.Fatalf("64: %v", full)
	}
	short := AssignNamesMax(in, "__", nil, 47)
	if n := short["mcp:b:free-tier-usage"]; len(n) > 47 || !NameRE.MatchString(n) {
		t.Fatalf("47: %q", n)
	}
	if short["mcp:b:x"] != "b__x" {
		t.Fatalf("a short name changed: %v", short)
	}
}

// TestNameClashes: tools that want the same exposed name (across
// upstreams, or in case only) and a tool that wants a reserved name are
// reported with every id; a tool without a rival is not.
func TestNameClashes(t *testing.T) {
	in := []NameInput{
		{ID: "mcp:alpha:echo", Prefix: "alpha", Tool: "echo"},
		{ID: "mcp:beta:alpha__echo", Prefix: "", Tool: "alpha__echo"},
		{ID: "mcp:gamma:Run", Prefix: "gamma", Tool: "Run"},
		{ID: "mcp:gamma:run", Prefix: "gamma", Tool: "run"},
		{ID: "mcp:delta:tool_search", Prefix: "", Tool: "tool_search"},
		{ID: "mcp:delta:alone", Prefix: "", Tool: "alone"},
	}
	got := NameClashes(in, "__", []string{"tool_search"})
	want := []Clash{
		{Name: "alpha__echo", IDs: []string{"mcp:alpha:echo", "mcp:beta:alpha__echo"}},
		{Name: "gamma__Run", IDs: []string{"mcp:gamma:Run", "mcp:gamma:run"}},
		{Name: "tool_search", IDs: []string{"mcp:delta:tool_search"}, Reserved: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NameClashes = %+v\nwant %+v", got, want)
	}
	names := AssignNames(in, "__", []string{"tool_search"})
	for _, c := range got {
		for _, id := range c.IDs {
			if strings.EqualFold(names[id], c.Name) {
				t.Errorf("%s kept the contested name %q", id, names[id])
			}
		}
	}
}
