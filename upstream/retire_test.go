package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// inflight is the number of calls m counts as running.
func (m *Manager) inflightCalls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inflight
}

// TestRetireLetsCallsFinish: a call in flight when Retire is called
// finishes on the old session with its result; a call made after it is
// refused with ErrRetired (not sent); the manager is stopped after.
func TestRetireLetsCallsFinish(t *testing.T) {
	m, _ := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, Options{})
	type out struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 1500}})
		got <- out{res, err}
	}()
	waitFor(t, "the call in flight", func() bool { return m.inflightCalls() == 1 })
	retired := m.Retire(context.Background(), "restarted by a config reload", time.Minute)
	if _, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); !errors.Is(err, ErrRetired) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("a call after Retire: %v; want ErrRetired", err)
	}
	o := <-got
	if o.err != nil || o.res == nil || o.res.IsError {
		t.Fatalf("the call in flight during Retire: %+v, %v; want its result", o.res, o.err)
	}
	if err := <-retired; err != nil {
		t.Fatalf("Retire: %v", err)
	}
	if st, _ := m.Status("alpha"); st.State != StateStopped {
		t.Errorf("state after Retire = %s, want stopped", st.State)
	}
}

// TestRetireCutsWithReason: a call still running when Retire's bound ends
// is cut, and its error says the upstream was restarted by a config
// reload, not that the connection was lost.
func TestRetireCutsWithReason(t *testing.T) {
	m, _ := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, Options{})
	got := make(chan error, 1)
	go func() {
		_, err := m.CallTool(context.Background(), "alpha", &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 50000}})
		got <- err
	}()
	waitFor(t, "the call in flight", func() bool { return m.inflightCalls() == 1 })
	if err := <-m.Retire(context.Background(), "removed by a config reload", 100*time.Millisecond); err != nil {
		t.Fatalf("Retire: %v", err)
	}
	err := <-got
	want := `upstream "alpha" was removed by a config reload while tools/call "sleep" was in flight`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrRetired) {
		t.Fatalf("the cut call: %v; want %q (ErrUnavailable, not ErrRetired: it was sent)", err, want)
	}
	if strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection lost") {
		t.Errorf("the cut call blames the connection: %v", err)
	}
}

// TestPerClientClosedByRetireSaysReload: a call on a
// per-client session of a manager a reload retired, made through the
// upstream's new manager (as the proxy does: the client session keeps its
// ClientConn, the call goes to the current manager), says the upstream
// was restarted by a config reload and to start a new client session; a
// per-client session closed otherwise keeps the plain reason.
func TestPerClientClosedByRetireSaysReload(t *testing.T) {
	old, _ := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, Options{})
	next, _ := startManager(t, []*config.Upstream{stdioUpstream("alpha", "plain")}, Options{})
	cc, err := old.OpenSession(context.Background(), "alpha", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-old.Retire(context.Background(), "restarted by a config reload", time.Minute); err != nil {
		t.Fatalf("Retire: %v", err)
	}
	_, err = next.CallToolWith(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{Conn: cc})
	want := `upstream "alpha" was restarted by a config reload; this client's per-client session of it ended with the old instance: start a new client session`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a call on the per-client session of the retired manager: %v; want %q", err, want)
	}
	own, err := next.OpenSession(context.Background(), "alpha", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	own.Close()
	_, err = next.CallToolWith(context.Background(), "alpha", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{Conn: own})
	if err == nil || !strings.Contains(err.Error(), "per-client session closed") || strings.Contains(err.Error(), "reload") {
		t.Fatalf("a call on a per-client session closed without a reload: %v", err)
	}
}
