package catalog

import (
	"strings"
	"testing"
)

// TestFailureClassExamples checks illustrative examples of each search
// failure class 1–5 (marked below; tiny catalogs written from the examples,
// not bench queries): the expected tool is the first hit (or in the first
// three where it need only be found), and the match
// strength says honestly whether it fits (a "no strong match" note when
// the first hit is not strong).
func TestFailureClassExamples(t *testing.T) {
	const longInfo = "Retrieve detailed metadata about a file or directory: size, creation time, last modified " +
		"time, last access time, permissions, owner and type. Only works within allowed directories; use it " +
		"to inspect a file before reading or changing it. Large directories are described, not listed."
	tools := append([][3]string{
		// class 1
		{"fs:get_file_info", longInfo, ""},
		{"fs:list_roots", "List the roots.", ""},
		{"fs:read_text_file", "Read the complete contents of a text file.", ""},
		// class 2
		{"zh:bili_rank", "获取热门游戏排行榜", ""},    // the ranking of trending games
		{"zh:ticket12306", "查询火车站列车时刻表", ""}, // train timetables of a railway station
		{"en:train_times", "Train departure times at a railway station.", ""},
		{"th:track_parcel", "ติดตามสถานะพัสดุด้วยหมายเลขพัสดุ", ""}, // track a parcel's status by its number
		{"ko:exchange_rate", "오늘의 환율을 조회합니다", ""},                   // look up today's exchange rates
		{"ru:translate", "Переводит текст на другой язык", ""},      // translates text into another language
		{"ru:bus_schedule", "Расписание автобусов и поездов по станции", ""},
		{"en:weather", "Current weather and forecast for a city.", ""},
		// class 3
		{"fin:stock_quote", "Current stock price quote for a ticker symbol.", ""},
		{"net:whois", "WHOIS lookup: registrant, registrar and creation date of a domain name.", ""},
		{"garden:plant_care", "Care tips for plants: watering, light and soil.", ""},
		{"hn:getStories", "Get the top stories from Hacker News.", ""},
		// class 4
		{"cal:create_event", "", `{"type":"object","properties":{"calendar_id":{"type":"string","description":"Calendar to add the event to"},"title":{"type":"string"},"start_time":{"type":"string"}}}`},
		{"geo:forward_geocoding", "Convert a street address into latitude and longitude.", ""},
		{"post:lookup_zipcode", "Find the zipcode of a town.", ""},
		{"zip:compress", "Compress files into a zip archive.", ""},
		{"scrape:getURLs", "Extract every link found on a page.", ""},
		{"gh:list_repos", "List the repositories of a user.", ""},
		{"net:get_ip", "Returns the caller's public address.", ""},
		{"geo:find_address", "Find the postal address of a place and my current location.", ""},
	}, filler...)
	ops := [][3]string{ // class 5: an ops catalog with no mail tool
		{"k8s:restart_pod", "Restart a Kubernetes pod.", ""},
		{"k8s:get_logs", "Get the logs of a pod.", ""},
		{"alert:send_slack_alert", "Send an alert to a Slack channel.", ""},
		{"alert:page_oncall", "Page the on-call engineer.", ""},
		{"metrics:query_prometheus", "Run a PromQL query.", ""},
		{"deploy:rollback", "Roll back a deployment to its previous release.", ""},
	}
	const (
		strong    = "strong"     // the first hit is strong, no note
		notStrong = "not strong" // the first hit is partial or weak: the "no strong match" note
		anyLevel  = ""
		// orNote: the tool need not be found when the first hit is not
		// strong (the "no strong match" note tells the model so).
		orNote = "or note"
	)
	for _, c := range []struct {
		class int
		query string
		want  string // expected tool ("" = no hit expected)
		rank  int    // within the first rank hits
		level string
		ops   bool
	}{
		{1, "show size, times and permissions of /srv/root/report.pdf", "mcp:fs:get_file_info", 1, anyLevel, false}, // partial: show and the path's words are not in it
		{2, "trending game rankings", "mcp:zh:bili_rank", 1, anyLevel, false},                                       // partial: 热门 is "popular, hot", rankings is not rank
		{2, "查询火车站时刻表", "mcp:zh:ticket12306", 1, strong, false},                                                     // query the station timetable: not db:run_query
		{2, "查询火车站出发时间", "mcp:en:train_times", 3, anyLevel, false},                                                  // train departure times: an English tool
		{2, "พัสดุของฉันอยู่ที่ไหน", "mcp:th:track_parcel", 1, anyLevel, false},                                     // where is my parcel (Thai, not segmented before)
		{2, "创建 GitHub issue", "mcp:gh:create_issue", 1, strong, false},
		{2, "GitHub issue を作成する", "mcp:gh:create_issue", 1, strong, false},
		{2, "날씨 예보", "mcp:en:weather", 1, strong, false}, // weather forecast (Korean table)
		{2, "GitHub 이슈 생성", "mcp:gh:create_issue", 1, strong, false},
		{2, "GitHub 이슈를 생성해줘", "mcp:gh:create_issue", 1, strong, false}, // a particle and a verb ending
		{2, "создать issue на GitHub", "mcp:gh:create_issue", 1, strong, false},
		{2, "создайте задачу в репозитории GitHub", "mcp:gh:create_issue", 1, strong, false}, // inflected forms
		{2, "พยากรณ์อากาศ", "mcp:en:weather", 1, strong, false},                              // weather forecast (Thai table)
		{2, "ส่งอีเมลหาทีม", "mcp:mail:send_email", 1, anyLevel, false},                      // send an email to the team
		{2, "exchange rate of the won", "mcp:ko:exchange_rate", 1, strong, false},            // English query, Korean tool
		{2, "translate this text", "mcp:ru:translate", 1, strong, false},                     // English query, Russian tool
		{2, "bus timetable at the station", "mcp:ru:bus_schedule", 1, anyLevel, false},
		{2, "track my parcel", "mcp:th:track_parcel", 1, strong, false}, // English query, Thai tool
		{3, "save this text to a file", "mcp:fs:write_file", 1, strong, false},
		{3, "share price of ACME", "mcp:fin:stock_quote", 1, anyLevel, false},
		{3, "is this site real? example-shop.biz", "mcp:net:whois", 3, orNote, false}, // not found: nothing links site/real to whois
		{3, "how often should I water my houseplants", "mcp:garden:plant_care", 1, anyLevel, false},
		{3, "big news in AI", "mcp:hn:getStories", 3, anyLevel, false},
		{3, "what can you do for me", "", 0, anyLevel, false}, // every word a stopword
		{4, "create an event in my calendar", "mcp:cal:create_event", 1, strong, false},
		{4, "Geocding of 10 Downing Street", "mcp:geo:forward_geocoding", 1, anyLevel, false},
		{4, "zip codes of Springfield", "mcp:post:lookup_zipcode", 1, anyLevel, false},
		{4, "extract all urls from this page", "mcp:scrape:getURLs", 1, strong, false},
		{4, "the user's repositories", "mcp:gh:list_repos", 1, strong, false},
		{4, "read /srv/root/notes/root.txt", "mcp:fs:read_text_file", 1, anyLevel, false},
		{4, "using the Get IP API, find my address", "mcp:net:get_ip", 1, strong, false},
		{5, "send a gmail email", "", 0, notStrong, true},
		{5, "restart the kubernetes pod", "mcp:k8s:restart_pod", 1, strong, true},
	} {
		cat := tools
		if c.ops {
			cat = ops
		}
		ix := testIndex(t, cat)
		res := ix.Search(c.query, 5, nil)
		var hits []Hit
		var ids []string
		for _, s := range res {
			h := MakeHit(s.Entry, s.Score, Bounds{})
			h.Match, h.Matched = MatchLevel(s.Strength), strings.Join(s.Matched, ", ")
			hits = append(hits, h)
			ids = append(ids, s.Entry.ID)
		}
		note := SearchNote(hits)
		if c.level == orNote && (len(hits) == 0 || hits[0].Match != MatchStrong) && note != "" {
			t.Logf("class %d %-45q first %v: not found, no strong match (note)", c.class, c.query, ids[:min(3, len(ids))])
			continue
		}
		if c.want != "" {
			found := false
			for i := 0; i < min(c.rank, len(ids)); i++ {
				found = found || ids[i] == c.want
			}
			if !found {
				t.Errorf("class %d %q: hits %v, want %s in the first %d", c.class, c.query, ids, c.want, c.rank)
				continue
			}
		}
		switch c.level {
		case strong:
			if len(hits) == 0 || hits[0].Match != MatchStrong || note != "" {
				t.Errorf("class %d %q: first hit %v strength %.3f, note %q; want strong, no note", c.class, c.query, ids, res[0].Strength, note)
			}
		case notStrong:
			if len(hits) > 0 && hits[0].Match == MatchStrong || !strings.Contains(note, "no strong match") && !strings.Contains(note, "no match") {
				t.Errorf("class %d %q: hits %v, note %q; want no strong hit and the note", c.class, c.query, ids, note)
			}
		}
		if c.want == "" && c.level == anyLevel && len(res) > 0 {
			t.Errorf("class %d %q: hits %v, want none", c.class, c.query, ids)
		}
		lvl := "-"
		if len(res) > 0 {
			lvl = hits[0].Match
		}
		t.Logf("class %d %-45q first %v (%s)", c.class, c.query, ids[:min(3, len(ids))], lvl)
	}
}
