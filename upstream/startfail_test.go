package upstream

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// TestStartupTimeoutNamesCause: an upstream that
// writes lines that are not JSON-RPC and never answers initialize fails
// with the startup_timeout and its first such line, not with the exit
// status it returns when the proxy closes its stdin.
func TestStartupTimeoutNamesCause(t *testing.T) {
	u := stdioUpstream("garbage", "garbage")
	// Long enough for the child to start and write its lines on a slow
	// start too (Wine: a process start takes a few hundred ms).
	u.StartupTimeout.Duration = 2 * time.Second
	m, _ := startManager(t, []*config.Upstream{u}, Options{Grace: 100 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour})
	st, _ := m.Status("garbage")
	for _, want := range []string{"initialize: startup_timeout (2s) exceeded: no answer to initialize", "it wrote 2 lines the proxy could not use, the first: not a JSON-RPC message: hello this is not json"} {
		if !strings.Contains(st.Err, want) {
			t.Errorf("reason %q lacks %q", st.Err, want)
		}
	}
	if strings.Contains(st.Err, "exited with status") {
		t.Errorf("reason blames the exit that followed the timeout: %q", st.Err)
	}
}

// TestFloodOfNonMessagesEndsAttempt: a program that writes lines that are
// not JSON-RPC without end fails its attempt once it wrote
// maxSkippedBeforeMessage of them, naming that, instead of keeping the
// proxy reading for its whole startup_timeout (1 minute here: the
// reason would then name the timeout).
func TestFloodOfNonMessagesEndsAttempt(t *testing.T) {
	u := stdioUpstream("flood", "flood")
	u.StartupTimeout.Duration = time.Minute
	m, _ := startManager(t, []*config.Upstream{u}, Options{Grace: 100 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour})
	st, _ := m.Status("flood")
	for _, want := range []string{"100000 lines and no JSON-RPC message", "the first: not a JSON-RPC message: not json at all"} {
		if !strings.Contains(st.Err, want) {
			t.Errorf("reason %q lacks %q", st.Err, want)
		}
	}
	if strings.Contains(st.Err, "startup_timeout") {
		t.Errorf("the attempt ran to its startup_timeout: %q", st.Err)
	}
}

// An upstream whose cwd does not exist fails naming the cwd, in the log
// (Err) and for the model (Cause), not "fork/exec COMMAND: no such file
// or directory".
func TestMissingCwdNamesCwd(t *testing.T) {
	for _, cwd := range []string{"missing", "file"} {
		t.Run(cwd, func(t *testing.T) {
			u := stdioUpstream("nocwd", "plain")
			dir := t.TempDir()
			u.Cwd = dir + "/" + cwd
			if cwd == "file" {
				if err := os.WriteFile(u.Cwd, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			m, _ := startManager(t, []*config.Upstream{u}, Options{Grace: 100 * time.Millisecond, BackoffMin: time.Hour, BackoffMax: time.Hour})
			st, _ := m.Status("nocwd")
			for _, got := range []string{st.Err, st.Cause} {
				if !strings.Contains(got, "cwd (the working directory of the command)") || !strings.Contains(got, u.Cwd) {
					t.Errorf("reason %q does not name the cwd %s", got, u.Cwd)
				}
			}
		})
	}
}
