package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func ent(up, name, desc string) *Entry {
	return &Entry{ID: "mcp:" + up + ":" + name, Name: name, Exposed: up + "__" + name, Upstream: up, Description: desc}
}

func ids(res []Scored) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Entry.ID
	}
	return out
}

func issueCatalog() []*Entry {
	return []*Entry{
		ent("github", "list_issues", "List issues in a GitHub repository, with filters for state and labels."),
		ent("github", "search_issues", "Search for issues and pull requests across GitHub repositories."),
		ent("github", "update_issue", "Update an existing issue in a GitHub repository."),
		ent("github", "create_issue", "Create a new issue in a GitHub repository."),
		ent("gitlab", "create_issue", "Create a new issue in a GitLab project."),
		ent("slack", "post_message", "Post a message to a Slack channel."),
	}
}

// The seed's own example query (SPEC §4: the query may be in any language).
func TestSearchSeedQueryJapanese(t *testing.T) {
	ix := NewIndex(issueCatalog())
	res := ix.Search("GitHub issue を作成する", 5, nil)
	if len(res) == 0 || res[0].Entry.ID != "mcp:github:create_issue" {
		t.Fatalf("seed query: got %v, want mcp:github:create_issue first", ids(res))
	}
}

func TestSearchJapaneseAndChineseDescriptions(t *testing.T) {
	es := append(issueCatalog(),
		ent("jp", "tenki", "指定した都市の天気予報を取得します。"),
		ent("jp", "honyaku", "テキストを英語に翻訳します。"),
		ent("cn", "kuaidi", "查询快递包裹的物流状态。"),
		ent("cn", "gupiao", "获取股票的实时价格。"),
	)
	ix := NewIndex(es)
	cases := map[string]string{
		"東京の天気予報を教えて":                "mcp:jp:tenki",
		"日本語の文章を翻訳したい":               "mcp:jp:honyaku",
		"查询我的快递":                     "mcp:cn:kuaidi",
		"股票价格":                       "mcp:cn:gupiao",
		"weather forecast for Tokyo": "mcp:jp:tenki", // English query, Japanese description (glossary)
	}
	for q, want := range cases {
		res := ix.Search(q, 3, nil)
		if len(res) == 0 || res[0].Entry.ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ids(res), want)
		}
	}
}

func TestSearchExactNamePromotion(t *testing.T) {
	es := []*Entry{
		ent("a", "send", "Send send send a message; send it now, send it later."),
		ent("b", "send_email", "Send an email message."),
		ent("c", "notify", "Send a notification."),
	}
	ix := NewIndex(es)
	for q, want := range map[string]string{
		"send_email":    "mcp:b:send_email",
		"B__SEND_EMAIL": "mcp:b:send_email", // exposed name, any case
		"mcp:c:notify":  "mcp:c:notify",     // id
		"  notify ":     "mcp:c:notify",
	} {
		res := ix.Search(q, 3, nil)
		if len(res) == 0 || res[0].Entry.ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ids(res), want)
		}
	}
	// "send" is the exact original name of a's tool: it wins although the
	// other two tools mention "send" too.
	if res := ix.Search("send", 3, nil); res[0].Entry.ID != "mcp:a:send" {
		t.Errorf("Search(send) = %v", ids(res))
	}
}

func TestSearchDeterministicTies(t *testing.T) {
	var es []*Entry
	for _, up := range []string{"zeta", "alpha", "mid", "beta"} {
		es = append(es, &Entry{ID: "mcp:" + up + ":ping", Name: "ping", Exposed: up + "__ping", Upstream: "u", Description: "Ping the server."})
	}
	want := []string{"mcp:alpha:ping", "mcp:beta:ping", "mcp:mid:ping", "mcp:zeta:ping"}
	for i := 0; i < 5; i++ {
		ix := NewIndex(es)
		res := ix.Search("ping server", 10, nil)
		if got := ids(res); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: got %v, want %v", i, got, want)
		}
		if res[0].Score != res[3].Score {
			t.Fatalf("scores differ for identical entries: %v", res)
		}
		// Rotate the input order: the result must not change.
		es = append(es[1:], es[0])
	}
	// A smaller limit keeps the first ids in order.
	if got := ids(NewIndex(es).Search("ping", 2, nil)); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("limit 2: got %v, want %v", got, want[:2])
	}
}

func TestSearchPolicyFilterEmptyAndLimits(t *testing.T) {
	ix := NewIndex(issueCatalog())
	allow := func(e *Entry) bool { return e.Upstream != "github" }
	for _, r := range ix.Search("create issue github", 10, allow) {
		if r.Entry.Upstream == "github" {
			t.Errorf("policy-rejected entry returned: %s", r.Entry.ID)
		}
	}
	if res := ix.Search("create issue github", 10, allow); len(res) == 0 || res[0].Entry.ID != "mcp:gitlab:create_issue" {
		t.Errorf("filtered search: got %v", ids(res))
	}
	for _, q := range []string{"", "   ", "!!! ??", "the of and"} {
		if res := ix.Search(q, 10, nil); len(res) != 0 {
			t.Errorf("Search(%q) = %v, want none", q, ids(res))
		}
	}
	if res := ix.Search("issue", 0, nil); res != nil {
		t.Errorf("limit 0 returned %v", ids(res))
	}
	if res := ix.Search("issue", 2, nil); len(res) != 2 {
		t.Errorf("limit 2 returned %d results", len(res))
	}
	if ix.Len() != 6 || ix.Get("mcp:gitlab:create_issue") == nil || ix.Get("nope") != nil {
		t.Errorf("Len/Get wrong: %d", ix.Len())
	}
}

func TestSearchParamsIndexed(t *testing.T) {
	e := ent("maps", "route", "Plan a trip.")
	e.InputSchema = json.RawMessage(`{"type":"object","properties":{"origin":{"type":"string","description":"Start address"},
		"options":{"type":"object","properties":{"avoidTolls":{"type":"boolean","description":"Skip toll roads"}}}}}`)
	ix := NewIndex([]*Entry{e, ent("x", "other", "Something else entirely.")})
	for _, q := range []string{"origin", "toll roads", "avoid tolls"} {
		if res := ix.Search(q, 3, nil); len(res) == 0 || res[0].Entry != e {
			t.Errorf("Search(%q) = %v: parameter names/descriptions not indexed", q, ids(res))
		}
	}
}

func TestWalkParamsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 500; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%03d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	n := 0
	walkParams(json.RawMessage(b.String()), func(string, string) { n++ })
	if n != maxIndexParams {
		t.Errorf("walked %d params, want the cap %d", n, maxIndexParams)
	}
	deep := strings.Repeat(`{"type":"object","properties":{"x":`, 50) + `{"type":"string"}` + strings.Repeat(`}}`, 50)
	n = 0
	walkParams(json.RawMessage(deep), func(string, string) { n++ })
	if n != maxIndexParamDepth {
		t.Errorf("deep schema: walked %d params, want %d (depth cap)", n, maxIndexParamDepth)
	}
	big := `{"description":"` + strings.Repeat("a", maxIndexSchemaBytes) + `","properties":{"x":{}}}`
	n = 0
	walkParams(json.RawMessage(big), func(string, string) { n++ })
	if n != 0 {
		t.Errorf("oversized schema walked (%d params)", n)
	}
	walkParams(json.RawMessage(`[1,2`), func(string, string) { t.Error("invalid JSON walked") })
}

// Incremental Replace must give exactly the results of a full rebuild.
func TestReplaceEqualsRebuild(t *testing.T) {
	base := issueCatalog()
	ix := NewIndex(base)
	newGitHub := []*Entry{
		ent("github", "create_issue", "Open a new issue in a GitHub repository."),
		ent("github", "merge_pull_request", "Merge a pull request on GitHub."),
	}
	ix.Replace("github", newGitHub)
	ix.Replace("slack", nil)
	ix.Replace("jira", []*Entry{ent("jira", "create_ticket", "Create a Jira ticket (issue) in a project.")})
	var all []*Entry
	for _, e := range base {
		if e.Upstream == "gitlab" {
			all = append(all, e)
		}
	}
	all = append(all, newGitHub...)
	all = append(all, ent("jira", "create_ticket", "Create a Jira ticket (issue) in a project."))
	full := NewIndex(all)
	if ix.Len() != full.Len() {
		t.Fatalf("Len: incremental %d, rebuild %d", ix.Len(), full.Len())
	}
	for _, q := range []string{"create issue", "GitHub issue を作成する", "merge pull request", "slack message", "ticket", "list issues", "Create an issue on GitHub. Then merge the pull request and post a slack message."} {
		a, b := ix.Search(q, 10, nil), full.Search(q, 10, nil)
		if !reflect.DeepEqual(ids(a), ids(b)) {
			t.Errorf("%q: incremental %v, rebuild %v", q, ids(a), ids(b))
			continue
		}
		for i := range a {
			if d := a[i].Score - b[i].Score; d > 1e-4 || d < -1e-4 {
				t.Errorf("%q: score %d differs: %v vs %v", q, i, a[i].Score, b[i].Score)
			}
		}
	}
	if ix.Get("mcp:github:list_issues") != nil || ix.Get("mcp:slack:post_message") != nil {
		t.Error("replaced entries still reachable by Get")
	}
	// Many replaces trigger compaction; results stay equal.
	for i := 0; i < 200; i++ {
		ix.Replace("github", newGitHub)
	}
	if got, want := ids(ix.Search("create issue", 10, nil)), ids(full.Search("create issue", 10, nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("after compaction: %v, want %v", got, want)
	}
}

func TestConcurrentSearchAndReplace(t *testing.T) {
	ix := NewIndex(issueCatalog())
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				for _, r := range ix.Search("create issue", 5, nil) {
					if r.Entry == nil {
						t.Error("nil entry")
					}
				}
			}
		}()
	}
	for i := 0; i < 300; i++ {
		if i%2 == 0 {
			ix.Replace("github", nil)
		} else {
			ix.Replace("github", issueCatalog()[:4])
		}
	}
	wg.Wait()
	if ix.Len() != 6 {
		t.Errorf("Len = %d, want 6", ix.Len())
	}
}

// A zero field weight must not make an entry appear twice.
func TestSearchNoDuplicatesWithZeroWeight(t *testing.T) {
	p := DefaultRankParams()
	p.Weight[fieldName] = 0
	ix := NewIndexWithParams(issueCatalog(), p)
	res := ix.Search("create_issue list github new issue", 10, nil)
	seen := map[string]bool{}
	for _, r := range res {
		if seen[r.Entry.ID] {
			t.Fatalf("duplicate %s in %v", r.Entry.ID, ids(res))
		}
		seen[r.Entry.ID] = true
	}
	if len(res) == 0 {
		t.Fatal("no results")
	}
}

// Empty fields (no description, an upstream name that is a stopword) with
// full length normalization (b = 1) must give finite scores.
func TestSearchScoresFiniteWithEmptyFields(t *testing.T) {
	p := DefaultRankParams()
	for f := range p.B {
		p.B[f] = 1
	}
	es := []*Entry{ent("a", "send", ""), ent("b", "send_email", "Send an email."), ent("the", "send_sms", "")}
	ix := NewIndexWithParams(es, p)
	res := ix.Search("send", 10, nil)
	if len(res) != 3 {
		t.Fatalf("got %v, want 3 results", ids(res))
	}
	for _, r := range res {
		if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) || r.Score <= 0 {
			t.Errorf("%s: score %v", r.Entry.ID, r.Score)
		}
	}
}

// Duplicate ids: the later entry wins, and its terms stay searchable.
func TestDuplicateIDLaterWins(t *testing.T) {
	a := &Entry{ID: "mcp:x:t", Name: "t", Upstream: "x", Description: "zebra"}
	b := &Entry{ID: "mcp:x:t", Name: "t", Upstream: "x", Description: "zebra giraffe"}
	ix := NewIndex([]*Entry{a, b})
	if ix.Len() != 1 || ix.Get("mcp:x:t") != b {
		t.Fatalf("Len %d, Get %v", ix.Len(), ix.Get("mcp:x:t"))
	}
	for _, q := range []string{"zebra", "giraffe"} {
		if res := ix.Search(q, 5, nil); len(res) != 1 || res[0].Entry != b {
			t.Errorf("Search(%q) = %v", q, ids(res))
		}
	}
}

// TestNoParams: the fast path that skips decoding empty schemas agrees
// with the decoder.
func TestNoParams(t *testing.T) {
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{`{"type": "object", "properties": {}}`, true},
		{`{"type":"object","properties":{ }}`, true},
		{`{"type": "object"}`, true},
		{`{"type": "object", "properties": {"q": {"type": "string"}}}`, false},
		{`{"$defs": {"a": {"properties": {}}}, "properties": {"q": {}}}`, false},
		{`{"properties": {}, "items": {"properties": {"x": {}}}}`, false},
	} {
		if got := noParams([]byte(c.schema)); got != c.want {
			t.Errorf("noParams(%s) = %v, want %v", c.schema, got, c.want)
		}
		n := 0
		walkParams([]byte(c.schema), func(string, string) { n++ })
		if c.want && n != 0 {
			t.Errorf("%s: walkParams found %d parameters of a schema noParams calls empty", c.schema, n)
		}
	}
}

// TestAnalyzeVerbIsNameVerb: the index build takes a tool's verb from
// the first term of its name as it tokenizes it (no second pass); it
// must equal nameVerb.
func TestAnalyzeVerbIsNameVerb(t *testing.T) {
	a := newAnalyzer(1, false)
	for _, name := range []string{"search_nodes", "createEntities", "hotel.book", "hotel_room_pricing.get",
		"weather.forecast", "the_find_tool", "YouTubeSearch", "getURLs", "  list files ", "获取天气", "", "a.b.c.delete"} {
		d := analyze(&Entry{ID: "x:" + name, Name: name}, a)
		if want := nameVerb(name); d.verb != want {
			t.Errorf("%q: analyze verb %d, nameVerb %d", name, d.verb, want)
		}
	}
}

// TestSortKey: the first 8 bytes, big-endian, zero-padded, for every
// length (the 8-byte fast path and the padded loop agree).
func TestSortKey(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "zzzzzzzzzzzz", "é文", "\xff\x00\x01"} {
		var want uint64
		for i := 0; i < 8; i++ {
			want <<= 8
			if i < len(s) {
				want |= uint64(s[i])
			}
		}
		if got := sortKey(s); got != want {
			t.Errorf("sortKey(%q) = %#x, want %#x", s, got, want)
		}
	}
}
