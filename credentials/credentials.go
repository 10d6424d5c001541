// Package credentials decides which credential a tool call carries to an
// HTTP upstream ([upstreams.NAME.credential]):
//
//   - "static": the configured headers (not handled here);
//   - "passthrough": the caller's own access token, only when the token's
//     audience includes the upstream's (a token issued for the proxy alone
//     is never handed on: MCP spec 2025-11-25 basic/security_best_practices,
//     "Token Passthrough");
//   - "exchange": the caller's token traded at the upstream's authorization
//     server for one issued for the upstream (RFC 8693 token exchange),
//     cached until shortly before it expires;
//   - "oauth": the user's own token for the upstream, obtained once in the
//     browser (OAuth 2.1 authorization code with PKCE S256 and the RFC 8707
//     resource parameter), kept in the encrypted Store and refreshed with
//     its refresh token. A user without one gets *ConnectRequired with the
//     authorization URL.
//
// OAuth requests use golang.org/x/oauth2.
//
// Connect links live in a statestore.Store (Options.States): in memory on
// one machine, in the shared store with [server] state_store, so that the
// browser's callback may reach any replica. A link's record (user,
// upstream, PKCE verifier) is encrypted with the token store's key, kept
// under the SHA-256 of its state value, and taken once.
//
// Trust: the upstream's authorization server is named by the operator's
// config; the browser callback is not trusted beyond its one-time,
// expiring state value, which binds it to the user and upstream the link
// was made for (the link is shown only to that user's client).
package credentials

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-toolsearch/mcp-toolsearch/identity"
	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// Sources.
const (
	Passthrough = "passthrough"
	Exchange    = "exchange"
	OAuth       = "oauth"
)

// Upstream is one upstream's credential source.
type Upstream struct {
	Name         string
	Source       string
	Audience     string
	TokenURL     string
	AuthorizeURL string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// Options configure a Manager.
type Options struct {
	Upstreams []Upstream
	// Store holds "oauth" tokens (required when an upstream uses it).
	Store *Store
	// States holds connect links in progress (default: a Memory store).
	// A shared one lets the callback reach any replica.
	States statestore.Store
	// CallbackURL is the redirect URI of the connect flow
	// (auth.public_url + CallbackPath).
	CallbackURL string
	// HTTPClient talks to authorization servers (default: 30 s timeout).
	HTTPClient *http.Client
	// OnConnected is called after a user connected an upstream (audit,
	// notifications/elicitation/complete).
	OnConnected func(upstream, subject, elicitationID string)
}

// CallbackPath is the path of the connect flow's redirect URI.
const CallbackPath = "/oauth/callback"

// pendingTTL is how long a connect link stays valid.
const pendingTTL = 10 * time.Minute

// maxExchanged bounds the cache of exchanged tokens.
const maxExchanged = 10000

// pollConnected is how often Wait looks in a shared store for a token
// that a callback on another replica stored.
const pollConnected = 500 * time.Millisecond

// Manager hands out credentials. Safe for concurrent use.
type Manager struct {
	ups    map[string]*upstream
	store  *Store
	states statestore.Store
	cb     string
	hc     *http.Client
	onCon  func(upstream, subject, elicitationID string)
	now    func() time.Time

	mu        sync.Mutex
	exchanged map[string]*oauth2.Token
	waiters   map[string][]chan struct{} // upstream\x00subject -> connected
	locks     map[string]*sync.Mutex     // upstream\x00subject -> refresh lock
}

type upstream struct {
	Upstream
	cfg *oauth2.Config
}

// pending is a connect link in progress, kept (encrypted) under
// "oauth:state:<sha256 of state>" until its callback takes it; link is
// what "oauth:link:<slot>" keeps so that the same user is shown the same
// link while it has at least half its life left.
type pending struct {
	Upstream      string    `json:"u"`
	Subject       string    `json:"s"`
	Verifier      string    `json:"v"`
	ElicitationID string    `json:"e"`
	URL           string    `json:"l"`
	Expires       time.Time `json:"x"`
}

// New builds a Manager. It does no I/O.
func New(o Options) (*Manager, error) {
	m := &Manager{ups: map[string]*upstream{}, store: o.Store, states: o.States, cb: o.CallbackURL, hc: o.HTTPClient, onCon: o.OnConnected, now: time.Now,
		exchanged: map[string]*oauth2.Token{}, waiters: map[string][]chan struct{}{}, locks: map[string]*sync.Mutex{}}
	if m.states == nil {
		m.states = statestore.NewMemory(0)
	}
	if m.hc == nil {
		m.hc = &http.Client{Timeout: 30 * time.Second}
	}
	for _, u := range o.Upstreams {
		up := &upstream{Upstream: u}
		switch u.Source {
		case Passthrough:
		case Exchange, OAuth:
			up.cfg = &oauth2.Config{ClientID: u.ClientID, ClientSecret: u.ClientSecret, Scopes: u.Scopes,
				Endpoint: oauth2.Endpoint{AuthURL: u.AuthorizeURL, TokenURL: u.TokenURL}, RedirectURL: o.CallbackURL}
			if u.Source == OAuth && o.Store == nil {
				return nil, fmt.Errorf("upstream %q: credential source \"oauth\" needs a token store", u.Name)
			}
		default:
			return nil, fmt.Errorf("upstream %q: unknown credential source %q", u.Name, u.Source)
		}
		m.ups[u.Name] = up
	}
	return m, nil
}

// PerUser reports whether upstream's calls carry a per-user credential.
func (m *Manager) PerUser(upstream string) bool {
	if m == nil {
		return false
	}
	_, ok := m.ups[upstream]
	return ok
}

// ConnectRequired is the answer for a user who has not connected an
// upstream (source "oauth"): open URL in a browser, then call again.
type ConnectRequired struct {
	Upstream      string
	URL           string
	ElicitationID string
}

func (c *ConnectRequired) Error() string {
	return fmt.Sprintf("upstream %q needs your own account: connect it first by opening %s in a browser and signing in, then call again (the link is yours alone and works once, for %d minutes)",
		c.Upstream, c.URL, int(pendingTTL/time.Minute))
}

// ErrNoIdentity is the error for a per-user upstream called without a
// verified user (stdio, the CLI, a static token).
var ErrNoIdentity = errors.New("needs a verified user (an OAuth access token on the HTTP front); this caller has none")

// Authorization returns the Authorization header value ("Bearer …") for
// id's call to upstream. Errors: *ConnectRequired (source "oauth", no
// token yet or its refresh was refused), or an error naming the upstream
// and what is missing.
func (m *Manager) Authorization(ctx context.Context, upstream string, id *identity.Identity) (string, error) {
	u, ok := m.ups[upstream]
	if !ok {
		return "", fmt.Errorf("upstream %q has no per-user credential source", upstream)
	}
	if id == nil || id.Subject == "" {
		return "", fmt.Errorf("upstream %q %w", upstream, ErrNoIdentity)
	}
	switch u.Source {
	case Passthrough:
		if !id.HasAudience(u.Audience) {
			return "", fmt.Errorf("upstream %q: your access token was not issued for %s (its audience is %s), so it is not passed on; ask for a token whose audience includes it",
				upstream, u.Audience, strings.Join(id.Audience, ", "))
		}
		return "Bearer " + id.Token, nil
	case Exchange:
		t, err := m.exchange(ctx, u, id)
		if err != nil {
			return "", err
		}
		return "Bearer " + t.AccessToken, nil
	}
	t, err := m.userToken(ctx, u, id.Subject)
	if err != nil {
		return "", err
	}
	return "Bearer " + t.AccessToken, nil
}

// exchange trades id's token for one issued for u.Audience (RFC 8693 §2.1).
func (m *Manager) exchange(ctx context.Context, u *upstream, id *identity.Identity) (*oauth2.Token, error) {
	sum := sha256.Sum256([]byte(id.Token))
	key := u.Name + "\x00" + id.Subject + "\x00" + base64.RawStdEncoding.EncodeToString(sum[:])
	m.mu.Lock()
	if t, ok := m.exchanged[key]; ok && t.Expiry.After(m.now().Add(30*time.Second)) {
		m.mu.Unlock()
		return t, nil
	}
	m.mu.Unlock()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, m.hc)
	t, err := u.cfg.Exchange(ctx, "",
		oauth2.SetAuthURLParam("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
		oauth2.SetAuthURLParam("subject_token", id.Token),
		oauth2.SetAuthURLParam("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
		oauth2.SetAuthURLParam("requested_token_type", "urn:ietf:params:oauth:token-type:access_token"),
		oauth2.SetAuthURLParam("audience", u.Audience),
		oauth2.SetAuthURLParam("resource", u.Audience),
	)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: token exchange at %s refused: %s", u.Name, u.TokenURL, oauthErr(err))
	}
	if t.Expiry.IsZero() {
		t.Expiry = m.now().Add(time.Minute) // no expires_in: reuse briefly only
	}
	m.mu.Lock()
	if len(m.exchanged) >= maxExchanged {
		now := m.now()
		for k, v := range m.exchanged {
			if !v.Expiry.After(now) {
				delete(m.exchanged, k)
			}
		}
		if len(m.exchanged) >= maxExchanged {
			m.exchanged = map[string]*oauth2.Token{}
		}
	}
	m.exchanged[key] = t
	m.mu.Unlock()
	return t, nil
}

// oauthErr is an oauth2 error's text without the response body (it may
// echo a token).
func oauthErr(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			s := re.ErrorCode
			if re.ErrorDescription != "" {
				s += ": " + re.ErrorDescription
			}
			return s
		}
		if re.Response != nil {
			return re.Response.Status
		}
	}
	return err.Error()
}

func (m *Manager) lock(key string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[key]
	if !ok {
		l = &sync.Mutex{}
		m.locks[key] = l
	}
	return l
}

// userToken returns subject's stored token for u, refreshed when it
// expired (serialised per user and upstream).
func (m *Manager) userToken(ctx context.Context, u *upstream, subject string) (*oauth2.Token, error) {
	l := m.lock(u.Name + "\x00" + subject)
	l.Lock()
	defer l.Unlock()
	t, err := m.store.Get(ctx, u.Name, subject)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: your stored token cannot be read, so the call was not made: %w", u.Name, err)
	}
	if t == nil {
		return nil, m.connectRequired(ctx, u, subject)
	}
	if t.Valid() {
		return t, nil
	}
	if t.RefreshToken == "" {
		_ = m.store.Put(ctx, u.Name, subject, nil)
		return nil, m.connectRequired(ctx, u, subject)
	}
	nt, err := u.cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, m.hc), t).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			// Another replica may have refreshed it first (a refresh
			// token is used once): its new token is in the store.
			if now, gerr := m.store.Get(ctx, u.Name, subject); gerr == nil && now != nil && now.RefreshToken != t.RefreshToken && now.Valid() {
				return now, nil
			}
			_ = m.store.Put(ctx, u.Name, subject, nil) // revoked or expired: connect again
			return nil, m.connectRequired(ctx, u, subject)
		}
		return nil, fmt.Errorf("upstream %q: refreshing your token at %s failed: %s", u.Name, u.TokenURL, oauthErr(err))
	}
	if nt.AccessToken != t.AccessToken || nt.RefreshToken != t.RefreshToken {
		if err := m.store.Put(ctx, u.Name, subject, nt); err != nil {
			return nil, fmt.Errorf("upstream %q: saving your refreshed token: %w", u.Name, err)
		}
	}
	return nt, nil
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// connectRequired makes (or reuses, while it has at least half its life
// left) the connect link of subject for u. A store that cannot be reached
// is an error: no link is shown that no replica could complete.
func (m *Manager) connectRequired(ctx context.Context, u *upstream, subject string) error {
	name, _ := slot(u.Name, subject)
	linkKey, linkAAD := "oauth:link:"+name, []byte("oauth-link\x00"+u.Name+"\x00"+subject)
	fail := func(err error) error {
		return fmt.Errorf("upstream %q needs your own account, but no connect link can be made now: %w", u.Name, err)
	}
	now := m.now()
	raw, err := m.states.Get(ctx, linkKey)
	if err != nil {
		return fail(err)
	}
	if plain, ok := m.store.open(raw, linkAAD); raw != nil && ok {
		var p pending
		if json.Unmarshal(plain, &p) == nil && p.Expires.Sub(now) > pendingTTL/2 {
			return &ConnectRequired{Upstream: u.Name, URL: p.URL, ElicitationID: p.ElicitationID}
		}
	}
	state := randomString()
	verifier := oauth2.GenerateVerifier()
	url := u.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", u.Audience))
	p := pending{Upstream: u.Name, Subject: subject, Verifier: verifier, ElicitationID: randomString()[:22], URL: url, Expires: now.Add(pendingTTL)}
	plain, _ := json.Marshal(p)
	key, aad := stateKey(state)
	if err := m.states.Set(ctx, key, m.store.seal(plain, aad), pendingTTL); err != nil {
		if errors.Is(err, statestore.ErrFull) {
			return fmt.Errorf("upstream %q: too many connect links in progress; try again in a few minutes", u.Name)
		}
		return fail(err)
	}
	link, _ := json.Marshal(pending{URL: url, ElicitationID: p.ElicitationID, Expires: p.Expires})
	_ = m.states.Set(ctx, linkKey, m.store.seal(link, linkAAD), pendingTTL/2) // only a reuse of the link is lost
	return &ConnectRequired{Upstream: u.Name, URL: url, ElicitationID: p.ElicitationID}
}

// stateKey is where a connect link's record is kept: under the SHA-256 of
// its state value (the store never sees a state that would complete a
// link), which is also the record's additional authenticated data.
func stateKey(state string) (key string, aad []byte) {
	sum := sha256.Sum256([]byte(state))
	h := hex.EncodeToString(sum[:])
	return "oauth:state:" + h, []byte("oauth-state\x00" + h)
}

// Wait blocks until subject has connected upstream (the callback stored a
// token), ctx ends, or d passes; it reports whether the user connected.
func (m *Manager) Wait(ctx context.Context, upstream, subject string, d time.Duration) bool {
	key := upstream + "\x00" + subject
	ch := make(chan struct{})
	m.mu.Lock()
	m.waiters[key] = append(m.waiters[key], ch)
	m.mu.Unlock()
	has := func() bool {
		tok, err := m.store.Get(ctx, upstream, subject)
		return err == nil && tok != nil
	}
	// The callback may have come before Wait registered.
	connected := m.store != nil && has()
	t := time.NewTimer(d)
	defer t.Stop()
	// With a shared store the callback may reach another replica, which
	// cannot close this one's channel: look in the store now and then.
	var poll <-chan time.Time
	if m.store != nil && m.states.Shared() {
		tick := time.NewTicker(pollConnected)
		defer tick.Stop()
		poll = tick.C
	}
wait:
	for !connected {
		select {
		case <-ch:
			return true
		case <-poll:
			connected = has()
		case <-ctx.Done():
			break wait
		case <-t.C:
			break wait
		}
	}
	m.mu.Lock()
	ws := m.waiters[key]
	for i, w := range ws {
		if w == ch {
			m.waiters[key] = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(m.waiters[key]) == 0 {
		delete(m.waiters, key)
	}
	m.mu.Unlock()
	return connected
}

// Callback is the HTTP handler of CallbackPath: the authorization
// server's redirect after the user signed in. It exchanges the code (with
// the PKCE verifier of the link's state), stores the token for the link's
// user and answers with a short page.
func (m *Manager) Callback() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		state := q.Get("state")
		key, aad := stateKey(state)
		raw, err := m.states.Take(r.Context(), key) // one use, on whichever replica
		if err != nil {
			page(w, http.StatusServiceUnavailable, "The proxy cannot reach its state store just now, so this link cannot be checked. Open the link again in a moment.")
			return
		}
		var p pending
		plain, ok := m.store.open(raw, aad)
		if ok {
			ok = json.Unmarshal(plain, &p) == nil
		}
		u := m.ups[p.Upstream]
		if !ok || u == nil || state == "" || m.now().After(p.Expires) {
			page(w, http.StatusBadRequest, "This connect link is unknown, used or expired. Call the tool again to get a new one.")
			return
		}
		if e := q.Get("error"); e != "" {
			page(w, http.StatusBadRequest, fmt.Sprintf("The authorization server refused: %s %s", e, q.Get("error_description")))
			return
		}
		code := q.Get("code")
		if code == "" {
			page(w, http.StatusBadRequest, "The redirect carries no authorization code.")
			return
		}
		ctx := context.WithValue(r.Context(), oauth2.HTTPClient, m.hc)
		t, err := u.cfg.Exchange(ctx, code, oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", u.Audience))
		if err != nil {
			page(w, http.StatusBadGateway, fmt.Sprintf("Exchanging the code at %s failed: %s", u.TokenURL, oauthErr(err)))
			return
		}
		if err := m.store.Put(r.Context(), u.Name, p.Subject, t); err != nil {
			page(w, http.StatusInternalServerError, "Saving the token failed: "+err.Error())
			return
		}
		name, _ := slot(u.Name, p.Subject)
		_ = m.states.Delete(r.Context(), "oauth:link:"+name) // used: the next prompt makes a new one
		wkey := u.Name + "\x00" + p.Subject
		m.mu.Lock()
		ws := m.waiters[wkey]
		delete(m.waiters, wkey)
		m.mu.Unlock()
		for _, ch := range ws {
			close(ch)
		}
		if m.onCon != nil {
			m.onCon(u.Name, p.Subject, p.ElicitationID)
		}
		page(w, http.StatusOK, fmt.Sprintf("Connected %s to mcp-toolsearch. You can close this tab and go back to your client.", u.Name))
	})
}

// Disconnect deletes subject's stored token for upstream.
func (m *Manager) Disconnect(ctx context.Context, upstream, subject string) error {
	if m.store == nil {
		return nil
	}
	return m.store.Put(ctx, upstream, subject, nil)
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>mcp-toolsearch</title><p>%s</p>\n", html.EscapeString(msg))
}
