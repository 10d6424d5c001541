package audit

import (
	"errors"
	"os"
	"path/filepath"
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
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
}
