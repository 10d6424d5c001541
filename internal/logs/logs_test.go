package logs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The go-sdk's WARN for a notification a session without a stream could
// not take goes out at DEBUG; every other WARN stays a WARN.
func TestSDKServerLoggerUndelivered(t *testing.T) {
	const undelivered = "calling notifications/tools/list_changed: rejected by transport: undelivered message: stream not connected or already closed"
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		l := SDKServer(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})), false)
		l.Warn(undelivered)
		l.Warn("calling notifications/tools/list_changed: context deadline exceeded")
		l.With("k", "v").Warn(undelivered)
		out := buf.String()
		if strings.Contains(out, "level=WARN msg=\""+undelivered) {
			t.Errorf("level %v: the undelivered notification is still a WARN:\n%s", level, out)
		}
		if !strings.Contains(out, "level=WARN msg=\"calling notifications/tools/list_changed: context deadline exceeded") {
			t.Errorf("level %v: another WARN was lost:\n%s", level, out)
		}
		if got := strings.Count(out, "level=DEBUG msg=\""+undelivered); (level == slog.LevelDebug) != (got == 2) || (level == slog.LevelInfo && got != 0) {
			t.Errorf("level %v: %d DEBUG lines of the undelivered notification:\n%s", level, got, out)
		}
	}
}
