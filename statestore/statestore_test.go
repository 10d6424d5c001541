package statestore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/testredis"
	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// stores runs f against a Memory store and a Redis store on a real
// redis-server.
func stores(t *testing.T, f func(t *testing.T, st statestore.Store)) {
	t.Run("memory", func(t *testing.T) { f(t, statestore.NewMemory(0)) })
	t.Run("redis", func(t *testing.T) {
		srv := testredis.Start(t, testredis.Options{})
		st, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		f(t, st)
	})
}

func TestKeys(t *testing.T) {
	stores(t, func(t *testing.T, st statestore.Store) {
		ctx := context.Background()
		if v, err := st.Get(ctx, "a"); v != nil || err != nil {
			t.Fatalf("Get of a missing key = %q, %v; want nil, nil", v, err)
		}
		if err := st.Set(ctx, "a", []byte("one\x00two"), 0); err != nil {
			t.Fatal(err)
		}
		if v, err := st.Get(ctx, "a"); string(v) != "one\x00two" || err != nil {
			t.Fatalf("Get = %q, %v", v, err)
		}
		if ok, err := st.SetNX(ctx, "a", []byte("x"), time.Minute); ok || err != nil {
			t.Fatalf("SetNX on a set key = %v, %v; want false", ok, err)
		}
		if ok, err := st.SetNX(ctx, "b", []byte("x"), time.Minute); !ok || err != nil {
			t.Fatalf("SetNX on a new key = %v, %v; want true", ok, err)
		}
		// Take: of many concurrent takers exactly one gets the value.
		var got atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v, err := st.Take(ctx, "a"); err != nil {
					t.Error(err)
				} else if v != nil {
					got.Add(1)
				}
			}()
		}
		wg.Wait()
		if got.Load() != 1 {
			t.Fatalf("%d takers got the value, want 1", got.Load())
		}
		if err := st.Delete(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if v, _ := st.Get(ctx, "b"); v != nil {
			t.Fatalf("deleted key still has %q", v)
		}
		// Expiry.
		if err := st.Set(ctx, "c", []byte("x"), 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(120 * time.Millisecond)
		if v, _ := st.Get(ctx, "c"); v != nil {
			t.Fatalf("expired key still has %q", v)
		}
	})
}

func TestAllowGCRA(t *testing.T) {
	stores(t, func(t *testing.T, st statestore.Store) {
		ctx := context.Background()
		// Burst 3 at 1 call per 10 s: three pass, the fourth waits ~10 s.
		b := []statestore.Bucket{{Key: "rl:s:alice", Rate: 0.1, Burst: 3}}
		for i := range 3 {
			v, err := st.Allow(ctx, b)
			if err != nil || v.Refused != 0 {
				t.Fatalf("call %d: %+v, %v; want allowed", i+1, v, err)
			}
		}
		v, err := st.Allow(ctx, b)
		if err != nil || v.Refused != 1 || v.RetryAfter < 9*time.Second || v.RetryAfter > 10*time.Second {
			t.Fatalf("call 4: %+v, %v; want refused by bucket 1 with ~10s to wait", v, err)
		}
		// All or nothing: a refusal by the second bucket takes nothing
		// from the first.
		two := []statestore.Bucket{{Key: "rl:s:bob", Rate: 0.1, Burst: 1}, {Key: "rl:u:gh", Rate: 0.1, Burst: 1}}
		if v, _ := st.Allow(ctx, two[1:]); v.Refused != 0 {
			t.Fatal("first call on rl:u:gh refused")
		}
		if v, _ := st.Allow(ctx, two); v.Refused != 2 {
			t.Fatalf("got %+v, want refused by bucket 2", v)
		}
		if v, _ := st.Allow(ctx, two[:1]); v.Refused != 0 {
			t.Fatal("rl:s:bob lost a call to a refused call")
		}
		// Refill: 20 calls/s, burst 1: the next call after 50 ms passes.
		fast := []statestore.Bucket{{Key: "rl:t:x", Rate: 20, Burst: 1}}
		st.Allow(ctx, fast)
		if v, _ := st.Allow(ctx, fast); v.Refused != 1 || v.RetryAfter > 50*time.Millisecond {
			t.Fatalf("got %+v, want refused with <= 50ms to wait", v)
		}
		time.Sleep(60 * time.Millisecond)
		if v, _ := st.Allow(ctx, fast); v.Refused != 0 {
			t.Fatalf("after the wait: %+v, want allowed", v)
		}
	})
}

// Two Redis stores on one server are two replicas: 10 concurrent calls
// over both against a burst of 3 pass exactly 3 times.
func TestAllowAcrossReplicas(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	var reps []statestore.Store
	for range 3 {
		st, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		reps = append(reps, st)
	}
	var passed atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := reps[i%3].Allow(context.Background(), []statestore.Bucket{{Key: "rl:s:user:alice", Rate: 0.01, Burst: 3}})
			if err != nil {
				t.Error(err)
			} else if v.Refused == 0 {
				passed.Add(1)
			}
		}()
	}
	wg.Wait()
	if passed.Load() != 3 {
		t.Fatalf("%d of 10 calls passed over 3 replicas, want 3", passed.Load())
	}
}

// A store that is down: every operation fails with ErrUnavailable (named
// where), quickly; once it is back, operations work again without a new
// Store.
func TestRedisDownAndBack(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{Password: "s3cret-pw"})
	st, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	_, err = st.Get(ctx, "k")
	if !errors.Is(err, statestore.ErrUnavailable) || !strings.Contains(err.Error(), "127.0.0.1:") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("Get with the store down: %v; want ErrUnavailable naming the address, not the password", err)
	}
	if _, err := st.Allow(ctx, []statestore.Bucket{{Key: "x", Rate: 1, Burst: 1}}); !errors.Is(err, statestore.ErrUnavailable) {
		t.Fatalf("Allow with the store down: %v; want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("failing took %s", d)
	}
	srv.Start()
	// The first operation finds the old connection dead and dials again.
	if err := st.Set(ctx, "k", []byte("again"), 0); err != nil {
		t.Fatalf("store back, the first operation fails: %v", err)
	}
	if v, err := st.Get(ctx, "k"); string(v) != "again" || err != nil {
		t.Fatalf("after recovery Get = %q, %v", v, err)
	}
}

// A store that is down at start: OpenRedis succeeds, operations fail
// until it is up.
func TestRedisDownAtStart(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	srv.Stop()
	st, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("OpenRedis with the server down: %v (want a store that connects later)", err)
	}
	defer st.Close()
	if _, err := st.Get(context.Background(), "k"); !errors.Is(err, statestore.ErrUnavailable) {
		t.Fatalf("Get: %v", err)
	}
	srv.Start()
	deadline := time.Now().Add(5 * time.Second)
	for st.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store came up but Ping still fails")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRedisTLS(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{TLS: true, Password: "pw"})
	st, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), CAFile: srv.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Set(context.Background(), "k", []byte("v"), time.Minute); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	// Without the CA the server's certificate is refused.
	bad, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Ping(context.Background()); !errors.Is(err, statestore.ErrUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("TLS without the CA: %v; want a certificate error", err)
	}
}

func TestOpenRedisErrors(t *testing.T) {
	for _, c := range []struct{ url, ca, want string }{
		{"http://h:1", "", `scheme "http"`},
		{"redis://", "", "no host"},
		{"redis://:pw-xyz@h:1/abc", "", "invalid database number"},
		{"redis://:pw-xyz@h:1/0", "/nonexistent", "not rediss://"},
		{"rediss://:pw-xyz@h:1/0", "/nonexistent", "CA file"},
	} {
		_, err := statestore.OpenRedis(statestore.RedisOptions{URL: c.url, CAFile: c.ca})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pw-xyz") {
			t.Errorf("%s: %v; want an error with %q and no password", c.url, err, c.want)
		}
	}
}

func TestMemoryBound(t *testing.T) {
	m := statestore.NewMemory(2)
	ctx := context.Background()
	m.Set(ctx, "a", []byte("1"), 20*time.Millisecond)
	m.Set(ctx, "b", []byte("1"), 0)
	if err := m.Set(ctx, "c", []byte("1"), 0); !errors.Is(err, statestore.ErrFull) {
		t.Fatalf("third key: %v, want ErrFull", err)
	}
	time.Sleep(30 * time.Millisecond)
	if err := m.Set(ctx, "c", []byte("1"), 0); err != nil {
		t.Fatalf("after a key expired: %v", err)
	}
}

func TestAcquireSlots(t *testing.T) {
	stores(t, func(t *testing.T, st statestore.Store) {
		ctx := context.Background()
		pools := func(subject string) []statestore.Pool {
			return []statestore.Pool{{Key: "sess:all", Max: 3}, {Key: "sess:s:" + subject, Max: 2}}
		}
		take := func(holder, subject string, ttl time.Duration) int {
			t.Helper()
			n, err := st.Acquire(ctx, holder, ttl, pools(subject))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if take("a1", "alice", time.Minute) != 0 || take("a2", "alice", time.Minute) != 0 {
			t.Fatal("alice's first two sessions refused")
		}
		if n := take("a3", "alice", time.Minute); n != 2 {
			t.Fatalf("alice's third: %d, want refused by her share (2)", n)
		}
		if take("b1", "bob", 100*time.Millisecond) != 0 {
			t.Fatal("bob's first refused")
		}
		if n := take("c1", "carol", time.Minute); n != 1 {
			t.Fatalf("carol with 3 of 3 taken: %d, want refused by the global pool (1)", n)
		}
		if take("a1", "alice", time.Minute) != 0 {
			t.Fatal("renewing a held slot refused")
		}
		if err := st.Release(ctx, "a1", []string{"sess:all", "sess:s:alice"}); err != nil {
			t.Fatal(err)
		}
		if take("c1", "carol", time.Minute) != 0 {
			t.Fatal("carol refused after alice released one")
		}
		time.Sleep(150 * time.Millisecond) // bob's slot expires (his replica vanished)
		if take("a3", "alice", time.Minute) != 0 {
			t.Fatal("alice refused after bob's slot expired")
		}
	})
}
