package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// lentRequest is a POST of the message msg with its body lent from the
// pool as httpConn.Write lends it (a *bytes.Reader over the buffer,
// postBody's trace on the context).
func lentRequest(t *testing.T, url string, msg []byte) (*http.Request, *postBody) {
	t.Helper()
	b := getBuf()
	*b = append((*b)[:0], msg...)
	pb, ctx, ok := lendBody(context.Background(), b)
	if !ok {
		t.Fatal("lendBody refused a context without a trace")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(*b))
	if err != nil {
		t.Fatal(err)
	}
	return req, pb
}

// TestPostBodyOutlivesEarlyAnswer: an upstream that answers before it
// read the POST's body makes Client.Do return while the transport is
// still writing the body; the lent buffer must not go back to the pool
// then (postBody: the write's WroteRequest gives it back), and what the
// upstream reads afterwards is the message, whole.
func TestPostBodyOutlivesEarlyAnswer(t *testing.T) {
	msg := bytes.Repeat([]byte("0123456789abcdef"), 2<<20) // 32 MiB: more than the sockets buffer, so the write blocks
	read := make(chan struct{})
	got := make(chan bool, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "early")
		w.(http.Flusher).Flush()
		<-read
		body, _ := io.ReadAll(r.Body)
		got <- bytes.Equal(body, msg)
	}))
	defer hs.Close()
	req, pb := lentRequest(t, hs.URL, msg)
	resp, err := hs.Client().Do(req)
	pb.done()
	if err != nil {
		t.Fatal(err)
	}
	if n := pb.refs.Load(); n <= 0 {
		t.Errorf("the body was given back (refs %d) while the transport was still writing it", n)
	}
	close(read)
	if !<-got {
		t.Error("the upstream read a body other than the message")
	}
	drainClose(resp.Body)
	if !t.Failed() {
		waitFor(t, "the body given back after its write", func() bool { return pb.refs.Load() == 0 })
	}
}

// TestPostBodyRedirectReplays: a 307 redirect replays the lent body
// (GetBody, a second reader over the same buffer, inside Client.Do); both
// hops read the message whole and the buffer goes back once both writes
// are done.
func TestPostBodyRedirectReplays(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	bodies := make(chan []byte, 2)
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		http.Redirect(w, r, "/b", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		_, _ = io.WriteString(w, "ok")
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	for range 3 { // the second and third use a pooled postBody again
		req, pb := lentRequest(t, hs.URL+"/a", msg)
		resp, err := hs.Client().Do(req)
		pb.done()
		if err != nil {
			t.Fatal(err)
		}
		drainClose(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %s, want the redirect followed", resp.Status)
		}
		for hop := range 2 {
			if b := <-bodies; !bytes.Equal(b, msg) {
				t.Errorf("hop %d read %q, want the message", hop, b)
			}
		}
		waitFor(t, "the body given back", func() bool { return pb.refs.Load() == 0 })
	}
}
