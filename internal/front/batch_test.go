package front

import (
	"net/http"
	"strings"
	"testing"
)

// TestSSEBatchRefused: the legacy SSE transport takes no batch; one is
// answered HTTP 400 with an error object per element (the go-sdk answered
// a plain-text "failed to parse body").
func TestSSEBatchRefused(t *testing.T) {
	var w strings.Builder
	ans := &fakeWriter{h: http.Header{}, b: &w}
	if _, answered := refuseBatch(ans, nil, []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"mehtod":"x"},3]`)); !answered {
		t.Fatal("not answered")
	}
	got := w.String()
	if ans.code != http.StatusBadRequest || strings.Count(got, `"code":-32600`) != 3 || !strings.Contains(got, `"id":1,"error":{"code":-32600,"message":"JSON-RPC batches are not accepted on the HTTP+SSE transport`) {
		t.Fatalf("%d %s", ans.code, got)
	}
	if _, answered := refuseBatch(ans, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); answered {
		t.Fatal("a single message was refused")
	}
}

type fakeWriter struct {
	h    http.Header
	b    *strings.Builder
	code int
}

func (f *fakeWriter) Header() http.Header { return f.h }

func (f *fakeWriter) Write(p []byte) (int, error) { return f.b.Write(p) }

func (f *fakeWriter) WriteHeader(c int) { f.code = c }
