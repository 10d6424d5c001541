package proxy

// Exchanges bound to the subject that started them.
//
// A 2026-07-28 call waiting for its client's input (exchange.go) is
// continued by a retry carrying its requestState. The state is an
// unguessable id, but a state that leaks (a log, a shared screen, a proxy
// in between) was enough: another user, with a valid token of his own,
// answered the first user's elicitation and received her result, and the
// audit log credited her. Now the exchange is bound to the subject that
// started it (verifiedSubject: the OAuth user, else an endpoint with its
// own token, else the client address; never a declared client name), and
// a retry by any other subject gets exactly the error of an unknown state
// — it learns nothing, not even that the state exists — while the attempt
// is written to the audit log (kind "foreign_state", with both subjects).
// Sealed states (resume.go) carry the same subject inside the seal.
//
// stateOwners keeps the binding, behind an interface so that a store
// shared by replicas can hold it (statestore); memOwners keeps it in this
// process, next to the exchanges themselves.
//
// Trust: guards against clients (with a valid token of their own) that
// present another subject's requestState.

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-toolsearch/mcp-toolsearch/audit"
)

// stateOwners binds exchange ids to the subject whose call they continue.
type stateOwners interface {
	// Bind records that exchange id belongs to subject, for at most ttl.
	Bind(ctx context.Context, id, subject string, ttl time.Duration) error
	// Owner returns the subject exchange id belongs to; false when the
	// binding is unknown (never made, forgotten or expired).
	Owner(ctx context.Context, id string) (string, bool)
	// Forget drops the binding of id.
	Forget(id string)
}

// memOwners is stateOwners in this process (bounded by maxExchanges:
// every binding is forgotten when its exchange ends).
type memOwners struct {
	mu sync.Mutex
	m  map[string]string
}

func (o *memOwners) Bind(_ context.Context, id, subject string, _ time.Duration) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[id] = subject
	return nil
}

func (o *memOwners) Owner(_ context.Context, id string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[id]
	return s, ok
}

func (o *memOwners) Forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, id)
}

// owners is the proxy's stateOwners.
func (p *Proxy) owners() stateOwners {
	p.exs.ownersOnce.Do(func() {
		if p.exs.owners == nil {
			p.exs.owners = &memOwners{}
		}
	})
	return p.exs.owners
}

// exchangeSubject is the subject a call of s (in ctx) is bound to.
func (p *Proxy) exchangeSubject(ctx context.Context, s *session) string {
	return p.verifiedSubject(ctx, s.ident(), s.endpoint) // shares.go
}

// errUnknownState is the answer to a requestState this proxy does not
// know, and, word for word, to one that belongs to another subject.
var errUnknownState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState is unknown or expired: the call it continued ended (answered, timed out after tools.approval_timeout, or started on another replica of a stateless deployment); call the tool again without requestState"}

// foreignState records an attempt by subject to continue a call of
// another subject (owner) with its requestState, and returns the error of
// an unknown state.
func (p *Proxy) foreignState(s *session, subject, owner, tool string) error {
	p.log.Debug("requestState of another subject refused", "subject", subject, "tool", tool)
	if p.idn != nil && p.idn.audit != nil {
		p.idn.audit.Record(audit.Event{Kind: audit.KindForeignState, Subject: subject, Session: sessionID(s), Tool: tool,
			Outcome: "refused", Detail: "requestState of a call started by " + owner + ", answered as unknown"})
	}
	return errUnknownState
}
