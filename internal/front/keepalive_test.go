package front

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestKeepaliveBetweenEventsOnly: a keepalive never lands inside an event.
func TestKeepaliveBetweenEventsOnly(t *testing.T) {
	release := make(chan struct{})
	h := Keepalive(20*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\n")
		http.NewResponseController(w).Flush()
		<-release
		io.WriteString(w, "data: {}\n\n")
		time.Sleep(100 * time.Millisecond)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(100 * time.Millisecond) // several intervals mid-event
	close(release)
	b, _ := io.ReadAll(resp.Body)
	got := string(b)
	if !strings.HasPrefix(got, "event: message\ndata: {}\n\n") || !strings.Contains(got, ": keepalive\n\n") {
		t.Fatalf("stream = %q: want the event whole, then keepalives", got)
	}
}
