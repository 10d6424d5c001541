package credentials

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testauth"
	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// Three Managers on one redis-server are three replicas behind a
// round-robin balancer: a user gets a link from one, the browser's
// callback reaches another, and every one of them then has the user's
// token; the one-time link cannot be used twice across replicas; a store
// that is down gives a clear error, never a token or a link, and the
// replicas work again once it is back.
func TestSharedConnectAcrossReplicas(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	as := testauth.New()
	defer as.Close()
	// The balancer: each request to the callback URL goes to the next replica.
	var reps []*Manager
	var next atomic.Int32
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reps[int(next.Add(1))%len(reps)].Callback().ServeHTTP(w, r)
	}))
	defer lb.Close()
	as.AddClient(testauth.Client{ID: "proxy", Secret: "s3", RedirectURIs: []string{lb.URL + CallbackPath}})
	for range 3 {
		kv, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		store, _ := NewSharedStore(kv, key32)
		m, err := New(Options{Store: store, States: kv, CallbackURL: lb.URL + CallbackPath,
			Upstreams: []Upstream{{Name: "gh", Source: OAuth, Audience: "https://gh.example.com/mcp", TokenURL: as.URL + "/token", AuthorizeURL: as.URL + "/authorize", ClientID: "proxy", ClientSecret: "s3"}}})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, m)
	}
	ctx := context.Background()
	alice := &identity.Identity{Subject: "alice"}
	var cr *ConnectRequired
	if _, err := reps[0].Authorization(ctx, "gh", alice); !errors.As(err, &cr) {
		t.Fatalf("want the connect prompt, got %v", err)
	}
	// Another replica shows the same link while it is fresh.
	if _, err := reps[1].Authorization(ctx, "gh", alice); !errors.As(err, &cr) || err.(*ConnectRequired).URL != cr.URL {
		t.Fatalf("replica 2: %v; want the same link", err)
	}
	waited := make(chan bool, 1)
	go func() { waited <- reps[2].Wait(ctx, "gh", "alice", 10*time.Second) }()
	resp, err := http.Get(cr.URL + "&login=alice")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("browser: %v %v", resp, err)
	}
	resp.Body.Close()
	if !<-waited {
		t.Fatal("replica 3's Wait did not see the connection made through another replica")
	}
	for i, m := range reps {
		h, err := m.Authorization(ctx, "gh", alice)
		if err != nil {
			t.Fatalf("replica %d after the connect: %v", i+1, err)
		}
		if sub, _, err := as.Verify(strings.TrimPrefix(h, "Bearer ")); err != nil || sub != "alice" {
			t.Fatalf("replica %d: token of %q (%v)", i+1, sub, err)
		}
	}
	var bobs *ConnectRequired
	if _, err := reps[1].Authorization(ctx, "gh", &identity.Identity{Subject: "bob"}); !errors.As(err, &bobs) || bobs.URL == cr.URL {
		t.Fatalf("bob never connected: %v; want a link of his own", err)
	}
	// The used link fails on every replica.
	for range 3 {
		resp, _ := http.Get(cr.URL + "&login=alice")
		if resp.StatusCode == 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("link used twice: %s", b)
		}
		resp.Body.Close()
	}

	// The store goes down.
	srv.Stop()
	_, err = reps[0].Authorization(ctx, "gh", alice)
	if !errors.Is(err, statestore.ErrUnavailable) || errors.As(err, &cr) || !strings.Contains(err.Error(), "the call was not made") {
		t.Fatalf("store down: %v; want a clear ErrUnavailable, no token, no link", err)
	}
	if _, err := reps[0].Authorization(ctx, "gh", &identity.Identity{Subject: "carol"}); !errors.Is(err, statestore.ErrUnavailable) || errors.As(err, &bobs) {
		t.Fatalf("store down, new user: %v; want no link", err)
	}
	resp, err = http.Get(lb.URL + CallbackPath + "?state=x&code=y")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "state store") {
		t.Fatalf("callback with the store down: %d %s", resp.StatusCode, body)
	}
	// Back (empty: a store without persistence lost the tokens): the
	// replicas work again without a restart and ask alice to connect.
	srv.Start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = reps[0].Authorization(ctx, "gh", alice)
		if errors.As(err, &cr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
