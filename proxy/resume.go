package proxy

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/telemetry"
)

// Approvals resumable on any replica ([server] state_store).
//
// A call of a 2026-07-28 client that needs an approval (tools.require_
// approval, or a changed tool definition) has done nothing yet when the
// question is asked: the approval comes before the upstream call. So the
// proxy does not keep such a call waiting in its memory (an exchange,
// exchange.go, which only the replica that holds it can continue): it
// ends it and answers input_required with a requestState that carries
// what the retry needs, sealed (AES-256-GCM, [server] state_store_key,
// the same on every replica): who called (the subject), the tools/call
// it continues (tool name and a hash of its arguments), the approval
// asked (catalog id, hash of the call's arguments, rule), the approvals
// already given, a one-time nonce and the expiry (tools.approval_timeout).
// The retry, on any replica, opens it, checks that the same subject
// retries the same call, marks the nonce used in the state store (SET NX:
// of two retries with one state, one runs) and runs the call again with
// the person's answer as the approval's decision; the rate limits it
// passed in the first round are not charged again.
//
// The connect prompt of a per-user upstream (a URL elicitation: the
// user's account is not connected yet) comes before the upstream call
// too, and is handed off the same way: the retry, on any replica, waits
// for the token (auth.connect_wait, looking in the shared store) and
// makes the call.
//
// What stays on one replica: a question an upstream asks mid-call
// (sampling, elicitation, roots) and an approval inside a code run;
// those exchanges keep the in-memory requestState ("mts1.") and their
// retry must reach the replica that asked (docs/scale-out.md).
//
// Trust: the client carries the state but cannot read it (arguments may
// be secret) nor forge or alter it (GCM's tag); it cannot move it to
// another caller or call (subject, tool and arguments are checked) nor use
// it twice (the nonce).

// resumePrefix marks a sealed requestState.
const resumePrefix = "mts2."

// resumeAAD binds sealed states to their use.
var resumeAAD = []byte("mcp-toolsearch requestState 2")

// sealer seals and opens resumable requestStates.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(v any) string {
	plain, _ := json.Marshal(v)
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return resumePrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, resumeAAD))
}

func (s *sealer) open(state string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, resumePrefix))
	ns := s.aead.NonceSize()
	if err != nil || len(raw) < ns {
		return false
	}
	plain, err := s.aead.Open(nil, raw[:ns], raw[ns:], resumeAAD)
	return err == nil && json.Unmarshal(plain, v) == nil
}

// approvalStep is one approval of a resumable call: asked (in Ask) or
// given (in Done).
type approvalStep struct {
	Kind   string `json:"k,omitempty"`  // "" an approval, "connect" the connect prompt (Rule: the upstream)
	Entry  string `json:"e"`            // catalog id
	Args   string `json:"a"`            // argsHash of the arguments the approval saw
	Rule   string `json:"r"`            // the rule that asked for it
	OK     bool   `json:"ok,omitempty"` // the person approved (Done only)
	Reason string `json:"why,omitempty"`
}

// resumeState is what a sealed requestState holds.
type resumeState struct {
	Subject string         `json:"s"` // the caller (exchangeSubject)
	Tool    string         `json:"t"` // the client's tools/call name
	Args    string         `json:"a"` // argsHash of its arguments
	Done    []approvalStep `json:"d,omitempty"`
	Ask     approvalStep   `json:"q"`
	Key     string         `json:"k"` // the question's key in inputRequests
	Nonce   string         `json:"n"`
	Exp     int64          `json:"x"` // unix milliseconds
}

// resumer is the sealer of resumable requestStates; nil without a shared
// state store.
func (p *Proxy) resumer() *sealer {
	if p.idn == nil {
		return nil
	}
	return p.idn.resume
}

// argsHash identifies a call's arguments (base64 SHA-256 of their JSON).
func argsHash(args json.RawMessage) string {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	sum := sha256.Sum256(args)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// resumedKey is the context key of the approvals a resumed call was given.
type resumedKey struct{}

func resumedSteps(ctx context.Context) []approvalStep {
	v, _ := ctx.Value(resumedKey{}).([]approvalStep)
	return v
}

// resumedDecision is the decision a resumed call brings for the approval
// of e with args under rule.
func resumedDecision(ctx context.Context, e *catalog.Entry, args json.RawMessage, rule string) (approvalStep, bool) {
	steps := resumedSteps(ctx)
	if len(steps) == 0 {
		return approvalStep{}, false
	}
	h := argsHash(args)
	for _, st := range steps {
		if st.Kind == "" && st.Entry == e.ID && st.Args == h && st.Rule == rule {
			return st, true
		}
	}
	return approvalStep{}, false
}

// resumedConnect is the answer a resumed call brings to the connect
// prompt of e's upstream.
func resumedConnect(ctx context.Context, e *catalog.Entry, args json.RawMessage) (approvalStep, bool) {
	steps := resumedSteps(ctx)
	if len(steps) == 0 {
		return approvalStep{}, false
	}
	h := argsHash(args)
	for _, st := range steps {
		if st.Kind == "connect" && st.Entry == e.ID && st.Args == h && st.Rule == e.Upstream {
			return st, true
		}
	}
	return approvalStep{}, false
}

// resumedCall reports whether ctx is a resumed call of e: its rate limits
// were taken in the first round. (The one call a resumed tools/call makes
// is e's; its arguments are checked by the decisions it brings.)
func resumedCall(ctx context.Context, e *catalog.Entry) bool {
	for _, st := range resumedSteps(ctx) {
		if st.Entry == e.ID {
			return true
		}
	}
	return false
}

// errHandedOff ends a call whose approval question went to the client in
// a sealed requestState: its retry, on any replica, continues it.
var errHandedOff = &blockedError{outcome: telemetry.OutcomeInputRequired, err: errors.New("the approval question went to the client; its retry continues the call")}

// handOffApproval ends the call (s's exchange) with q for the client when
// the call can resume elsewhere: a shared state store is configured, the
// call is the client's tools/call of e itself (directly or as tool_call's
// one call, not a code run's) and its exchange has asked nothing yet. It
// reports whether it did.
func (p *Proxy) handOffApproval(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string, q *mcp.ElicitParams) bool {
	return p.handOff(ctx, s, e, args, approvalStep{Entry: e.ID, Args: argsHash(args), Rule: rule}, q)
}

// handOffConnect is handOffApproval for the connect prompt of e's upstream.
func (p *Proxy) handOffConnect(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, q *mcp.ElicitParams) bool {
	return p.handOff(ctx, s, e, args, approvalStep{Kind: "connect", Entry: e.ID, Args: argsHash(args), Rule: e.Upstream}, q)
}

func (p *Proxy) handOff(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, ask approvalStep, q *mcp.ElicitParams) bool {
	ex := s.ex
	if p.resumer() == nil || ex == nil || (callRequest(ctx, e.Exposed) == nil && toolCallRequest(ctx) == nil) {
		return false
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.round > 0 || len(ex.pending) > 0 || ex.handoff != nil {
		return false
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := "approval"
	if ask.Kind != "" {
		key = ask.Kind
	}
	st := resumeState{Subject: p.exchangeSubject(ctx, s), Tool: ex.tool, Args: argsHash(ex.args), Done: resumedSteps(ctx),
		Ask: ask, Key: key,
		Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), Exp: time.Now().Add(p.approvalTimeout()).UnixMilli()}
	ex.handoff = withResultType(&mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: q}, RequestState: p.resumer().seal(st)}, resultInputRequired)
	return true
}

// resumeCall continues, on this replica, a call that waited for approval
// (cr carries the sealed state and the client's answers): the checks of
// the package comment, then the call runs again with the decision.
func (p *Proxy) resumeCall(ctx context.Context, s *session, cr *mcp.CallToolRequest, args json.RawMessage) (context.Context, error) {
	bad := func(format string, a ...any) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState: " + fmt.Sprintf(format, a...)}
	}
	var st resumeState
	if p.resumer() == nil || !p.resumer().open(cr.Params.RequestState, &st) {
		return nil, bad("not made by this deployment, or altered (every replica needs the same server.state_store_key); call the tool again without requestState")
	}
	if time.Now().UnixMilli() > st.Exp {
		return nil, bad("expired: the approval was not answered within tools.approval_timeout (%s); call the tool again without requestState", p.approvalTimeout())
	}
	if subject := p.exchangeSubject(ctx, s); st.Subject != subject {
		// Another subject's call: answered as a state not made here
		// (exchangeowner.go), and audited.
		_ = p.foreignState(s, subject, st.Subject, cr.Params.Name)
		return nil, bad("not made by this deployment, or altered (every replica needs the same server.state_store_key); call the tool again without requestState")
	}
	if st.Tool != cr.Params.Name || st.Args != argsHash(args) {
		return nil, bad("it belongs to another call (the retry must repeat the tool's name and arguments)")
	}
	answer := cr.Params.InputResponses[st.Key]
	if answer == nil {
		return nil, bad("inputResponses has no answer under %q (the approval question)", st.Key)
	}
	res, err := asResult(&mcp.ElicitParams{}, answer)
	if err != nil {
		return nil, err
	}
	ok, reason := approvalAnswer(res.(*mcp.ElicitResult))
	if st.Ask.Kind == "connect" {
		ok, reason = res.(*mcp.ElicitResult).Action == "accept", "the person answered "+res.(*mcp.ElicitResult).Action
	}
	fresh, err := p.idn.state.SetNX(ctx, "used:"+st.Nonce, []byte("1"), time.Until(time.UnixMilli(st.Exp))+time.Minute)
	if err != nil {
		return nil, &jsonrpc.Error{Code: -32000, Message: fmt.Sprintf("mcp-toolsearch: the call cannot continue now: %s; retry with the same requestState (it stays valid until tools.approval_timeout)", p.conf().Redact(err.Error()))}
	}
	if !fresh {
		return nil, bad("already used: the call it continued has run; call the tool again to run it again")
	}
	done := append(st.Done[:len(st.Done):len(st.Done)], approvalStep{Kind: st.Ask.Kind, Entry: st.Ask.Entry, Args: st.Ask.Args, Rule: st.Ask.Rule, OK: ok, Reason: reason})
	return context.WithValue(ctx, resumedKey{}, done), nil
}
