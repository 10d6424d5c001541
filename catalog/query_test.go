package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Tests for the search failure classes (wrong language, unsegmented
// scripts, verbs, weak matches), on small catalogs of our own.

func testIndex(t *testing.T, tools [][3]string) *Index {
	t.Helper()
	return NewIndex(testEntries(t, tools))
}

// testEntries returns the entries of tools ({"upstream:name",
// description, input schema or ""}) as testIndex indexes them.
func testEntries(t *testing.T, tools [][3]string) []*Entry {
	t.Helper()
	var es []*Entry
	for _, tl := range tools {
		e := &Entry{ID: "mcp:" + tl[0], Upstream: strings.Split(tl[0], ":")[0], Name: strings.Split(tl[0], ":")[1], Description: tl[1]}
		if tl[2] != "" {
			e.InputSchema = json.RawMessage(tl[2])
		}
		e.Exposed = e.Upstream + "__" + e.Name
		es = append(es, e)
	}
	return es
}

// filler tools give the idf statistics a realistic spread.
var filler = [][3]string{
	{"gh:create_issue", "Create a new issue in a GitHub repository.", ""},
	{"gh:list_pull_requests", "List pull requests of a repository.", ""},
	{"mail:send_email", "Send an email message to one or more recipients.", ""},
	{"cal:list_events", "List the events of a calendar between two dates.", ""},
	{"web:fetch_page", "Fetch a web page and return its text.", ""},
	{"db:run_query", "Run a read-only SQL query against the database.", ""},
	{"fs:write_file", "Write text to a file, replacing its contents.", ""},
	{"fs:move_file", "Move or rename a file or directory.", ""},
	{"maps:directions", "Get driving, walking or transit directions between two places.", ""},
	{"news:top_headlines", "Top news headlines by country and category.", ""},
}

func top(ix *Index, q string, n int) []string {
	var ids []string
	for _, s := range ix.Search(q, n, nil) {
		ids = append(ids, s.Entry.ID)
	}
	return ids
}

// Class 1: a tool whose long description says what the query says beats a
// one-line tool that shares one name part with it.
func TestLongDescriptionNotPunished(t *testing.T) {
	long := "Retrieve detailed metadata about a file or directory: its size in bytes, creation time, " +
		"last modification time, last access time, permissions in octal and symbolic form, owner and group, " +
		"whether it is a regular file, a directory or a symbolic link, and the target of a link. " +
		"Only works within allowed directories. Use this to inspect a file before reading or changing it; " +
		"large directories are not listed, only described."
	tools := append([][3]string{
		{"fs:get_file_info", long, `{"type":"object","properties":{"path":{"type":"string"}}}`},
		{"fs:list_directory", "List a directory.", `{"type":"object","properties":{"path":{"type":"string"}}}`},
	}, filler...)
	ix := testIndex(t, tools)
	if got := top(ix, "show the permissions, owner and modification time of a directory", 3); len(got) == 0 || got[0] != "mcp:fs:get_file_info" {
		t.Errorf("top hits %v, want mcp:fs:get_file_info first", got)
	}
}

// Class 4: tokens.
func TestTokenizerClass4(t *testing.T) {
	for _, c := range []struct {
		in       string
		want     []string
		unwanted []string
	}{
		{"getURLs", []string{"get", "url"}, []string{"ur", "ls"}},
		{"listAPIsAndIDs", []string{"list", "api", "id"}, []string{"ap", "is", "i"}},
		{"HTTPServer", []string{"http", "server"}, nil},
		{"the user's repositories", []string{"user", "repositori"}, []string{"s"}},
		{"don't delete", []string{"delete"}, []string{"t"}},
	} {
		got := Tokenize(c.in)
		for _, w := range c.want {
			if !slices.Contains(got, stem(w)) && !slices.Contains(got, w) {
				t.Errorf("Tokenize(%q) = %q: missing %q", c.in, got, w)
			}
		}
		for _, w := range c.unwanted {
			if slices.Contains(got, w) {
				t.Errorf("Tokenize(%q) = %q: has %q", c.in, got, w)
			}
		}
	}
}

func TestQueryClass4(t *testing.T) {
	tools := append([][3]string{
		{"scrape:getURLs", "Extract every link found on a page.", ""},
		{"geo:forward_geocoding", "Convert a street address into latitude and longitude.", ""},
		{"post:lookup_zipcode", "Find the zipcode of a town.", ""},
		{"zip:compress", "Compress files into a zip archive.", ""},
		{"cal:create_event", "", `{"type":"object","properties":{"calendar_id":{"type":"string","description":"Calendar to add the event to"},"title":{"type":"string"},"start_time":{"type":"string"}}}`},
		{"cal:event_colors", "List the colors an event can have.", ""},
		{"fs:list_roots", "List the root directories the server may access.", ""},
		{"fs:read_text_file", "Read the complete contents of a text file.", ""},
		{"net:get_ip", "Returns the caller's public address.", ""},
		{"geo:find_address", "Find the postal address of a place and my current location.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	for _, c := range []struct{ query, want string }{
		{"extract all urls from this page", "mcp:scrape:getURLs"},
		{"Geocding of 10 Downing Street", "mcp:geo:forward_geocoding"},
		{"zip codes of Springfield", "mcp:post:lookup_zipcode"},
		{"create an event in my calendar", "mcp:cal:create_event"},
		{"read /srv/root/notes/root.txt", "mcp:fs:read_text_file"},
		{"using the Get IP API, find my address", "mcp:net:get_ip"},
	} {
		got := top(ix, c.query, 3)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: top hits %v, want %s first", c.query, got, c.want)
		}
	}
}

// Class 4, compounds the other way: an unknown query word splits into two
// known terms.
func TestQuerySplitsCompound(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"post:postal_area", "Describe the area a zip code covers.", ""},
		{"zip:compress", "Compress files into a zip archive.", ""},
	}, filler...))
	if got := top(ix, "what area does zipcode 12345 cover", 3); len(got) == 0 || got[0] != "mcp:post:postal_area" {
		t.Errorf("top hits %v", got)
	}
	if got := top(ix, "which area has this postcode", 3); len(got) == 0 || got[0] != "mcp:post:postal_area" {
		t.Errorf("top hits %v", got)
	}
}

// Class 5: a query the catalog cannot answer gets no strong hit and a note;
// one it can answer gets a strong first hit and no note.
func TestMatchStrength(t *testing.T) {
	ops := [][3]string{
		{"k8s:restart_pod", "Restart a Kubernetes pod.", ""},
		{"k8s:get_logs", "Get the logs of a pod.", ""},
		{"alert:send_slack_alert", "Send an alert to a Slack channel.", ""},
		{"alert:page_oncall", "Page the on-call engineer.", ""},
		{"metrics:query_prometheus", "Run a PromQL query.", ""},
		{"deploy:rollback", "Roll back a deployment to its previous release.", ""},
	}
	ix := testIndex(t, ops)
	hits := func(q string) []Hit {
		var hs []Hit
		for _, s := range ix.Search(q, 5, nil) {
			h := MakeHit(s.Entry, s.Score, Bounds{})
			h.Match, h.Matched = MatchLevel(s.Strength), strings.Join(s.Matched, ", ")
			hs = append(hs, h)
		}
		return hs
	}
	hs := hits("send a gmail email")
	if len(hs) > 0 && hs[0].Match == MatchStrong {
		t.Errorf("send a gmail email: first hit %s is a strong match (%s)", hs[0].ID, hs[0].Matched)
	}
	if note := SearchNote(hs); !strings.Contains(note, "no strong match") && !strings.Contains(note, "no match") {
		t.Errorf("note %q", note)
	}
	if len(hs) > 0 && hs[0].Matched != "send" {
		t.Errorf("matched %q, want send", hs[0].Matched)
	}
	hs = hits("restart the kubernetes pod")
	if len(hs) == 0 || hs[0].ID != "mcp:k8s:restart_pod" || hs[0].Match != MatchStrong || SearchNote(hs) != "" {
		t.Errorf("restart the kubernetes pod: %+v note %q", hs, SearchNote(hs))
	}
	if SearchNote(nil) == "" {
		t.Error("no hits: no note")
	}
	// A strong hit after partial ones: no "no strong match" note.
	hs = hits("send a gmail email")
	if len(hs) > 1 {
		hs[0].Match, hs[1].Match = MatchPartial, MatchStrong
		if note := SearchNote(hs); note != "" {
			t.Errorf("second hit strong: note %q", note)
		}
	}
	// A query naming the tool is strong even when its words are rare.
	hs = hits("page_oncall")
	if len(hs) == 0 || hs[0].ID != "mcp:alert:page_oncall" || hs[0].Match != MatchStrong {
		t.Errorf("page_oncall: %+v", hs)
	}
	for s, want := range map[float64]string{0: MatchWeak, 0.29: MatchWeak, 0.3: MatchPartial, 0.59: MatchPartial, 0.6: MatchStrong, 1: MatchStrong} {
		if got := MatchLevel(s); got != want {
			t.Errorf("MatchLevel(%v) = %q, want %q", s, got, want)
		}
	}
}

// With leaves the index it starts from unchanged and
// gives the same results as a full build over the new entries.
func TestIndexWithIsCopyOnWrite(t *testing.T) {
	mk := func(up, name, desc string) *Entry {
		return &Entry{ID: "mcp:" + up + ":" + name, Upstream: up, Name: name, Exposed: up + "__" + name, Description: desc}
	}
	base := []*Entry{mk("gh", "create_issue", "Create an issue"), mk("gh", "close_issue", "Close an issue"),
		mk("mail", "send_email", "Send an email"), mk("cal", "list_events", "List calendar events")}
	ix := NewIndex(base)
	before := fmt.Sprint(scoresOf(ix, "create an issue"), scoresOf(ix, "send email"))
	var nx = ix
	var cur []*Entry
	for round := 0; round < 200; round++ { // enough rounds to compact
		cur = []*Entry{mk("gh", "create_issue", fmt.Sprintf("Create an issue (v%d)", round)), mk("gh", "open_pr", "Open a pull request")}
		nx = nx.With("gh", cur)
	}
	if got := fmt.Sprint(scoresOf(ix, "create an issue"), scoresOf(ix, "send email")); got != before {
		t.Fatalf("the original index changed:\n got %s\nwant %s", got, before)
	}
	full := NewIndex(append(append([]*Entry{}, base[2:]...), cur...))
	for _, q := range []string{"create an issue", "send email", "pull request", "v199", "close"} {
		if a, b := fmt.Sprint(scoresOf(nx, q)), fmt.Sprint(scoresOf(full, q)); a != b {
			t.Errorf("%q: With gives %s, a full build %s", q, a, b)
		}
	}
}

func scoresOf(ix *Index, q string) []string {
	var out []string
	for _, s := range ix.Search(q, 10, nil) {
		out = append(out, fmt.Sprintf("%s=%.5f", s.Entry.ID, s.Score))
	}
	return out
}

// A request for several things is split into clauses at sentence ends and
// at words that start a further task; abbreviations and decimals are not
// sentence ends.
func TestQueryClauses(t *testing.T) {
	for _, c := range []struct {
		q    string
		want [][]string // terms of each clause
	}{
		{"Get the weather in Lisbon. Then convert 200 dollars to euros!", [][]string{{"get", "weather", "lisbon"}, {"convert", "200", "dollar", "euro"}}},
		// No split after "e.g." or inside "3.5k"; "and" before a task verb
		// starts a further task.
		{"find flights e.g. to Rome, budget 3.5k and book a hotel", [][]string{{"find", "flight", "e.g", "e", "g", "rome", "budget", "3.5k", "3", "5k"}, {"book", "hotel"}}},
		{"convert 10 dollars to euros and make a deposit", [][]string{{"convert", "10", "dollar", "euro"}, {"make", "deposit"}}},
		// "and" before a noun, or before a verb whose clause has one word,
		// does not split.
		{"find flights and hotels in Rome", [][]string{{"find", "flight", "hotel", "rome"}}},
		{"read and write files", [][]string{{"read", "write", "fil"}}},
		{"Second, send the invoice to Ann", [][]string{{"second", "send", "invoic", "ann"}}},
		{"List my repositories. Second, open an issue", [][]string{{"list", "repositori"}, {"second", "open", "issu"}}},
		{"Summarize the report; additionally email it to Ann", [][]string{{"summariz", "report"}, {"additionalli", "email", "ann"}}},
		{"Translate this page. After that, post it to the team channel.", [][]string{{"translat", "pag"}, {"after", "post", "team", "channel"}}},
		{"Can you help? Thanks.", [][]string{{"help", "thank"}}},
		{"Book a table for two tonight. Can you help?", [][]string{{"book", "tabl", "two", "tonight", "help"}}},
		// A sentence that asks for nothing (no task verb used as a verb,
		// no request word, no question, no task-start word) gives context
		// to the task next to it; it is no task of its own.
		{"I missed the dentist again this morning! Create a reminder for Friday.", [][]string{{"miss", "dentist", "again", "morn", "creat", "reminder", "friday"}}},
		{"Our team grew to forty people. Summarize the hiring report.", [][]string{{"team", "grew", "forti", "peopl", "summariz", "hir", "report"}}},
		// A question asks for something.
		{"Is the museum open on Monday? Book two tickets.", [][]string{{"museum", "open", "monday"}, {"book", "two", "ticket"}}},
		{"My flight lands at noon. I need a taxi to the hotel. Also reserve a table.", [][]string{{"flight", "land", "noon", "taxi", "hotel"}, {"reserv", "tabl"}}},
		// A first sentence followed by "First, …" sums up the steps after
		// it: its words count for the whole query but in no clause (its
		// best tool, a fashion-event tool, is no task's own).
		{"I need help planning a fashion event. First, get the school schedule. Then create the event in Tokyo.", [][]string{{"first", "get", "school", "schedul"}, {"event", "creat", "tokyo"}}},
		{"I need help planning a fashion event. Firstly get the school schedule, then create the event in Tokyo.", [][]string{{"firstli", "get", "school", "schedul"}, {"event", "creat", "tokyo"}}},
		{"I need help planning a fashion event. To begin, get the school schedule. Then create the event in Tokyo.", [][]string{{"begin", "get", "school", "schedul"}, {"event", "creat", "tokyo"}}},
		// "First" inside a sentence, or a first sentence before a single
		// step (no summary of several), changes nothing.
		{"Get the first page of the report. Then email it to Ann.", [][]string{{"get", "first", "pag", "report"}, {"email", "ann"}}},
		{"I need help planning a fashion event. First, get the school schedule.", [][]string{{"help", "plan", "fashion", "event"}, {"first", "get", "school", "schedul"}}},
		// Seven tasks are seven clauses (up to maxSegs, 8): the last two
		// are not lumped together.
		{"Get the weather in Lisbon. Then convert dollars to euros. Also book a hotel room. Then send the invoice. Also list my repositories. Then translate the page. Finally call a taxi.",
			[][]string{{"get", "weather", "lisbon"}, {"convert", "dollar", "euro"}, {"book", "hotel", "room"}, {"send", "invoic"}, {"list", "repositori"}, {"translat", "pag"}, {"finalli", "call", "taxi"}}},
	} {
		aq := analyzeQuery(c.q)
		got := make([][]string, aq.nseg)
		for _, qt := range aq.terms {
			for j := 0; j < aq.nseg; j++ {
				if qt.segs&(1<<j) != 0 {
					got[j] = append(got[j], qt.term)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: clauses %v, want %v", c.q, got, c.want)
		}
	}
}

// A request for two tasks, one of which many near-identical tools match:
// the one tool for the other task still reaches the first hits (the
// per-clause signal, RankParams.ClauseMix), where the summed BM25F score
// alone ranks every weather tool above it.
func TestClauseMixFindsEachTask(t *testing.T) {
	tools := append([][3]string{
		{"wx:get_weather", "Get the current weather for a city: temperature, wind, rain.", ""},
		{"wx:get_weather_forecast", "Weather forecast for a city for the next days.", ""},
		{"wx:get_hourly_weather", "Hourly weather forecast for a city.", ""},
		{"wx:weather_alerts", "Severe weather alerts and warnings for a city.", ""},
		{"wx2:city_weather", "Weather report and forecast by city name.", ""},
		{"wx2:weather_history", "Past weather of a city, hour by hour.", ""},
		{"wx3:forecast", "Weather forecast, hourly and daily, with alerts.", ""},
		{"fx:convert_currency", "Convert an amount between currencies.", ""},
	}, filler...)
	q := "I'm going to Lisbon next week: what is the weather forecast, the hourly weather and are there weather alerts for the city? Also convert 200 dollars."
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0 // the lexical signal only: what the clauses change
	if got := top(NewIndexWithParams(es, p), q, 5); !slices.Contains(got, "mcp:fx:convert_currency") {
		t.Errorf("top 5 %v, want mcp:fx:convert_currency among them", got)
	}
	p.ClauseMix = 0
	p.Bag = 0 // its per-clause share lifts the converter too
	if got := top(NewIndexWithParams(es, p), q, 5); slices.Contains(got, "mcp:fx:convert_currency") {
		t.Errorf("without the clause signal the converter is in the top 5 too (%v): the test no longer shows what the signal changes", got)
	}
}

// Different wording (class 3) reached through the GloVe table: words used
// in the same contexts as the tool's words (flights ~ airline, food intake
// ~ calories), which WordNet's synonyms do not link.
func TestGloVeRelatedWords(t *testing.T) {
	tools := append([][3]string{
		{"travel:book_tickets", "Book airline tickets and compare fares.", ""},
		{"health:diet_log", "Count calories and keep a diary of meals.", ""},
		{"travel:hotel_search", "Search hotels by city and dates.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	for q, want := range map[string]string{
		"cheapest flights from Lisbon to Tokyo": "mcp:travel:book_tickets",
		"log my daily food intake":              "mcp:health:diet_log",
	} {
		if got := top(ix, q, 1); len(got) == 0 || got[0] != want {
			t.Errorf("%q: top %v, want %s", q, got, want)
		}
	}
}

// For "write a file" a read tool showed `matched: write`
// although it reaches "write" only through the semantic table. A word
// matched only through a related word is in Related, not Matched.
func TestMatchedVersusRelated(t *testing.T) {
	ix := testIndex(t, [][3]string{
		{"fs:read_file", "Read the complete contents of a file from the file system.", ""},
		{"fs:write_file", "Create a new file or completely overwrite an existing file with new content.", ""},
		{"fs:list_directory", "Get a detailed listing of all files and directories in a specified path.", ""},
	})
	by := map[string]Scored{}
	for _, s := range ix.Search("write a file", 5, nil) {
		by[s.Entry.ID] = s
	}
	w, ok := by["mcp:fs:write_file"]
	if !ok || !slices.Equal(w.Matched, []string{"write", "file"}) || len(w.Related) != 0 {
		t.Errorf("write_file: matched %q related %q, want [write file] and none", w.Matched, w.Related)
	}
	r, ok := by["mcp:fs:read_file"]
	if !ok || slices.Contains(r.Matched, "write") || !slices.Contains(r.Matched, "file") {
		t.Errorf("read_file: matched %q related %q, want file and never write", r.Matched, r.Related)
	}
	for id, s := range by {
		for _, m := range s.Matched {
			if slices.Contains(s.Related, m) {
				t.Errorf("%s: %q both matched and related", id, m)
			}
		}
	}
	t.Logf("read_file: matched %q related %q; write_file: matched %q", r.Matched, r.Related, w.Matched)
}

// A request's operation verb decides between tools that share its object
// words (class 3): "find entities in the knowledge graph" asks
// for a look-up, so search_nodes comes before create_entities and
// delete_entities, whose names match "entities" but which change the
// graph (RankParams.VerbMismatch, ReadWriteMismatch; find and search are
// related through toolVerbGroups).
func TestVerbMismatchFindsLookUp(t *testing.T) {
	es := []*Entry{
		ent("memory", "create_entities", "Create multiple new entities in the knowledge graph"),
		ent("memory", "delete_entities", "Delete multiple entities and their associated relations from the knowledge graph"),
		ent("memory", "add_observations", "Add new observations to existing entities in the knowledge graph"),
		ent("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query"),
		ent("memory", "read_graph", "Read the entire knowledge graph"),
		ent("fs", "write_file", "Create a new file or completely overwrite an existing file with new content."),
		ent("fs", "read_text_file", "Read the complete contents of a file from the file system as text."),
	}
	for _, f := range filler {
		up, name, _ := strings.Cut(f[0], ":")
		es = append(es, ent(up, name, f[1]))
	}
	ix := NewIndex(es)
	for q, want := range map[string]string{
		"find entities in the knowledge graph": "mcp:memory:search_nodes",
		"save this text to a file":             "mcp:fs:write_file",
	} {
		if got := ids(ix.Search(q, 3, nil)); len(got) == 0 || got[0] != want {
			t.Errorf("%q: %v, want %s first", q, got, want)
		}
	}
	p := DefaultRankParams()
	p.VerbMismatch, p.ReadWriteMismatch = 1, 1
	if got := ids(NewIndexWithParams(es, p).Search("find entities in the knowledge graph", 3, nil)); len(got) > 0 && got[0] == "mcp:memory:search_nodes" {
		t.Errorf("without the verb signal search_nodes is first too (%v): the test no longer shows what the signal changes", got)
	}
	var rel []string
	for _, r := range related().of(stem("find")) {
		rel = append(rel, related().word(r))
	}
	if !slices.Contains(rel, stem("search")) {
		t.Errorf("related terms of find %v lack search", rel)
	}
	for name, verb := range map[string]string{"searchNodes": "find", "hotel.book": "reserve", "hotel_room_pricing.get": "fetch"} {
		if g, v := toolVerbGroup[stem(verb)], nameVerb(name); g == 0 || g != v {
			t.Errorf("%s and %s: groups %d, %d", verb, name, g, v)
		}
	}
	if v := nameVerb("weather.forecast"); v != 0 {
		t.Errorf("weather.forecast: verb group %d, want none", v)
	}
}

// A long request (more than relatedLongQuery terms) gets no related terms:
// it has the task's own words, and the expansion's posting lists were the
// query's slowest part (BenchmarkQuery p99); a short one does.
func TestRelatedSkippedForLongQueries(t *testing.T) {
	ix := NewIndex([]*Entry{
		ent("fs", "search_files", "Search for files by name."),
		ent("fs", "write_file", "Write a file."),
	})
	short := "find my files"
	long := short
	for i := 0; i <= relatedLongQuery; i++ {
		long += fmt.Sprintf(" word%c%c", 'a'+i%26, 'a'+i/26)
	}
	for q, want := range map[string]bool{short: true, long: false} {
		aq := analyzeQuery(q)
		ix.mu.RLock()
		ix.resolve(&aq)
		ix.expandRelated(&aq)
		ix.mu.RUnlock()
		got := false
		for _, qt := range aq.terms {
			got = got || qt.kind == termRelated
		}
		if got != want {
			t.Errorf("%d words: related terms %v, want %v", len(strings.Fields(q)), got, want)
		}
	}
}

// TestReadVerbGroups: the groups counted as look-ups (readVerbs: a
// request that only looks up is not served by a tool that changes
// something) are find, get and show; writing verbs are outside them
// (save/write/store must not count as a look-up).
func TestReadVerbGroups(t *testing.T) {
	for _, w := range []string{"find", "search", "lookup", "get", "fetch", "read", "show", "list", "view"} {
		if g := toolVerbGroup[stem(w)]; g == 0 || int(g) > readVerbGroups {
			t.Errorf("%q: group %d, want a look-up group (1..%d)", w, g, readVerbGroups)
		}
	}
	for _, w := range []string{"save", "write", "store", "persist", "create", "add", "delete", "remove", "update", "edit", "run", "send", "book", "buy"} {
		if g := toolVerbGroup[stem(w)]; int(g) <= readVerbGroups {
			t.Errorf("%q: group %d, counted as a look-up", w, g)
		}
	}
}

// A first sentence that sums up the steps after it ("… First, …") is no
// task of its own (analyzedQuery.overview): as a clause, its best tool (a
// fashion-event tool, which no step asks for) was lifted like a step's own
// tool, above the tools of the steps. The same request without "First"
// keeps the old order.
func TestOverviewIsNoTask(t *testing.T) {
	tools := append([][3]string{
		{"events:create_fashion_event", "Plan a fashion event: a fashion show or fashion week with designers.", ""},
		{"school:get_school_schedule", "Get the schedule of a school.", ""},
		{"school:get_school_info", "Get the address and the head of a school.", ""},
		{"team:get_team_members", "Get the members of a team.", ""},
		{"team:get_team_info", "Get the name and the projects of a team.", ""},
	}, filler...)
	es := testEntries(t, tools)
	p := DefaultRankParams()
	p.Semantic = 0
	ix := NewIndexWithParams(es, p)
	const steps = " get the schedule of Maplewood school. Then get the members of team 7."
	// With "First," the summary's tool ranks by the whole-query score
	// alone, under the steps' tools and their siblings (5th); without it,
	// the summary is a clause and its tool is lifted to 3rd.
	q := "I need your help planning our fashion week. First," + steps
	if got := top(ix, q, 3); slices.Contains(got, "mcp:events:create_fashion_event") || !slices.Contains(got[:2], "mcp:school:get_school_schedule") || !slices.Contains(got[:2], "mcp:team:get_team_members") {
		t.Errorf("%q: top 3 %v, want the two steps' tools first and no fashion tool", q, got)
	}
	q = "I need your help planning our fashion week. Please" + steps
	if got := top(ix, q, 3); !slices.Contains(got, "mcp:events:create_fashion_event") {
		t.Errorf("%q: top 3 %v: the test no longer shows what the overview rule changes", q, got)
	}
}

// A question word names what the answer is (expandQuestions): "When …"
// asks for a date, "Where …" for a place, "Who …" for a person. They are
// stopwords, so the four history tools below, alike but for what they
// return, tied and the first by name (event_about) won every question.
func TestQuestionWordsAskForKind(t *testing.T) {
	tools := append([][3]string{
		{"history:event_about", "Get the summary of a treaty or event signed in history.", ""},
		{"history:event_date", "Get the date of a treaty or event signed in history.", ""},
		{"history:event_place", "Get the location of a treaty or event signed in history.", ""},
		{"history:event_people", "Get the person of a treaty or event signed in history.", ""},
	}, filler...)
	// A catalog of some size: a related term in more than 5% of the
	// tools is left out (maxRelatedDFShare), and the filler has a date.
	for _, w := range strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega") {
		tools = append(tools, [3]string{"greek:" + w, "Print the letter " + w + ".", ""}, [3]string{"upper:" + w, "Print the capital " + w + ".", ""})
	}
	ix := testIndex(t, tools)
	for q, want := range map[string]string{
		"When was the Treaty of Lisbon signed?":  "mcp:history:event_date",
		"Where was the Treaty of Lisbon signed?": "mcp:history:event_place",
		"Who signed the Treaty of Lisbon?":       "mcp:history:event_people",
	} {
		if got := top(ix, q, 1); len(got) == 0 || got[0] != want {
			t.Errorf("%q: first %v, want %s", q, got, want)
		}
	}
}
