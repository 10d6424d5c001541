package catalog

import (
	"slices"
	"testing"
)

// Class 2: Thai, Lao, Khmer and Burmese are written without
// spaces between words; a clause must not become one term (or, split at
// every combining vowel or tone mark, a heap of partial syllables that
// matches nothing). Examples of our own.
func TestThaiSegmented(t *testing.T) {
	tools := append([][3]string{
		{"th:weather_forecast", "พยากรณ์อากาศรายวันสำหรับเมืองที่ระบุ", ""}, // daily weather forecast for the given city
		{"th:translate_text", "แปลข้อความระหว่างภาษาต่างๆ", ""},             // translate text between languages
		{"th:convert_currency", "แปลงสกุลเงินตามอัตราแลกเปลี่ยนล่าสุด", ""}, // convert currency at the latest exchange rate
		{"th:book_table", "จองโต๊ะร้านอาหารตามวันและเวลาที่ต้องการ", ""},    // book a restaurant table at the wanted date and time
		{"th:track_parcel", "ติดตามสถานะพัสดุด้วยหมายเลขพัสดุ", ""},         // track a parcel's status by its number
	}, filler...)
	ix := testIndex(t, tools)
	for q, want := range map[string]string{
		"ขอพยากรณ์อากาศกรุงเทพพรุ่งนี้":        "mcp:th:weather_forecast", // the forecast for Bangkok tomorrow
		"อัตราแลกเปลี่ยนเงินบาทเป็นดอลลาร์":    "mcp:th:convert_currency", // the baht to dollar exchange rate
		"ช่วยแปลข้อความนี้เป็นภาษาอังกฤษหน่อย": "mcp:th:translate_text",   // please translate this text into English
		"อยากจองโต๊ะร้านอาหารคืนนี้":           "mcp:th:book_table",       // I want to book a restaurant table tonight
		"พัสดุของฉันอยู่ที่ไหนแล้ว":            "mcp:th:track_parcel",     // where is my parcel now
	} {
		if got := top(ix, q, 3); len(got) == 0 || got[0] != want {
			t.Errorf("%s: top %v, want %s first", q, got, want)
		}
	}
	// A clause is split into overlapping pieces, not kept whole, and a
	// combining mark stays with its letter.
	toks := Tokenize("ติดตามพัสดุ")
	if len(toks) < 3 || slices.Contains(toks, "ติดตามพัสดุ") {
		t.Errorf("Tokenize(Thai clause) = %q, want overlapping pieces", toks)
	}
	for _, tok := range toks {
		if r := []rune(tok); len(r) > 0 && isMark(r[0]) {
			t.Errorf("Tokenize(Thai clause) has %q, which starts with a combining mark", tok)
		}
	}
	// Latin words inside Thai text stay words.
	if toks := Tokenize("ค้นหา GitHub issue"); !slices.Contains(toks, "github") || !slices.Contains(toks, stem("issue")) {
		t.Errorf("Tokenize(Thai + Latin) = %q, want github and issue", toks)
	}
}

// A query wrapped whole in quotes is the request, not a quoted value: its
// words keep their full weight (200 of bfcl's 1,150 queries are written so).
func TestQuotedRequestIsNotAValue(t *testing.T) {
	for _, q := range []string{`"Find the route from Paris to Lyon"`, "“Find the route from Paris to Lyon”"} {
		aq := analyzeQuery(q)
		for _, qt := range aq.terms {
			if qt.term == "rout" || qt.term == "route" {
				if qt.qw != 1 {
					t.Errorf("%s: %q weighs %v, want 1", q, qt.term, qt.qw)
				}
			}
		}
	}
	// A short quoted value inside a request is still down-weighted.
	aq := analyzeQuery(`create a file named "quarterly report" in my documents`)
	for _, qt := range aq.terms {
		if qt.term == "quarterli" || qt.term == "quarterly" {
			if qt.qw != weightQuotedWord {
				t.Errorf("quoted value %q weighs %v, want %v", qt.term, qt.qw, weightQuotedWord)
			}
		}
	}
}

// A verb that frames a request to the assistant ("show me", "help me",
// "provide me with") is not what the task is about: it no longer puts a
// tool named show_* or help first. Examples of our own.
func TestFramingVerbsWeighLess(t *testing.T) {
	tools := append([][3]string{
		{"law:search_convictions", "Locate individuals based on their crime conviction and location.", ""},
		{"cinema:show_times", "Movie show times.", ""},
		{"cli:help", "Help.", ""},
		{"food:find_restaurants", "Find restaurants by cuisine and city, vegan and vegetarian options included.", ""},
		{"tv:show_details", "Details of a TV show.", ""},
		{"fin:stock_quote", "Current stock quote for a ticker symbol.", ""},
		{"market:find_listings", "Find used and new items in classified listings by keyword and place.", ""},
		{"bikes:bike_specs", "Specs of a bike model: frame size, gears, weight, price.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	// The framing verbs' weight alone: with the dense signal on, "Find me
	// a used bike in Lyon" puts the bike tool (near in meaning) first.
	ix.params.Dense = 0
	for q, want := range map[string]string{
		"Show me the individuals convicted in Texas":          "mcp:law:search_convictions",
		"Can you help me find vegan restaurants in Oslo?":     "mcp:food:find_restaurants",
		"Could you show us the current stock quote for ACME?": "mcp:fin:stock_quote",
		"show details of the TV show Severance":               "mcp:tv:show_details", // not followed by me/us: full weight
		// "find me" names the task (a search), unlike "show me".
		"Find me a used bike in Lyon": "mcp:market:find_listings",
	} {
		if got := top(ix, q, 3); len(got) == 0 || got[0] != want {
			t.Errorf("%s: top %v, want %s first", q, got, want)
		}
	}
	aq := analyzeQuery("Please help me, and remind me at noon, or find me a slot")
	for _, qt := range aq.terms {
		switch qt.term {
		case "help":
			if qt.qw != weightFraming {
				t.Errorf("help (in 'help me') weighs %v, want %v", qt.qw, weightFraming)
			}
		case "remind", "find":
			if qt.qw != 1 {
				t.Errorf("%s (names the task) weighs %v, want 1", qt.term, qt.qw)
			}
		}
	}
}

// Class 2: a tool described only in Chinese is reached by an
// English query through the CC-CEDICT word table, and a Chinese query
// reaches a tool described in English, for words the hand glossary lacks
// (popular, ranking, game, station, stock). Tool names here are opaque on
// purpose: name parts must not carry the match. Examples of our own.
func TestChineseWordTable(t *testing.T) {
	tools := append([][3]string{
		{"zh:bili_rank", "获取热门游戏排行榜", ""},    // the ranking of popular games
		{"zh:ticket12306", "查询火车站列车时刻表", ""}, // train timetables of a railway station
		{"zh:moji", "城市天气预报", ""},            // a city's weather forecast
		{"zh:xueqiu", "获取股票实时行情和公司财报", ""},   // live stock quotes and company reports
		{"en:translate", "Translate text into another language.", ""},
		{"en:exchange_rate", "Currency exchange rate between two currencies.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	for q, want := range map[string]string{
		"ranking of popular games":        "mcp:zh:bili_rank",
		"train timetable for the station": "mcp:zh:ticket12306",
		"weather forecast for Chengdu":    "mcp:zh:moji",
		"live stock quote of Tencent":     "mcp:zh:xueqiu",
		"把这段文字翻译成英文":                      "mcp:en:translate",     // translate this text into English
		"人民币对美元的汇率":                       "mcp:en:exchange_rate", // the RMB to dollar exchange rate
	} {
		if got := top(ix, q, 3); len(got) == 0 || got[0] != want {
			t.Errorf("%s: top %v, want %s first", q, got, want)
		}
	}
}

// A greeting or thanks that opens or closes a request ("Hello, I'm
// seeking…", "Hey there!", "thank you") is no task word: it no longer puts
// a tool named hello_* or HeyGen first. Examples of our own.
func TestGreetingsWeighLess(t *testing.T) {
	tools := append([][3]string{
		{"ws:helloWayStation", "Call this action when the user says 'Hello WayStation'.", ""},
		{"vid:heygen", "HeyGen AI video generation platform.", ""},
		{"jobs:job_finder", "Suggests jobs and careers.", ""},
		{"yt:find_video_tutorial", "Find a video tutorial for a recipe or a craft.", ""},
	}, filler...)
	ix := testIndex(t, tools)
	for q, want := range map[string]string{
		"Hello, I'm seeking a career":                                     "mcp:jobs:job_finder",
		"Hey there! Can you find a video tutorial on baking a lava cake?": "mcp:yt:find_video_tutorial",
	} {
		if got := top(ix, q, 3); len(got) == 0 || got[0] != want {
			t.Errorf("%s: top %v, want %s first", q, got, want)
		}
	}
	for q, want := range map[string]float64{
		"hello, list my files":        weightFraming,
		"say hello world in a banner": 1, // not a greeting of the assistant
		"translate it, thank you":     weightFraming,
	} {
		for _, qt := range analyzeQuery(q).terms {
			if qt.term == "hello" || qt.term == "thank" {
				if qt.qw != want {
					t.Errorf("%q: %s weighs %v, want %v", q, qt.term, qt.qw, want)
				}
			}
		}
	}
}
