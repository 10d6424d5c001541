package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := runHealthcheck([]string{"--url", srv.URL + "/healthz"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("200: exit %d, %s %s", code, out.String(), errb.String())
	}
	status = http.StatusServiceUnavailable
	if code := runHealthcheck([]string{"--url", srv.URL + "/healthz"}, nil, &out, &errb); code != exitFail {
		t.Fatalf("503: exit %d", code)
	}
	srv.Close()
	if code := runHealthcheck([]string{"--url", srv.URL + "/healthz"}, nil, &out, &errb); code != exitFail {
		t.Fatalf("no server: exit %d", code)
	}
	if code := runHealthcheck([]string{"extra"}, nil, &out, &errb); code != exitUsage {
		t.Fatalf("extra argument: exit %d", code)
	}
}
