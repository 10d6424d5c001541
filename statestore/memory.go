package statestore

import (
	"context"
	"encoding/binary"
	"sync"
	"time"
)

// DefaultMemoryEntries bounds a Memory store: past it, expired entries are
// dropped; a store still full refuses new keys with ErrFull.
const DefaultMemoryEntries = 100000

// Memory is a Store in this process: state for one machine. Its values
// expire like the shared store's; it keeps at most MaxEntries keys.
type Memory struct {
	max int
	now func() time.Time

	mu    sync.Mutex
	m     map[string]memEntry
	pools map[string]map[string]time.Time // pool key -> holder -> expiry
}

type memEntry struct {
	val []byte
	exp time.Time // zero: never
}

// NewMemory returns an empty Memory store holding at most maxEntries keys
// (0: DefaultMemoryEntries).
func NewMemory(maxEntries int) *Memory {
	if maxEntries <= 0 {
		maxEntries = DefaultMemoryEntries
	}
	return &Memory{max: maxEntries, now: time.Now, m: map[string]memEntry{}, pools: map[string]map[string]time.Time{}}
}

func (m *Memory) Shared() bool { return false }
func (m *Memory) Close() error { return nil }

// live returns key's entry when it has not expired (it drops it when it has).
func (m *Memory) live(key string, now time.Time) (memEntry, bool) {
	e, ok := m.m[key]
	if ok && !e.exp.IsZero() && !now.Before(e.exp) {
		delete(m.m, key)
		return memEntry{}, false
	}
	return e, ok
}

// room makes room for one more key (under mu).
func (m *Memory) room(key string, now time.Time) error {
	if _, ok := m.m[key]; ok || len(m.m) < m.max {
		return nil
	}
	for k, e := range m.m {
		if !e.exp.IsZero() && !now.Before(e.exp) {
			delete(m.m, k)
		}
	}
	if len(m.m) >= m.max {
		return ErrFull
	}
	return nil
}

func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key, m.now())
	if !ok {
		return nil, nil
	}
	return append([]byte(nil), e.val...), nil
}

func (m *Memory) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if err := m.room(key, now); err != nil {
		return err
	}
	m.m[key] = memEntry{val: append([]byte(nil), val...), exp: expiry(now, ttl)}
	return nil
}

func (m *Memory) SetNX(_ context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.live(key, now); ok {
		return false, nil
	}
	if err := m.room(key, now); err != nil {
		return false, err
	}
	m.m[key] = memEntry{val: append([]byte(nil), val...), exp: expiry(now, ttl)}
	return true, nil
}

func (m *Memory) Take(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key, m.now())
	if !ok {
		return nil, nil
	}
	delete(m.m, key)
	return e.val, nil
}

func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.m, key)
	m.mu.Unlock()
	return nil
}

// Allow is GCRA, as the shared store's script (redis.go) does it: each
// bucket's value is its theoretical arrival time (TAT, microseconds); a
// call is allowed when TAT + interval - tolerance <= now.
func (m *Memory) Allow(_ context.Context, buckets []Bucket) (Verdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.now()
	now := t.UnixMicro()
	var tats [8]int64
	if len(buckets) > len(tats) {
		panic("statestore: more than 8 buckets in one call")
	}
	for i, b := range buckets {
		interval, tolerance := b.params()
		tat := now
		if e, ok := m.live(b.Key, t); ok && len(e.val) == 8 {
			tat = max(int64(binary.BigEndian.Uint64(e.val)), now)
		}
		next := tat + interval
		if wait := next - tolerance - now; wait > 0 {
			return Verdict{Refused: i + 1, RetryAfter: time.Duration(wait) * time.Microsecond}, nil
		}
		tats[i] = next
	}
	for i, b := range buckets {
		if err := m.room(b.Key, t); err != nil {
			return Verdict{}, err
		}
		e := m.m[b.Key]
		if len(e.val) != 8 {
			e.val = make([]byte, 8)
		}
		binary.BigEndian.PutUint64(e.val, uint64(tats[i]))
		e.exp = t.Add(time.Duration(tats[i]-now) * time.Microsecond) // full again: nothing to keep
		m.m[b.Key] = e
	}
	return Verdict{}, nil
}

// Acquire is Store.Acquire (the shared store's script does the same).
func (m *Memory) Acquire(_ context.Context, holder string, ttl time.Duration, pools []Pool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for i, p := range pools {
		held := m.pools[p.Key]
		for h, exp := range held {
			if !now.Before(exp) {
				delete(held, h)
			}
		}
		if _, mine := held[holder]; !mine && len(held) >= p.Max {
			return i + 1, nil
		}
	}
	for _, p := range pools {
		held := m.pools[p.Key]
		if held == nil {
			held = map[string]time.Time{}
			m.pools[p.Key] = held
		}
		held[holder] = now.Add(ttl)
	}
	return 0, nil
}

// Release is Store.Release.
func (m *Memory) Release(_ context.Context, holder string, keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.pools[k], holder)
		if len(m.pools[k]) == 0 {
			delete(m.pools, k)
		}
	}
	return nil
}
