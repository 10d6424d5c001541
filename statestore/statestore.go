// Package statestore holds the state that replicas of one deployment must
// share: per-user upstream tokens, OAuth connect states, rate-limit
// counters and one-time marks of resumed calls. Store is the one interface;
// Memory keeps it in the process (one machine, the default) and Redis in a
// Redis-protocol server ([server] state_store: Redis or Valkey) that every
// replica reaches, so that a limit is one limit and a user connects once
// whichever replica answers (docs/scale-out.md).
//
// What a client's request can carry instead (the state of a call waiting
// for an approval) is sealed into the request by the proxy with the
// deployment's key ([server] state_store_key), not kept here; the store
// only marks such a state used, so it runs once.
//
// Trust: the store is the operator's (its address and password come from
// the config). Values that are secret (tokens, PKCE verifiers) are
// encrypted by their owner before they are stored; the store sees opaque
// bytes under hashed keys.
package statestore

import (
	"context"
	"errors"
	"time"
)

// Store is shared state: keys with values that may expire, and rate-limit
// buckets. Safe for concurrent use.
type Store interface {
	// Get returns the value of key; nil, nil when there is none.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores val under key, expiring after ttl (0: never).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// SetNX stores val under key only when key has no value; it reports
	// whether it did.
	SetNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error)
	// Take returns the value of key and deletes it in one step (nil when
	// there is none): of two callers taking the same key, one gets it.
	Take(ctx context.Context, key string) ([]byte, error)
	// Delete removes key.
	Delete(ctx context.Context, key string) error
	// Allow takes one call from every bucket, or from none when one of
	// them is empty (Verdict.Refused names it).
	Allow(ctx context.Context, buckets []Bucket) (Verdict, error)
	// Acquire takes, for holder, a slot in every one of pools, or in none
	// when one of them is full (the answer is then 1 + its index; 0 when
	// taken). A slot is held for ttl: the holder renews it by acquiring
	// again before then (which never fails for a slot it holds) and gives
	// it back with Release; a holder that vanished (a replica killed)
	// loses it when ttl passes.
	Acquire(ctx context.Context, holder string, ttl time.Duration, pools []Pool) (int, error)
	// Release gives back holder's slots in pools (named by key).
	Release(ctx context.Context, holder string, keys []string) error
	// Shared reports whether other processes see this store (Redis) or
	// only this one (Memory).
	Shared() bool
	// Close releases the store's connections.
	Close() error
}

// Bucket is one rate-limit bucket: Rate calls per second, at most Burst
// at once. The algorithm is GCRA (the generic cell rate algorithm, ITU-T
// I.371), which decides exactly as a token bucket of that rate and size
// but keeps one number per bucket: the time at which it is full again.
type Bucket struct {
	Key   string
	Rate  float64 // > 0
	Burst int     // >= 1
}

// Pool is a set of at most Max slots (sessions of one subject, of the
// whole deployment), named by Key.
type Pool struct {
	Key string
	Max int
}

// Verdict is the answer of Allow.
type Verdict struct {
	// Refused is 0 when the call may go, else 1 + the index of the first
	// empty bucket.
	Refused int
	// RetryAfter is how long until that bucket has a call again.
	RetryAfter time.Duration
}

// Key prefixes: every key the proxy writes starts with Prefix, so a
// store shared with other programs (or another deployment, on another
// database number) keeps them apart.
const Prefix = "mcp-toolsearch:"

// ErrUnavailable wraps every failure to reach a shared store. Callers fail
// closed on it: no call passes an unchecked limit, no token is guessed.
var ErrUnavailable = errors.New("state store unavailable")

// ErrFull is the error of a Memory store at its bound.
var ErrFull = errors.New("state store full")

// interval and tolerance are a bucket's GCRA parameters in microseconds:
// the time one call takes back (1/rate) and the time Burst calls take.
func (b Bucket) params() (interval, tolerance int64) {
	interval = int64(1e6 / b.Rate)
	if interval < 1 {
		interval = 1
	}
	return interval, interval * int64(max(b.Burst, 1))
}
