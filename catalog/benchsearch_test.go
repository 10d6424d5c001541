package catalog

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchDataDir returns the shared bench folder: $MCPTS_BENCH_DIR, or
// <module root>/../shared/bench (the repo and shared/ are siblings, here
// and in CI). It returns "" when the folder is absent.
func benchDataDir(t testing.TB) string {
	if d := os.Getenv("MCPTS_BENCH_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "bench")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

func benchFiles(t testing.TB, set string) (tools, queries string) {
	d := benchDataDir(t)
	if d == "" {
		t.Skip("bench data absent (set MCPTS_BENCH_DIR)")
	}
	tools = filepath.Join(d, set, "tools.jsonl")
	queries = filepath.Join(d, set, "queries.jsonl")
	if _, err := os.Stat(tools); err != nil {
		t.Skipf("bench data absent: %v", err)
	}
	return tools, queries
}

// TestBenchQualityAboveBaseline runs every query of the shared sets, alone
// and with the toolsdk_registry tools as distractors, and requires nDCG@10
// above plain BM25 on the same run. It takes minutes, so it runs only with
// MCPTS_BENCH_FULL=1 and ../shared/bench present; CI runs the regression
// test on a subset (TestSearchQualityRegression).
func TestBenchQualityAboveBaseline(t *testing.T) {
	if os.Getenv("MCPTS_BENCH_FULL") == "" {
		t.Skip("set MCPTS_BENCH_FULL=1 to run every shared set (minutes)")
	}
	for _, set := range []string{"sealtools", "bfcl", "stabletoolbench", "metatool"} {
		tools, queries := benchFiles(t, set)
		distractors := filepath.Join(filepath.Dir(filepath.Dir(tools)), "toolsdk_registry", "tools.jsonl")
		for _, d := range []string{"", distractors} {
			rep, err := RunBench(tools, queries, d, 10)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			rep.Print(&buf)
			t.Logf("\n%s", buf.String())
			if rep.NDCG <= rep.Plain.NDCG {
				t.Errorf("%s (distractors %q): nDCG@10 %.3f is not above plain BM25's %.3f", set, d, rep.NDCG, rep.Plain.NDCG)
			}
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The metrics on a tiny data set, checked by hand.
func TestRunBenchMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := writeFile(t, dir, "tools.jsonl", `{"id":"w","server":"s","name":"get_weather","description":"Get the weather forecast for a city","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}
{"id":"m","server":"s","name":"send_mail","description":"Send an email message","inputSchema":{}}

{"id":"t","server":"s","name":"translate","description":"Translate text between languages"}
`)
	queries := writeFile(t, dir, "queries.jsonl", `{"qid":"1","query":"weather forecast","relevant":["w"]}
{"qid":"2","query":"send an email and translate it","relevant":["m","t"]}
{"qid":"3","query":"zzz nothing matches","relevant":["w"]}
`)
	// Lexical ranking only: the dense signal would give "zzz nothing
	// matches" a hit by the meaning of "nothing" and "matches".
	p := DefaultRankParams()
	p.Dense = 0
	rep, err := RunBenchOptions(tools, queries, BenchOptions{K: 10, Params: &p})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dataset != "tiny" || rep.Tools != 3 || rep.Queries != 3 || rep.K != 10 {
		t.Fatalf("report header: %+v", rep)
	}
	// q1: w first. q2: m and t in the top 2 (either order). q3: nothing.
	if want := (1 + 0.5 + 0) / 3.0; math.Abs(rep.Recall1-want) > 1e-9 {
		t.Errorf("recall@1 %.4f, want %.4f", rep.Recall1, want)
	}
	if want := 2 / 3.0; math.Abs(rep.Recall5-want) > 1e-9 || math.Abs(rep.Recall10-want) > 1e-9 {
		t.Errorf("recall@5/10 %.4f/%.4f, want %.4f", rep.Recall5, rep.Recall10, want)
	}
	if want := 2 / 3.0; math.Abs(rep.NDCG-want) > 1e-9 || math.Abs(rep.MRR-want) > 1e-9 {
		t.Errorf("nDCG %.4f MRR %.4f, want %.4f", rep.NDCG, rep.MRR, want)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if !strings.Contains(buf.String(), "nDCG@10      0.667") || !strings.Contains(buf.String(), "(plain BM25 ") {
		t.Errorf("Print:\n%s", buf.String())
	}
	// With distractors, ids are kept apart.
	rep, err = RunBench(tools, queries, tools, 5)
	if err != nil || rep.Distractors != 3 {
		t.Fatalf("distractors: %v %+v", err, rep)
	}
}

func TestRunBenchErrors(t *testing.T) {
	dir := t.TempDir()
	tools := writeFile(t, dir, "tools.jsonl", `{"id":"a","server":"s","name":"a","description":"x"}`+"\n")
	bad := writeFile(t, dir, "bad.jsonl", `{"id":"a"}`+"\n"+`{oops`+"\n")
	missing := writeFile(t, dir, "q.jsonl", `{"qid":"1","query":"x","relevant":["nope"]}`+"\n")
	badAlt := writeFile(t, dir, "q2.jsonl", `{"qid":"1","query":"x","relevant":["a","b"],"relevant_alt":["c"]}`+"\n")
	cases := []struct{ tools, queries, want string }{
		{bad, missing, "bad.jsonl:2"},
		{tools, missing, `relevant id "nope"`},
		{tools, badAlt, `q2.jsonl:1: query "1": "relevant_alt": a flat list of alternatives needs exactly one relevant slot`},
		{filepath.Join(dir, "absent.jsonl"), missing, "absent.jsonl"},
	}
	for _, c := range cases {
		_, err := RunBench(c.tools, c.queries, "", 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunBench(%s, %s): error %v, want it to mention %q", filepath.Base(c.tools), filepath.Base(c.queries), err, c.want)
		}
	}
}

// Unlabelled queries are skipped and counted; alternatives fill one slot;
// the plain BM25 baseline is computed on the data given, whatever the
// folder is called.
func TestRunBenchSlotsAndSkips(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bfcl") // a folder named like a shared set
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := writeFile(t, dir, "tools.jsonl", `{"id":"w","server":"s","name":"get_weather","description":"Get the weather forecast for a city"}
{"id":"w2","server":"s","name":"weather_forecast","description":"Weather forecast"}
{"id":"m","server":"s","name":"send_mail","description":"Send an email message"}
`)
	queries := writeFile(t, dir, "queries.jsonl", `{"qid":"1","query":"weather forecast","relevant":[["w","w2"]]}
{"qid":"2","query":"weather forecast","relevant":["w"],"relevant_alt":["w2"]}
{"qid":"3","query":"weather forecast","relevant":["w"],"relevant_alt":{"w":["w2"]}}
{"qid":"4","query":"no labels here"}
{"qid":"5","query":"also none","relevant":[]}
`)
	rep, err := RunBench(tools, queries, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 3 || rep.Skipped != 2 {
		t.Fatalf("queries %d skipped %d, want 3 and 2", rep.Queries, rep.Skipped)
	}
	// Both weather tools come first; each query has one slot, filled at 1.
	if rep.Recall1 != 1 || rep.NDCG != 1 || rep.Recall5 != 1 {
		t.Errorf("slots: recall@1 %.3f nDCG %.3f recall@5 %.3f, want 1", rep.Recall1, rep.NDCG, rep.Recall5)
	}
	if rep.Plain.N != 3 || rep.Plain.NDCG != 1 {
		t.Errorf("plain BM25 on the same data: %+v", rep.Plain)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if !strings.Contains(buf.String(), "2 skipped: no labels") || !strings.Contains(buf.String(), "language             latin") {
		t.Errorf("Print:\n%s", buf.String())
	}
}

func TestQueryLanguage(t *testing.T) {
	for q, want := range map[string]string{
		"create an issue": "latin", "GitHub issue を作成する": "ja", "创建问题": "zh", "이슈 만들기": "ko",
		"создать задачу": "ru", "สร้างงาน": "th", "123 !!": "none",
	} {
		if got := QueryLanguage(q); got != want {
			t.Errorf("QueryLanguage(%q) = %q, want %q", q, got, want)
		}
	}
}
