package proxy

// Session shares and exchange owners in the shared state store ([server]
// state_store): the implementations of sessionShares (shares.go) and
// stateOwners (exchangeowner.go) for replicas.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// storeShares is sessionShares in the shared state store ([server]
// state_store), so that a subject's share of sessions holds across
// replicas. Each session a replica admits is a slot in the subject's pool
// (statestore.Acquire), held for shareLease and renewed by the replica
// that holds it every shareLease/3; a replica that is killed stops
// renewing, and its slots come back within shareLease.
type storeShares struct {
	st statestore.Store

	mu   sync.Mutex
	held map[string][]shareSlot // subject -> slots taken here
	quit chan struct{}
}

type shareSlot struct {
	id    string
	limit int
}

// shareLease is how long a slot outlives the last renewal of its holder.
const shareLease = 90 * time.Second

func newStoreShares(st statestore.Store) *storeShares {
	s := &storeShares{st: st, held: map[string][]shareSlot{}, quit: make(chan struct{})}
	go s.renew()
	return s
}

func sharePool(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return "sess:" + hex.EncodeToString(sum[:16])
}

func (s *storeShares) Take(ctx context.Context, subject string, limit int) (bool, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	n, err := s.st.Acquire(ctx, id, shareLease, []statestore.Pool{{Key: sharePool(subject), Max: limit}})
	if err != nil || n != 0 {
		return false, err
	}
	s.mu.Lock()
	s.held[subject] = append(s.held[subject], shareSlot{id: id, limit: limit})
	s.mu.Unlock()
	return true, nil
}

func (s *storeShares) Give(subject string) {
	s.mu.Lock()
	slots := s.held[subject]
	if len(slots) == 0 {
		s.mu.Unlock()
		return
	}
	slot := slots[len(slots)-1]
	if len(slots) == 1 {
		delete(s.held, subject)
	} else {
		s.held[subject] = slots[:len(slots)-1]
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), statestore.DefaultTimeout)
	defer cancel()
	_ = s.st.Release(ctx, slot.id, []string{sharePool(subject)}) // else it lapses within shareLease
}

// renew keeps this replica's slots held.
func (s *storeShares) renew() {
	t := time.NewTicker(shareLease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.mu.Lock()
		type one struct {
			subject string
			slot    shareSlot
		}
		var all []one
		for subject, slots := range s.held {
			for _, sl := range slots {
				all = append(all, one{subject, sl})
			}
		}
		s.mu.Unlock()
		for _, o := range all {
			ctx, cancel := context.WithTimeout(context.Background(), statestore.DefaultTimeout)
			_, _ = s.st.Acquire(ctx, o.slot.id, shareLease, []statestore.Pool{{Key: sharePool(o.subject), Max: o.slot.limit}})
			cancel()
		}
	}
}

func (s *storeShares) close() { close(s.quit) }

// storeOwners is stateOwners for replicas sharing a state store. The
// binding that decides is this process's own (memOwners: the exchange is
// here); a copy goes to the store, best effort, so that another replica a
// retry reaches can tell a foreign subject (audited, answered as unknown)
// from the owner, who is told the call waits on another replica. A store
// that cannot be reached changes nothing but that message.
type storeOwners struct {
	local memOwners
	st    statestore.Store
}

func ownerKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "own:" + hex.EncodeToString(sum[:16])
}

func (o *storeOwners) Bind(ctx context.Context, id, subject string, ttl time.Duration) error {
	_ = o.local.Bind(ctx, id, subject, ttl)
	_ = o.st.Set(ctx, ownerKey(id), []byte(subject), ttl)
	return nil
}

func (o *storeOwners) Owner(ctx context.Context, id string) (string, bool) {
	if s, ok := o.local.Owner(ctx, id); ok {
		return s, true
	}
	v, err := o.st.Get(ctx, ownerKey(id))
	if err != nil || v == nil {
		return "", false
	}
	return string(v), true
}

func (o *storeOwners) Forget(id string) {
	o.local.Forget(id)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), statestore.DefaultTimeout)
		defer cancel()
		_ = o.st.Delete(ctx, ownerKey(id)) // else it lapses with its ttl
	}()
}

// errStateElsewhere answers the owner of a requestState whose call this
// replica does not hold but another replica bound.
var errStateElsewhere = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState belongs to a call held by another replica of this deployment (an upstream's question or a code run waits there), or one that has just ended: the load balancer sent this retry elsewhere. Call the tool again without requestState; to continue such calls, have the balancer send a client's retries to the replica that answered it"}
