//go:build unix

package integration

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPDuringStartReloads: a SIGHUP that arrives while the upstreams
// start (here: the fake upstream answers initialize after 8 s, and the
// proxy waits for it, startup_wait 60 s) is kept and reloads once the proxy serves; it used to end the
// process, whose handler came only when serving began.
func TestSIGHUPDuringStartReloads(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf("[server]\nstartup_wait = \"60s\"\n[tool_search]\nenabled = false\n[upstreams.gh]\ncommand = %s\nargs = [\"-init-delay\", \"8s\"]\n", tomlString(fakeUpstreamBin(t))))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proc := startProcess(t, []string{buildProxy(t), "serve", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "info"}, nil)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if ok, err := proc.Exited(); ok {
				t.Fatalf("the proxy exited (%v) waiting for %s\n%s", err, what, tail(proc.Output(), 3000))
			}
			if time.Now().After(deadline) { // fail-safe bound
				t.Fatalf("never: %s\n%s", what, tail(proc.Output(), 3000))
			}
		}
	}
	// The HTTP front binds before any upstream starts: once it accepts a
	// connection the proxy is in its start.
	waitFor("the bound listener", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if strings.Contains(proc.Output(), "msg=ready") {
		t.Fatal("the proxy is ready before its upstream answered initialize")
	}
	if err := syscall.Kill(proc.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("listening", func() bool { return strings.Contains(proc.Output(), "msg=listening") })
	// waitFor fails at once if the signal ended the process.
	waitFor("the kept reload", func() bool { return strings.Contains(proc.Output(), `msg="config reloaded" trigger="signal hangup"`) })
}
