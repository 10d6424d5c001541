package audit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		w.Record(Event{Kind: KindCall, Subject: "user:alice", Tool: "mcp:gh:get_issue", Upstream: "gh", Outcome: "ok", DurationMs: 1.5})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func verifyFile(t *testing.T, path string) (Result, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Verify(f)
}

func TestChainVerifies(t *testing.T) {
	path := writeLog(t, 3)
	// Reopening continues the chain.
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Kind: KindReload, Detail: "applied"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := verifyFile(t, path)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if res.Lines != 4 || res.LastSeq != 4 || len(res.LastHash) != 64 {
		t.Fatalf("result %+v", res)
	}
}

func TestTamperingShows(t *testing.T) {
	cases := []struct {
		name string
		edit func([]string) []string
		want string
	}{
		{"edited value", func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"outcome":"ok"`, `"outcome":"tool_error"`, 1)
			return ls
		}, "line 2: hash does not match"},
		{"edited last line", func(ls []string) []string {
			ls[3] = strings.Replace(ls[3], "alice", "bob", 1)
			return ls
		}, "line 4: hash does not match"},
		{"deleted line", func(ls []string) []string { return append(ls[:1], ls[2:]...) }, "line 2: seq 3, want 2"},
		{"swapped lines", func(ls []string) []string { ls[1], ls[2] = ls[2], ls[1]; return ls }, "line 2: seq 3, want 2"},
		{"first line deleted", func(ls []string) []string { return ls[1:] }, "line 1: seq 2, want 1"},
		{"rehashed edit", func(ls []string) []string {
			// An attacker who recomputes the edited line's own hash still
			// breaks the next line's prev.
			body := strings.Replace(ls[1][:strings.LastIndex(ls[1], `,"hash":`)], "alice", "mallory", 1)
			ls[1] = body + `,"hash":"` + sha256Hex([]byte(body)) + `"}`
			return ls
		}, "line 3: prev does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeLog(t, 4)
			b, _ := os.ReadFile(path)
			ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			ls = c.edit(ls)
			if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := verifyFile(t, path)
			var ve *VerifyError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestOpenRefusesDamagedTail(t *testing.T) {
	path := writeLog(t, 2)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":3,"kind":"call"`) // torn write
	f.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "torn last line") {
		t.Fatalf("Open: %v", err)
	}
	os.WriteFile(path, []byte("not audit\n"), 0o600)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "audit verify") {
		t.Fatalf("Open: %v", err)
	}
}

func TestArgsAndNilWriter(t *testing.T) {
	var w *Writer
	w.Record(Event{Kind: KindCall}) // no panic
	if w.Close() != nil {
		t.Fatal("nil close")
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w, _ = Open(path)
	w.Record(Event{Kind: KindCall, Args: []byte(`{"q":"x","token":"***"}`)})
	w.Close()
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"args":{"q":"x","token":"***"}`) {
		t.Fatalf("line %s", b)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 { // Windows has no Unix modes
		t.Fatalf("mode %v", st.Mode())
	}
}

// TestReopenAfterRename: logrotate's default renames the
// file (and may create an empty one); Reopen moves writing to the path,
// the new file's first line is a rotate line continuing the old chain,
// both files verify alone and as one chain; a foreign chain at the path is
// refused and writing stays on the open file.
func TestReopenAfterRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Record(Event{Kind: KindStart})
	w.Record(Event{Kind: KindCall, Tool: "mcp:gh:get_issue", Outcome: "ok"})
	if err := w.Reopen(); err != nil { // not rotated: nothing changes
		t.Fatal(err)
	}
	old := path + ".1"
	if err := os.Rename(path, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil { // logrotate `create`
		t.Fatal(err)
	}
	w.Record(Event{Kind: KindCall, Tool: "mcp:gh:late", Outcome: "ok"}) // before the signal: still the old file
	if err := w.Reopen(); err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Kind: KindCall, Tool: "mcp:gh:after", Outcome: "ok"})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	ro, err := verifyFile(t, old)
	if err != nil || ro.Lines != 3 || ro.FirstSeq != 1 {
		t.Fatalf("old file: %+v %v", ro, err)
	}
	rn, err := verifyFile(t, path)
	if err != nil {
		t.Fatalf("new file alone: %v", err)
	}
	if rn.Lines != 2 || rn.FirstSeq != 4 || rn.FirstPrev != ro.LastHash || rn.LastSeq != 5 {
		t.Fatalf("new file %+v, old ends %+v", rn, ro)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), `{"seq":4,`) || !strings.Contains(strings.SplitN(string(b), "\n", 2)[0], `"kind":"rotate"`) {
		t.Fatalf("new file does not start with a rotate line:\n%s", b)
	}
	if _, err := VerifyFiles(old, path); err != nil {
		t.Fatalf("VerifyFiles: %v", err)
	}
	if _, err := VerifyFiles(path, old); err == nil {
		t.Fatal("VerifyFiles accepted the files in the wrong order")
	}

	// A missing file (logrotate without `create`) is created.
	if err := os.Rename(path, path+".2"); err != nil {
		t.Fatal(err)
	}
	if err := w.Reopen(); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyFiles(old, path+".2", path); err != nil {
		t.Fatalf("three files: %v", err)
	}

	// Another chain at the path: refused, writing stays.
	other := writeLog(t, 2)
	if err := os.Rename(path, path+".3"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(other)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.Reopen(); err == nil || !strings.Contains(err.Error(), "another chain") {
		t.Fatalf("foreign chain: err %v", err)
	}
	w.Record(Event{Kind: KindCall, Tool: "mcp:gh:stays", Outcome: "ok"})
	if b, _ := os.ReadFile(path + ".3"); !strings.Contains(string(b), "mcp:gh:stays") {
		t.Fatalf("after a refused reopen the record went elsewhere:\n%s", b)
	}
	if _, err := VerifyFiles(old, path+".2", path+".3"); err != nil {
		t.Fatalf("after refused reopen: %v", err)
	}
}

// TestCutHeadStillShows: a cut head cannot pass as a rotated file: only
// a first line of kind rotate may start above seq 1.
func TestCutHeadStillShows(t *testing.T) {
	path := writeLog(t, 3)
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(lines[1:], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyFile(t, path); err == nil {
		t.Fatal("a file missing its first line verified")
	}
}
