package catalog

import (
	"slices"
	"strings"
	"testing"
)

// Failure classes of the search, each on a tiny catalog of our own written
// for it (not bench queries): the expected tool ranks first and its match
// strength says honestly how well it fits.

func firstIDs(res []Scored, n int) []string {
	var ids []string
	for i := 0; i < len(res) && i < n; i++ {
		ids = append(ids, res[i].Entry.ID)
	}
	return ids
}

// Stemming collisions: "news" is no plural of "new", "pope" no form of
// "pop", "plane" of "plan", so a tool that creates new things, a soda tool
// and a trip planner are not reached by those words, and the words' own
// forms still meet ("planes", "coding").
func TestStemGuard(t *testing.T) {
	for w, want := range map[string]string{
		"news": "news", "new": "new", "pope": "pope", "popes": "pope", "plane": "plane", "planes": "plane",
		"plan": "plan", "planning": "plan", "code": "code", "coding": "code", "coded": "code", "write": "write",
		"writing": "write", "files": "fil", "creates": "creat", "created": "creat", "hopping": "hop", "hoping": "hope",
	} {
		if got := stem(w); got != want {
			t.Errorf("stem(%q) = %q, want %q", w, got, want)
		}
	}
	ix := testIndex(t, append([][3]string{
		{"feed:headlines", "Latest news headlines from around the world.", ""},
		{"items:create_item", "Create a new item in the store.", ""},
		{"soda:pop_flavors", "List the pop flavors of a soda brand.", ""},
		{"vatican:papal_audience", "Schedule of the Pope's public audiences.", ""},
		{"travel:plan_trip", "Plan a trip itinerary.", ""},
		{"air:track_plane", "Track a plane in flight by its tail number.", ""},
	}, filler...))
	for q, want := range map[string]string{
		"latest news about the pope": "mcp:feed:headlines",
		"when does the pope speak":   "mcp:vatican:papal_audience",
		"where is my plane now":      "mcp:air:track_plane",
	} {
		res := ix.Search(q, 5, nil)
		if len(res) == 0 || res[0].Entry.ID != want {
			t.Errorf("%q: first %v, want %s", q, firstIDs(res, 3), want)
		}
		for _, s := range res {
			// A hit by meaning alone (the dense signal: "plane" is near
			// "trip") matches no word and is no collision.
			if len(s.Matched) == 0 {
				continue
			}
			if s.Entry.ID == "mcp:items:create_item" || s.Entry.ID == "mcp:soda:pop_flavors" && !strings.Contains(q, "pop ") || s.Entry.ID == "mcp:travel:plan_trip" {
				t.Errorf("%q reaches %s through a stem collision (matched %v)", q, s.Entry.ID, s.Matched)
			}
		}
	}
}

// Calibration: a hit that matches only generic words is never strong, and
// one that matches the one informative word of a short request as a side
// word of its own (the weather of a workout, space weather) is not strong
// either; the tool named for it is.
func TestStrengthCalibration(t *testing.T) {
	base := append([][3]string{
		{"fit:get_activity_weather", "Get the weather conditions recorded during a workout activity.", ""},
		{"space:donki_events", "Space weather events: solar flares and geomagnetic storms.", ""},
		{"code:find_usage", "Find usages of a symbol; the file to look in is optional.", ""},
		{"res:resource_links", "Returns up to ten links to resources.", ""},
	}, filler...)
	ix := testIndex(t, base)
	for _, q := range []string{"tell me the weather", "weather forecast for a city"} {
		for _, s := range ix.Search(q, 5, nil) {
			if MatchLevel(s.Strength) == MatchStrong {
				t.Errorf("%q: %s is strong (%.2f), want at most partial: the catalog has no weather tool", q, s.Entry.ID, s.Strength)
			}
		}
	}
	for _, s := range ix.Search("look up facts", 5, nil) {
		if MatchLevel(s.Strength) == MatchStrong {
			t.Errorf("look up facts: %s is strong (%.2f) on generic words %v", s.Entry.ID, s.Strength, s.Matched)
		}
	}
	ix = testIndex(t, append([][3]string{{"wx:get_weather", "Current weather for a city.", ""}}, base...))
	found := false
	for _, s := range ix.Search("tell me the weather", 2, nil) {
		if s.Entry.ID == "mcp:wx:get_weather" {
			found = true
			if MatchLevel(s.Strength) != MatchStrong {
				t.Errorf("tell me the weather: get_weather is %s (%.2f), want strong", MatchLevel(s.Strength), s.Strength)
			}
		} else if MatchLevel(s.Strength) == MatchStrong {
			t.Errorf("tell me the weather: %s is strong beside get_weather", s.Entry.ID)
		}
	}
	if !found {
		t.Errorf("tell me the weather: get_weather not in the first two")
	}
}

// Calibration by the name's operation verb: a hit whose name has the
// request's verb and object is strong though its name has another word
// (read_text_file for "read a file"); one that has the verb only in its
// name and the object only in its description is not (read_comments of a
// Figma file), nor is one whose name is all verbs and shares one of two
// (write_query for "write a file"); a name of one verb the request has is
// (search for "search the web").
func TestStrengthByNameVerb(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"fs:read_text_file", "Read the complete contents of a file from the file system as text.", ""},
		{"fs:read_media_file", "Read an image or audio file and return it base64-encoded.", ""},
		{"figma:read_comments", "Get all comments on a Figma file.", ""},
		{"db:write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database.", ""},
		{"web:search", "Search the web and return the first results.", ""},
	}, filler...))
	level := map[string]string{}
	for _, q := range []string{"read a file", "write a file", "search the web"} {
		for _, s := range ix.Search(q, 10, nil) {
			level[q+" "+s.Entry.ID] = MatchLevel(s.Strength)
		}
	}
	for key, want := range map[string]string{
		"read a file mcp:fs:read_text_file":   MatchStrong,
		"read a file mcp:fs:read_media_file":  MatchStrong,
		"read a file mcp:figma:read_comments": MatchPartial,
		"write a file mcp:db:write_query":     MatchPartial,
		"search the web mcp:web:search":       MatchStrong,
	} {
		if got := level[key]; got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

// Latin-script languages: a German, French, Spanish, Italian or Portuguese
// request reaches the tools its English would, its function words are
// dropped, and a word that is another English word as written ("tempo")
// means its translation once the language is told; an English request
// reaches a tool described in one of those languages.
func TestLatinLanguages(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"wx:get_forecast", "Weather forecast for a city: temperature, rain and wind for the next days.", ""},
		{"music:set_tempo", "Set the tempo of the metronome in beats per minute.", ""},
		{"de:dateien_suchen", "Sucht Dateien in einem Ordner und zeigt die Treffer an.", ""},
	}, filler...))
	for _, q := range []string{
		"Wie wird das Wetter morgen in Berlin?",
		"Quel temps fera-t-il demain à Paris ?",
		"¿Qué tiempo hará mañana en Madrid?",
		"Che tempo farà domani a Roma?",
		"Como vai estar o tempo amanhã em Lisboa?",
		"Wetter Berlin", // no function word: the unknown word is still translated
	} {
		res := ix.Search(q, 3, nil)
		if len(res) == 0 || res[0].Entry.ID != "mcp:wx:get_forecast" {
			t.Errorf("%q: first %v, want get_forecast", q, firstIDs(res, 3))
		}
	}
	// As English, "tempo" is the metronome's.
	if res := ix.Search("set the tempo to 120", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:music:set_tempo" {
		t.Errorf("set the tempo: %v", firstIDs(res, 3))
	}
	if res := ix.Search("search files in a folder", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:de:dateien_suchen" {
		t.Errorf("English request, German tool: %v", firstIDs(res, 3))
	}
	for q, want := range map[string]int{"Wie wird das Wetter morgen?": 0, "find a hotel in Paris": -1, "¿Dónde está el hotel?": 2, "Che tempo fa": 4} {
		if got := latinLanguage(q, 0); got != want {
			t.Errorf("latinLanguage(%q) = %d, want %d", q, got, want)
		}
	}
	if got := translationsOf(stem("weather")); !slices.Contains(got, "wetter") || !slices.Contains(got, "clima") {
		t.Errorf("translationsOf(weather) = %v, want wetter and clima among them", got)
	}
}

// Schema text: the allowed values of a parameter ("enum") are indexed, and
// the example values of a parameter description weigh less than its
// words, so a request for the weather in a city reaches the weather tool,
// not a search tool whose location parameter gives "Chicago, IL" as an
// example.
func TestSchemaEnumsAndExamples(t *testing.T) {
	for in, want := range map[string]string{
		"City and state, e.g. Chicago, IL":                    "City and state,  ",
		"The unit (for example celsius). Defaults to metric.": "The unit ( ). Defaults to metric.",
		"Search terms such as names; at most 10":              "Search terms  ; at most 10",
		"A nutmeg. Grated":                                    "A nutmeg. Grated",
		"A regex: ^a+$":                                       "A regex: ^a+$",
	} {
		if got := withoutExamples(in); got != want {
			t.Errorf("withoutExamples(%q) = %q, want %q", in, got, want)
		}
	}
	ix := testIndex(t, append([][3]string{
		{"wx:current_weather", "Current weather conditions for a city.", `{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["celsius","fahrenheit","kelvin"]}}}`},
		{"places:local_search", "Search local businesses and places.", `{"type":"object","properties":{"location":{"type":"string","description":"City and state, e.g. Chicago, IL"},"query":{"type":"string"}}}`},
		{"gh:list_issue_states", "List issues of a repository.", `{"type":"object","properties":{"state":{"type":"string","enum":["open","closed","merged"]}}}`},
	}, filler...))
	if res := ix.Search("current weather conditions in Chicago, IL", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:wx:current_weather" {
		t.Errorf("current weather conditions in Chicago, IL: %v, want current_weather first", firstIDs(res, 3))
	}
	// The example's words are damped: they weigh as a parameter name,
	// not as the description.
	rest, ex := splitExamples("City and state, e.g. Chicago, IL")
	if strings.Contains(rest, "Chicago") || !strings.Contains(ex, "Chicago") {
		t.Errorf("splitExamples: rest %q, examples %q", rest, ex)
	}
	if res := ix.Search("temperature in fahrenheit", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:wx:current_weather" {
		t.Errorf("fahrenheit (an enum value): %v, want current_weather first", firstIDs(res, 3))
	}
	if res := ix.Search("merged issues", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:gh:list_issue_states" {
		t.Errorf("merged issues: %v, want list_issue_states first", firstIDs(res, 3))
	}
}

// An English request with words that are function words elsewhere ("in",
// and "IL" for Illinois, Italian "il") stays English.
func TestLatinLanguageNotFromEnglish(t *testing.T) {
	for _, q := range []string{"current weather conditions in Chicago, IL", "a file in a folder", "me too"} {
		if got := latinLanguage(q, 0); got != -1 {
			t.Errorf("latinLanguage(%q) = %d, want -1 (English)", q, got)
		}
	}
}

// Paraphrase and implied tool: "which files are inside my photos folder"
// asks for a listing of a directory ("folder" is a directory, "which …
// are" a listing, "photos" only which folder), not for photos.
func TestImpliedListing(t *testing.T) {
	ix := testIndex(t, append([][3]string{
		{"fs:list_directory", "List the files and subdirectories in a directory.", ""},
		{"fs:create_directory", "Create a new directory.", ""},
		{"space:rover_photos", "Photos taken by the Mars rovers, by camera and date.", ""},
	}, filler...))
	if res := ix.Search("what's in this directory", 3, nil); len(res) == 0 || res[0].Entry.ID != "mcp:fs:list_directory" {
		t.Errorf("what's in this directory: %v, want list_directory first", firstIDs(res, 3))
	}
	// Here the file tools that name "file" come close (write_file, whose
	// change the listing question damps, and move_file): in the first three.
	res := ix.Search("which files are inside my photos folder", 3, nil)
	if !slices.Contains(firstIDs(res, 3), "mcp:fs:list_directory") || slices.Contains(firstIDs(res, 3), "mcp:space:rover_photos") {
		t.Errorf("which files are inside my photos folder: %v, want list_directory in the first three and no photo tool", firstIDs(res, 3))
	}
	if !namesInstance("my", "folder") || namesInstance("the", "folder") || namesInstance("my", "weather") {
		t.Errorf("namesInstance: want only a possessive before a named software object")
	}
}
