package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDistractorDump prints, for one shared set (MCPTS_DISTDUMP=metatool),
// the queries whose labelled tool ranks lower once the 8,010
// toolsdk_registry distractors are added: the query, the label's rank
// alone and with distractors, and the distractors above it with score,
// strength and matched words. A diagnostic of match strength; runs only with
// MCPTS_DISTDUMP set and the bench data present.
func TestDistractorDump(t *testing.T) {
	name := os.Getenv("MCPTS_DISTDUMP")
	if name == "" {
		t.Skip("set MCPTS_DISTDUMP=<set> to dump")
	}
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent")
	}
	dis, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tools, qs := loadBenchSet(t, d, name)
	n, _ := strconv.Atoi(os.Getenv("MCPTS_DISTDUMP_N"))
	if n == 0 {
		n = 1 << 30
	}
	alone := NewIndex(BenchEntries(tools, ""))
	both := NewIndex(append(BenchEntries(tools, ""), BenchEntries(dis, "distractor:")...))
	rank := func(out []Scored, rel []string) int {
		for i, s := range out {
			if slices.Contains(rel, s.Entry.ID) {
				return i
			}
		}
		return -1
	}
	short := func(s string, n int) string {
		if len(s) > n {
			return s[:n] + "…"
		}
		return s
	}
	shown := 0
	for qi, q := range qs {
		if qi%2 == 1 && os.Getenv("MCPTS_DISTDUMP_ALL") == "" {
			continue // the tuning half only: the other half stays held out
		}
		ra := rank(alone.Search(q.Query, 10, nil), q.Relevant)
		rb := rank(both.Search(q.Query, 10, nil), q.Relevant)
		if ra < 0 || (rb >= 0 && rb <= ra) {
			continue
		}
		shown++
		if shown > n {
			break
		}
		deep := both.Search(q.Query, 60, nil)
		rd := rank(deep, q.Relevant)
		var b strings.Builder
		fmt.Fprintf(&b, "Q %s %q alone=%d dis=%d deep=%d\n", q.QID, q.Query, ra, rb, rd)
		for i, s := range deep {
			if rd >= 0 && i > rd || rd < 0 && i >= 10 {
				break
			}
			mark := " "
			if slices.Contains(q.Relevant, s.Entry.ID) {
				mark = "L"
			} else if !strings.HasPrefix(s.Entry.ID, "distractor:") {
				mark = "o"
			}
			fmt.Fprintf(&b, "  %s%2d %7.3f st=%.2f m=%v r=%v %s | %s\n", mark, i, s.Score, s.Strength, s.Matched, s.Related, s.Entry.Name, short(s.Entry.Description, 90))
		}
		t.Log(b.String())
	}
	t.Logf("%d queries pushed down", shown)
}

// TestNoStrongMatchWithDistractors checks the "no strong match" example at
// registry scale: "send a gmail email" against the ops catalog of
// TestMatchStrength plus the 8,010 toolsdk_registry tools with every tool
// that mentions mail taken out (so no tool can send one) gets no strong
// first hit, and with the registry's mail tools left in, a mail tool comes
// first. Skipped without the bench data.
func TestNoStrongMatchWithDistractors(t *testing.T) {
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent")
	}
	dis, err := LoadBenchTools(filepath.Join(d, "toolsdk_registry", "tools.jsonl"))
	if err != nil {
		t.Skip("bench data absent")
	}
	ops := []*Entry{}
	for _, tl := range [][2]string{
		{"k8s:restart_pod", "Restart a Kubernetes pod."},
		{"k8s:get_logs", "Get the logs of a pod."},
		{"alert:send_slack_alert", "Send an alert to a Slack channel."},
		{"alert:page_oncall", "Page the on-call engineer."},
		{"metrics:query_prometheus", "Run a PromQL query."},
		{"deploy:rollback", "Roll back a deployment to its previous release."},
	} {
		up, name, _ := strings.Cut(tl[0], ":")
		ops = append(ops, &Entry{ID: "mcp:" + tl[0], Upstream: up, Name: name, Exposed: up + "__" + name, Description: tl[1]})
	}
	all := BenchEntries(dis, "distractor:")
	var noMail []*Entry
	for _, e := range all {
		if !strings.Contains(strings.ToLower(e.Upstream+" "+e.Name+" "+e.Description+" "+string(e.InputSchema)), "mail") {
			noMail = append(noMail, e)
		}
	}
	const q = "send a gmail email"
	for _, c := range []struct {
		name    string
		entries []*Entry
		strong  bool
	}{
		{"ops + registry without mail tools", append(slices.Clone(ops), noMail...), false},
		{"ops + whole registry", append(slices.Clone(ops), all...), true},
	} {
		out := NewIndex(c.entries).Search(q, 5, nil)
		if len(out) == 0 {
			if c.strong {
				t.Errorf("%s: no hits", c.name)
			}
			continue
		}
		first := out[0]
		lvl := MatchLevel(first.Strength)
		t.Logf("%s (%d tools): first %s %q strength %.2f (%s) matched %v", c.name, len(c.entries), first.Entry.Name, first.Entry.Description, first.Strength, lvl, first.Matched)
		if got := lvl == MatchStrong; got != c.strong {
			t.Errorf("%s: first hit %s is %s (strength %.2f), want strong=%v", c.name, first.Entry.Name, lvl, first.Strength, c.strong)
		}
		if c.strong && !strings.Contains(strings.ToLower(first.Entry.Name+first.Entry.Description), "mail") {
			t.Errorf("%s: first hit %s is no mail tool", c.name, first.Entry.Name)
		}
	}
}
