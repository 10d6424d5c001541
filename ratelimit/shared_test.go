package ratelimit

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

// Three Limiters on one redis-server are three replicas: one per-subject
// limit of burst 3 holds across them (10 concurrent calls, 3 pass), the
// refusal names the bucket with its retry hint, the buckets stay all or
// nothing, and a store that is down refuses calls (fail closed) until it
// is back.
func TestSharedLimitAcrossReplicas(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	cfg := Config{
		PerSubject:  Limit{Rate: 0.01, Burst: 3},
		PerUpstream: map[string]Limit{"*": {Rate: 0.01, Burst: 100}},
		PerTool:     []Rule{{Key: "gh__del*", Match: func(id, exp string) bool { return strings.HasPrefix(exp, "gh__del") }, Limit: Limit{Rate: 0.01, Burst: 1}}},
	}
	var reps []*Limiter
	for range 3 {
		kv, err := statestore.OpenRedis(statestore.RedisOptions{URL: srv.URL(), Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		reps = append(reps, New(cfg, kv))
	}
	ctx := context.Background()
	var passed atomic.Int32
	var mu sync.Mutex
	var refusals []error
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := reps[i%3].Allow(ctx, "user:alice", "gh", "mcp:gh:get", "gh__get")
			if err == nil {
				passed.Add(1)
				return
			}
			mu.Lock()
			refusals = append(refusals, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if passed.Load() != 3 || len(refusals) != 7 {
		t.Fatalf("%d passed, %d refused over 3 replicas; want 3 and 7", passed.Load(), len(refusals))
	}
	var r *Refusal
	if !errors.As(refusals[0], &r) || r.Kind != "subject" || r.RetryAfter < 99*time.Second || r.RetryAfter > 100*time.Second ||
		!strings.HasPrefix(refusals[0].Error(), `rate limit exceeded for subject "user:alice" (rate_limits.per_subject: 0.01 calls/s, burst 3); retry after `) {
		t.Fatalf("refusal: %v", refusals[0])
	}
	// All or nothing: bob's call refused by the tool bucket keeps his
	// subject tokens.
	if err := reps[0].Allow(ctx, "user:bob", "gh", "mcp:gh:delete", "gh__delete"); err != nil {
		t.Fatal(err)
	}
	if err := reps[1].Allow(ctx, "user:bob", "gh", "mcp:gh:delete", "gh__delete"); !errors.As(err, &r) || r.Kind != "tool" {
		t.Fatalf("want the tool bucket's refusal, got %v", err)
	}
	for i := range 2 {
		if err := reps[2].Allow(ctx, "user:bob", "gh", "mcp:gh:get", "gh__get"); err != nil {
			t.Fatalf("bob's call %d: %v (a refused call took his tokens)", i+2, err)
		}
	}
	// Store down: refused, clearly; back: allowed again, same Limiter.
	srv.Stop()
	err := reps[0].Allow(ctx, "user:carol", "gh", "mcp:gh:get", "gh__get")
	var u *Unavailable
	if !errors.As(err, &u) || !errors.Is(err, statestore.ErrUnavailable) || !strings.Contains(err.Error(), "rate limits could not be checked") {
		t.Fatalf("store down: %v", err)
	}
	srv.Start()
	deadline := time.Now().Add(5 * time.Second)
	for reps[0].Allow(ctx, "user:carol", "gh", "mcp:gh:get", "gh__get") != nil {
		if time.Now().After(deadline) {
			t.Fatal("store back, calls still refused")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
