//go:build unix

package upstream

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// A child that still writes to stdout after the proxy closed the
// connection (its stdin) must find the pipe open: Close drains stdout
// until the child is gone. A Node server (SIGPIPE ignored, as here) meets
// a closed read end as EPIPE and prints a stack trace to stderr.
func TestStdioCloseDrainsStdoutUntilChildExits(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "late.sh")
	// Reads stdin to EOF, then writes a line (as a server answering a
	// request read just before EOF); exit 7 when the write fails.
	body := "trap '' PIPE\ncat >/dev/null\nsleep 0.3\nprintf 'late answer\\n' 2>/dev/null || { echo 'write failed: EPIPE' >&2; exit 7; }\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	log := &logBuffer{}
	ch, err := startChild(&config.Upstream{Command: "/bin/sh", Args: []string{script}}, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	mc, err := ch.transport(MaxMessageBytes).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn := mc.(*stdioConn)
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Read returns at once after Close, though stdout is still drained.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Read(ctx); err == nil {
		t.Fatal("Read after Close: want an error")
	}
	ch.stop(5*time.Second, "test")
	if got := ch.reason(); got != "exited with status 0" {
		t.Fatalf("child's exit: %q, want %q (its late stdout write failed: stdout was closed before it exited); log:\n%s", got, "exited with status 0", log.String())
	}
	if strings.Contains(log.String(), "EPIPE") {
		t.Fatalf("log has the child's EPIPE:\n%s", log.String())
	}
	select { // the draining ends with stdout (no goroutine left reading)
	case <-conn.readDone:
	case <-time.After(5 * time.Second):
		t.Fatal("readLoop still running after the child exited")
	}
}

// A grandchild that keeps the child's stdout open does not keep the
// draining going past the child's reap: the reap (its group killed)
// ends it. The grandchild here leaves the child's process group.
func TestStdioCloseDrainEndsAtReap(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	log := &logBuffer{}
	ch, err := startChild(&config.Upstream{Command: "/bin/sh", Args: []string{"-c", "/usr/bin/setsid sleep 4 & cat >/dev/null"}}, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	mc, err := ch.transport(MaxMessageBytes).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn := mc.(*stdioConn)
	_ = conn.Close()
	ch.stop(time.Second, "test")
	select {
	case <-conn.readDone:
	case <-time.After(2 * time.Second): // the grandchild lives 4 s
		t.Fatal("readLoop still running after the child was reaped (a grandchild holds stdout)")
	}
}
