package catalog

import (
	"bytes"
	"os"
	"path/filepath"
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

// TestBenchQualityAboveBaseline runs every query of sealtools and bfcl,
// alone and with the toolsdk_registry tools as distractors, and requires
// nDCG@10 above the plain BM25 baseline of shared/bench/README.md.
func TestBenchQualityAboveBaseline(t *testing.T) {
	for _, set := range []string{"sealtools", "bfcl"} {
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
			if base := benchBaselines[set][0]; rep.NDCG <= base {
				t.Errorf("%s (distractors %q): nDCG@10 %.3f is not above the baseline %.3f", set, d, rep.NDCG, base)
			}
		}
	}
}
