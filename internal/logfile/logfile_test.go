package logfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRenameWhileOpen: an open log can be renamed (rotation) and written
// on; a new file then opens at the old path. On Windows this needs
// FILE_SHARE_DELETE: without it the rename fails with "Sharing violation"
// (run under Wine: scripts/wine-test.sh internal/logfile).
func TestRenameWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	f, err := OpenAppend(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("one\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatalf("renaming the open log: %v", err)
	}
	if _, err := f.WriteString("two\n"); err != nil {
		t.Fatal(err)
	}
	g, err := OpenAppend(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteString("three\n"); err != nil {
		t.Fatal(err)
	}
	g.Close()
	// Appends land at the end even after a seek (O_APPEND semantics).
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("four\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "one" {
		t.Fatalf("reading the open log back: %q %v", buf, err)
	}
	for p, want := range map[string]string{path + ".1": "one\ntwo\nfour\n", path: "three\n"} {
		b, err := os.ReadFile(p)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
}
