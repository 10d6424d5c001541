package upstream

// Retiring a manager after a config reload replaced or removed its
// upstream: calls already running on it finish on it, then it is closed.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrRetired is wrapped by the error of a call that reached a manager
// after Retire was called (it was not sent): the caller should send it
// to the upstream's current manager, if there is one.
var ErrRetired = errors.New("upstream manager retired by a config reload")

// beginCall counts a CallToolWith call in flight; endCall must be called
// when it returns. A retired manager takes no new call on its shared session:
// the error wraps ErrRetired and ErrUnavailable. A call on one of its
// per-client sessions (perClient) is taken until the close: that session
// belongs to a client session that has no other.
func (m *Manager) beginCall(upstream string, perClient bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retired != "" && !perClient {
		return &unavailableError{msg: fmt.Sprintf("upstream %q was %s", upstream, m.retired), cause: ErrRetired}
	}
	m.inflight++
	return nil
}

// endCall ends what beginCall began (a method, not a returned closure:
// one allocation fewer per call).
func (m *Manager) endCall() {
	m.mu.Lock()
	m.inflight--
	if m.inflight == 0 && m.idle != nil {
		close(m.idle)
		m.idle = nil
	}
	m.mu.Unlock()
}

// Retire closes m once the tools/call requests running on it have
// finished, or after bound, whichever comes first; calls still running
// then are cut, and their error says why (`upstream "NAME" was <reason>
// while tools/call "TOOL" was in flight …`, wrapping ErrUnavailable)
// instead of naming a lost connection. why completes "upstream NAME was
// …", e.g. "restarted by a config reload". From the call of Retire on
// (it marks m before returning), m takes no new call on its shared
// session (ErrRetired). Everything else on m — its shared session,
// per-client sessions, subscriptions, progress of the calls in flight —
// lives until the close. The drain and the close run in the background;
// the returned channel gets Close's error (ctx bounds only the close) and
// is then closed.
func (m *Manager) Retire(ctx context.Context, why string, bound time.Duration) <-chan error {
	m.mu.Lock()
	m.retired = why
	m.cutAfter = bound
	var idle chan struct{}
	n := m.inflight
	if n > 0 {
		idle = make(chan struct{})
		m.idle = idle
	}
	m.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		defer close(done)
		if idle != nil {
			m.log.Info("waiting for calls in flight before stopping the old upstream session", "upstream", strings.Join(m.names, ","), "calls", n, "reason", why, "bound", bound)
			t := time.NewTimer(bound)
			select {
			case <-idle:
			case <-t.C:
				m.mu.Lock()
				n = m.inflight
				m.mu.Unlock()
				m.log.Warn("cutting calls still in flight on the old upstream session", "upstream", strings.Join(m.names, ","), "calls", n, "reason", why, "bound", bound)
			case <-ctx.Done():
			}
			t.Stop()
		}
		done <- m.Close(ctx)
	}()
	return done
}

// cutByRetire reports whether m was retired, i.e. a call that lost its
// connection was cut by Retire.
func (m *Manager) cutByRetire() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.retired != "" && m.closed
}

// retiredError is the error of a call cut by Retire.
func (m *Manager) retiredError(upstream, tool string) error {
	m.mu.Lock()
	why, bound := m.retired, m.cutAfter
	m.mu.Unlock()
	return &unavailableError{msg: fmt.Sprintf("upstream %q was %s while tools/call %q was in flight; the call was cut after %s, the longest the old session is kept for calls in flight; retry it", upstream, why, tool, bound)}
}

// perClientClosed is the error of a call on a closed per-client session.
func (m *Manager) perClientClosed(upstream string) error {
	m.mu.Lock()
	why := m.retired
	m.mu.Unlock()
	if why == "" {
		return unavailable(upstream, "per-client session closed", nil)
	}
	return &unavailableError{msg: fmt.Sprintf("upstream %q was %s; this client's per-client session of it ended with the old instance: start a new client session to get one of the new instance", upstream, why)}
}
