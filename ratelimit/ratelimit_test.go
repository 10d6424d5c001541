package ratelimit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newAt(cfg Config) (*Limiter, *clock) {
	l := New(cfg, nil)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l.now = c.now
	return l, c
}

func TestBurstThenRefusedWithHint(t *testing.T) {
	l, c := newAt(Config{PerSubject: Limit{Rate: 2, Burst: 3}})
	passed, refused := 0, 0
	var last error
	for i := 0; i < 10; i++ {
		if err := l.Allow(context.Background(), "user:alice", "gh", "mcp:gh:x", "gh__x"); err != nil {
			refused++
			last = err
		} else {
			passed++
		}
	}
	if passed != 3 || refused != 7 {
		t.Fatalf("passed %d refused %d", passed, refused)
	}
	var r *Refusal
	if !errors.As(last, &r) || r.Kind != "subject" || r.RetryAfter != 500*time.Millisecond {
		t.Fatalf("refusal %#v", last)
	}
	want := `rate limit exceeded for subject "user:alice" (rate_limits.per_subject: 2 calls/s, burst 3); retry after 500ms`
	if last.Error() != want {
		t.Fatalf("text %q", last.Error())
	}
	// Another subject has its own bucket.
	if err := l.Allow(context.Background(), "user:bob", "gh", "mcp:gh:x", "gh__x"); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(500 * time.Millisecond)
	if err := l.Allow(context.Background(), "user:alice", "gh", "mcp:gh:x", "gh__x"); err != nil {
		t.Fatalf("after the hint: %v", err)
	}
}

func TestAllOrNothing(t *testing.T) {
	// The tool bucket is empty: the subject and upstream buckets keep their tokens.
	l, _ := newAt(Config{
		PerSubject:  Limit{Rate: 1, Burst: 2},
		PerUpstream: map[string]Limit{"*": {Rate: 1, Burst: 5}},
		PerTool:     []Rule{{Key: "gh__del*", Match: func(id, exp string) bool { return strings.HasPrefix(exp, "gh__del") }, Limit: Limit{Rate: 0.1, Burst: 1}}},
	})
	if err := l.Allow(context.Background(), "s", "gh", "mcp:gh:delete", "gh__delete"); err != nil {
		t.Fatal(err)
	}
	err := l.Allow(context.Background(), "s", "gh", "mcp:gh:delete", "gh__delete")
	var r *Refusal
	if !errors.As(err, &r) || r.Kind != "tool" || r.Key != "mcp:gh:delete" || !strings.Contains(err.Error(), `rate_limits.per_tool."gh__del*"`) || r.RetryAfter != 10*time.Second {
		t.Fatalf("err %v", err)
	}
	// The subject still has its second token.
	if err := l.Allow(context.Background(), "s", "gh", "mcp:gh:get", "gh__get"); err != nil {
		t.Fatalf("subject token lost: %v", err)
	}
	if err := l.Allow(context.Background(), "s", "gh", "mcp:gh:get", "gh__get"); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Fatalf("want subject refusal, got %v", err)
	}
}

func TestNilAndSweep(t *testing.T) {
	var l *Limiter
	if l.Allow(context.Background(), "a", "b", "c", "d") != nil || New(Config{}, nil) != nil {
		t.Fatal("nil limiter limits")
	}
	l, c := newAt(Config{PerSubject: Limit{Rate: 100, Burst: 1}})
	for i := 0; i < maxSubjects+10; i++ {
		if i == maxSubjects {
			c.t = c.t.Add(time.Second) // all earlier buckets are full again
		}
		_ = l.Allow(context.Background(), string(rune('a'+i%26))+strings.Repeat("x", i/26), "u", "t", "t")
	}
	if len(l.subjects) > maxSubjects {
		t.Fatalf("%d buckets kept", len(l.subjects))
	}
}
