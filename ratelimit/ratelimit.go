// Package ratelimit holds the proxy's token buckets for tool calls: one per
// subject, one per upstream and one per tool (golang.org/x/time/rate), so
// that one user or one tool cannot exhaust an upstream ([rate_limits],
// docs/config.md).
//
// A call takes one token from every bucket that applies to it, or from
// none: when any bucket is empty the call is refused and the tokens
// reserved from the others are given back. The refusal names the bucket
// and how long until a token is there (the retry hint).
//
// With a shared state store ([server] state_store) the buckets live there
// (statestore.Store.Allow: GCRA, which decides as these token buckets do),
// so N replicas allow the configured rate once, not N times. A store that
// cannot be reached refuses the call (*Unavailable): fail closed.
//
// Trust: a subject is the verified user when the front verified a token;
// otherwise it is the client's self-declared name on its endpoint, which a
// client can change at will: per-subject limits then separate
// well-behaved clients only, while per-upstream and per-tool limits hold
// for everyone.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// Limit is one bucket's shape: Rate tokens per second, at most Burst at once.
type Limit struct {
	Rate  float64 // tokens per second, > 0
	Burst int     // bucket size, >= 1
}

// Rule is a limit for the tools whose key matches Match.
type Rule struct {
	Key   string                        // as configured, for messages (e.g. "gh__create_*")
	Match func(id, exposed string) bool // the tool's catalog id and exposed name
	Limit
}

// Config is the set of limits. A zero Limit means no limit of that kind.
type Config struct {
	PerSubject  Limit
	PerUpstream map[string]Limit // upstream name -> limit; key "*" applies to upstreams not named
	PerTool     []Rule           // first matching rule wins; each tool gets its own bucket
}

// Limiter decides calls. Safe for concurrent use; a nil *Limiter allows
// everything.
type Limiter struct {
	cfg    Config
	now    func() time.Time
	shared statestore.Store // nil: the buckets below, in this process

	mu       sync.Mutex
	subjects map[string]*rate.Limiter
	ups      map[string]*rate.Limiter
	tools    map[string]*rate.Limiter
}

// maxSubjects bounds the per-subject buckets kept; past it, full buckets
// (subjects idle long enough to have every token back) are dropped.
const maxSubjects = 10000

// New returns a Limiter for cfg, or nil when cfg limits nothing. With a
// shared store (its Shared() is true) the buckets are kept there.
func New(cfg Config, shared statestore.Store) *Limiter {
	if cfg.PerSubject.Rate <= 0 && len(cfg.PerUpstream) == 0 && len(cfg.PerTool) == 0 {
		return nil
	}
	l := &Limiter{cfg: cfg, now: time.Now, subjects: map[string]*rate.Limiter{}, ups: map[string]*rate.Limiter{}, tools: map[string]*rate.Limiter{}}
	if shared != nil && shared.Shared() {
		l.shared = shared
	}
	return l
}

// Unavailable is the error of a call whose limits could not be checked
// because the shared store could not be reached: it is refused.
type Unavailable struct{ Err error }

func (u *Unavailable) Error() string {
	return "the rate limits could not be checked, so the call is refused until they can: " + u.Err.Error()
}

func (u *Unavailable) Unwrap() error { return u.Err }

// Refusal is the error of a refused call.
type Refusal struct {
	Kind       string        // "subject", "upstream" or "tool"
	Key        string        // the subject, upstream name or tool id
	Rule       string        // the config key that set the limit, e.g. `rate_limits.per_tool."gh__*"`
	RetryAfter time.Duration // until the bucket has a token again
	Limit      Limit
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("rate limit exceeded for %s %q (%s: %g calls/s, burst %d); retry after %s",
		r.Kind, r.Key, r.Rule, r.Limit.Rate, r.Limit.Burst, RoundUp(r.RetryAfter))
}

// RoundUp rounds a retry hint up to a whole millisecond (at least 1 ms), so
// that retrying after it finds a token.
func RoundUp(d time.Duration) time.Duration {
	if d <= time.Millisecond {
		return time.Millisecond
	}
	return time.Duration(math.Ceil(float64(d)/float64(time.Millisecond))) * time.Millisecond
}

func newBucket(l Limit) *rate.Limiter { return rate.NewLimiter(rate.Limit(l.Rate), max(l.Burst, 1)) }

// Allow takes a token for one call of tool (catalog id; exposed is the
// exposed name, matched too) on upstream by subject, from every bucket
// that applies, or returns a *Refusal and takes nothing (*Unavailable when
// a shared store cannot be reached).
func (l *Limiter) Allow(ctx context.Context, subject, upstream, tool, exposed string) error {
	if l == nil {
		return nil
	}
	if l.shared != nil {
		return l.allowShared(ctx, subject, upstream, tool, exposed)
	}
	now := l.now()
	type cand struct {
		b               *rate.Limiter
		kind, key, rule string
		limit           Limit
	}
	var cands [3]cand
	n := 0
	l.mu.Lock()
	if lim := l.cfg.PerSubject; lim.Rate > 0 {
		b, ok := l.subjects[subject]
		if !ok {
			if len(l.subjects) >= maxSubjects {
				l.sweepLocked(now)
			}
			b = newBucket(lim)
			l.subjects[subject] = b
		}
		cands[n] = cand{b, "subject", subject, "rate_limits.per_subject", lim}
		n++
	}
	if lim, rule, ok := l.upstreamLimit(upstream); ok {
		b, ok := l.ups[upstream]
		if !ok {
			b = newBucket(lim)
			l.ups[upstream] = b
		}
		cands[n] = cand{b, "upstream", upstream, rule, lim}
		n++
	}
	for _, r := range l.cfg.PerTool {
		if r.Match(tool, exposed) {
			b, ok := l.tools[tool]
			if !ok {
				b = newBucket(r.Limit)
				l.tools[tool] = b
			}
			cands[n] = cand{b, "tool", tool, fmt.Sprintf("rate_limits.per_tool.%q", r.Key), r.Limit}
			n++
			break
		}
	}
	l.mu.Unlock()
	var res [3]*rate.Reservation
	for i := 0; i < n; i++ {
		res[i] = cands[i].b.ReserveN(now, 1)
		if d := res[i].DelayFrom(now); d > 0 || !res[i].OK() {
			for j := 0; j <= i; j++ {
				res[j].CancelAt(now)
			}
			c := cands[i]
			return &Refusal{Kind: c.kind, Key: c.key, Rule: c.rule, RetryAfter: d, Limit: c.limit}
		}
	}
	return nil
}

func (l *Limiter) upstreamLimit(up string) (Limit, string, bool) {
	if lim, ok := l.cfg.PerUpstream[up]; ok && lim.Rate > 0 {
		return lim, fmt.Sprintf("rate_limits.per_upstream.%s", up), true
	}
	if lim, ok := l.cfg.PerUpstream["*"]; ok && lim.Rate > 0 {
		return lim, `rate_limits.per_upstream."*"`, true
	}
	return Limit{}, "", false
}

// sweepLocked drops subject buckets that are full again.
func (l *Limiter) sweepLocked(now time.Time) {
	for k, b := range l.subjects {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.subjects, k)
		}
	}
}

// allowShared is Allow with the buckets in the shared store: one atomic
// round trip for all of a call's buckets.
func (l *Limiter) allowShared(ctx context.Context, subject, upstream, tool, exposed string) error {
	type which struct {
		kind, key, rule string
		limit           Limit
	}
	var ws [3]which
	var bs [3]statestore.Bucket
	n := 0
	add := func(prefix string, w which) {
		ws[n] = w
		// The store sees a hash, not the user's or tool's name.
		sum := sha256.Sum256([]byte(w.key))
		bs[n] = statestore.Bucket{Key: prefix + hex.EncodeToString(sum[:16]), Rate: w.limit.Rate, Burst: w.limit.Burst}
		n++
	}
	if lim := l.cfg.PerSubject; lim.Rate > 0 {
		add("rl:s:", which{"subject", subject, "rate_limits.per_subject", lim})
	}
	if lim, rule, ok := l.upstreamLimit(upstream); ok {
		add("rl:u:", which{"upstream", upstream, rule, lim})
	}
	for _, r := range l.cfg.PerTool {
		if r.Match(tool, exposed) {
			add("rl:t:", which{"tool", tool, fmt.Sprintf("rate_limits.per_tool.%q", r.Key), r.Limit})
			break
		}
	}
	if n == 0 {
		return nil
	}
	v, err := l.shared.Allow(ctx, bs[:n])
	if err != nil {
		return &Unavailable{Err: err}
	}
	if v.Refused == 0 {
		return nil
	}
	w := ws[v.Refused-1]
	return &Refusal{Kind: w.kind, Key: w.key, Rule: w.rule, RetryAfter: v.RetryAfter, Limit: w.limit}
}
