// Package pins keeps the definition of every upstream tool as first seen
// ("pinned"), so that a definition that changes later — a rug pull — is
// noticed. A pin is the SHA-256 of a tool's name,
// title, description, inputSchema, outputSchema and annotations, in
// canonical JSON (object keys sorted), keyed by the tool's catalog id
// ("mcp:<upstream>:<tool>").
//
// State lives in a JSON file (Store.Path, written atomically, mode 0600):
// the pinned hashes and the changed hashes waiting for approval. People
// approve with `mcp-toolsearch approve ID` (Approve), which appends one
// line "ID HASH" to Path+".approved" and never writes the state file, so a
// running proxy and the command never overwrite each other; the proxy
// applies approvals when it loads the store and when ApplyApprovals sees
// the file change.
//
// Trust: tool definitions come from upstream servers, which are not
// trusted; the approval file is the operator's (docs/security.md).
package pins

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/internal/pathq"
)

// Hash is the pin of a tool: "sha256:" and 64 hex digits over the
// canonical JSON of its name, title, description, inputSchema,
// outputSchema and annotations (absent members are null).
func Hash(t *mcp.Tool) string { return HashWith(t, nil) }

// HashWith is Hash covering also extra, the tool's members that mcp.Tool
// does not carry (ingest.Tool.Extra: "execution" and later members), as
// one JSON object. A tool without such members (extra empty) has the same
// pin as Hash gives, so pins recorded before extra members were kept stay
// valid for it.
func HashWith(t *mcp.Tool, extra json.RawMessage) string {
	canon := func(v any) any {
		var raw json.RawMessage
		switch x := v.(type) {
		case nil:
			return nil
		case json.RawMessage:
			raw = x
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return fmt.Sprint(x)
			}
			raw = b
		}
		var out any
		if json.Unmarshal(raw, &out) != nil {
			return string(raw)
		}
		return out // re-encoded with sorted keys
	}
	var ann any
	if t.Annotations != nil {
		ann = canon(t.Annotations)
	}
	parts := []any{t.Name, t.Title, t.Description, canon(t.InputSchema), canon(t.OutputSchema), ann}
	if len(extra) > 0 {
		parts = append(parts, canon(extra))
	}
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Short is a hash cut for messages ("sha256:0123456789ab").
func Short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// Pin is one recorded definition.
type Pin struct {
	Hash  string `json:"hash"`
	Since string `json:"since"` // RFC 3339, when it was recorded
}

type file struct {
	Version int            `json:"version"`
	Pinned  map[string]Pin `json:"pinned"`
	Pending map[string]Pin `json:"pending,omitempty"`
}

// Verdict is what Check found.
type Verdict int

const (
	// New: first sight; the definition is now pinned.
	New Verdict = iota
	// Same: the definition is the pinned one.
	Same
	// Changed: the definition differs from the pinned one.
	Changed
)

// Store is the pinned definitions of one deployment. Safe for concurrent
// use.
type Store struct {
	path string // "" keeps everything in memory

	mu          sync.Mutex
	f           file
	approvedMod time.Time
	approvedLen int64
	now         func() time.Time
	holds       int  // open Hold calls: saves wait for their release
	dirty       bool // a save waited for a release
}

// Open loads the store at path (a missing file is an empty store; ""
// keeps the store in memory only) and applies the approvals already in
// path+".approved".
//
// Errors: the file exists but cannot be read or is not a pins file, e.g.
// `pins file "/x/config.pins.json": invalid character …`.
func Open(path string) (*Store, error) {
	s := &Store{path: path, f: file{Version: 1, Pinned: map[string]Pin{}, Pending: map[string]Pin{}}, now: time.Now}
	if path == "" {
		return s, nil
	}
	f, err := readFile(path)
	if err != nil {
		return nil, err
	}
	s.f = f
	if _, err := s.ApplyApprovals(); err != nil {
		return nil, err
	}
	return s, nil
}

func readFile(path string) (file, error) {
	f := file{Version: 1, Pinned: map[string]Pin{}, Pending: map[string]Pin{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("pins file %s: %w", pathq.Quote(path), err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("pins file %s: %w", pathq.Quote(path), err)
	}
	if f.Pinned == nil {
		f.Pinned = map[string]Pin{}
	}
	if f.Pending == nil {
		f.Pending = map[string]Pin{}
	}
	return f, nil
}

// Path is the state file ("" in memory).
func (s *Store) Path() string { return s.path }

// Check compares hash with the pin of id. On first sight it pins hash
// (saved) and returns New. When the definition is the pinned one again, a
// pending change is dropped. old is the pinned hash and since when (for
// Changed).
func (s *Store) Check(id, hash string) (v Verdict, old Pin, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.f.Pinned[id]
	switch {
	case !ok:
		s.f.Pinned[id] = Pin{Hash: hash, Since: s.stamp()}
		return New, Pin{}, s.saveLocked()
	case p.Hash == hash:
		if _, pend := s.f.Pending[id]; pend {
			delete(s.f.Pending, id)
			return Same, p, s.saveLocked()
		}
		return Same, p, nil
	}
	return Changed, p, nil
}

// SetPending records hash as id's changed definition waiting for
// approval; first reports whether it was not already pending.
func (s *Store) SetPending(id, hash string) (first bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.f.Pending[id]; ok && p.Hash == hash {
		return false, nil
	}
	s.f.Pending[id] = Pin{Hash: hash, Since: s.stamp()}
	return true, s.saveLocked()
}

// Pending returns id's changed definition waiting for approval, if any.
func (s *Store) Pending(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.f.Pending[id]
	return p.Hash, ok
}

// PendingIDs lists the ids with a change waiting for approval, sorted.
func (s *Store) PendingIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.f.Pending))
	for id := range s.f.Pending {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Pin pins hash for id (a change accepted) and drops its pending entry.
func (s *Store) Pin(id, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.Pinned[id] = Pin{Hash: hash, Since: s.stamp()}
	delete(s.f.Pending, id)
	return s.saveLocked()
}

// ApplyApprovals reads path+".approved" when it changed since the last
// call and pins every pending change it approves (same id and hash). It
// returns the ids it pinned.
func (s *Store) ApplyApprovals() ([]string, error) {
	if s.path == "" {
		return nil, nil
	}
	ap := s.path + ".approved"
	st, err := os.Stat(ap)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("approvals file %s: %w", pathq.Quote(ap), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.ModTime().Equal(s.approvedMod) && st.Size() == s.approvedLen {
		return nil, nil
	}
	f, err := os.Open(ap)
	if err != nil {
		return nil, fmt.Errorf("approvals file %s: %w", pathq.Quote(ap), err)
	}
	defer f.Close()
	s.approvedMod, s.approvedLen = st.ModTime(), st.Size()
	var pinned []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		i := strings.LastIndexByte(line, ' ') // ids may hold spaces, hashes never
		if i <= 0 {
			continue
		}
		id, hash := line[:i], line[i+1:]
		if p, pend := s.f.Pending[id]; pend && p.Hash == hash {
			s.f.Pinned[id] = Pin{Hash: hash, Since: s.stamp()}
			delete(s.f.Pending, id)
			pinned = append(pinned, id)
		}
	}
	if len(pinned) > 0 {
		return pinned, s.saveLocked()
	}
	return nil, sc.Err()
}

func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339) }

// Hold defers the file writes of Check, SetPending, Pin and
// ApplyApprovals until the returned release, which writes the file once
// if anything changed in between (whatever its caller changed, and the
// changes of other callers meanwhile) and returns that write's error.
// The state in memory changes at once as without Hold. For a listing:
// each write is the whole file, so writing it per new tool made the first
// sight of a catalog quadratic (2,000 new tools: 38 s; 4,000: 141 s);
// held over a listing it is one write. Holds may
// overlap (several upstreams listing at once): every release with a
// change pending writes, so no hold delays another's write for longer
// than its own listing. release must be called once.
func (s *Store) Hold() (release func() error) {
	s.mu.Lock()
	s.holds++
	s.mu.Unlock()
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.holds--
			if s.dirty {
				s.dirty = false
				err = s.writeLocked()
			}
		})
		return err
	}
}

// saveLocked writes the state file, or notes that a release of Hold must.
func (s *Store) saveLocked() error {
	if s.holds > 0 {
		s.dirty = true
		return nil
	}
	return s.writeLocked()
}

// writeLocked writes the state file atomically (temp file + rename).
func (s *Store) writeLocked() error {
	if s.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(s.f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("pins file %s: %w", pathq.Quote(s.path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".pins-*.tmp")
	if err != nil {
		return fmt.Errorf("pins file %s: %w", pathq.Quote(s.path), err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), s.path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("pins file %s: %w", pathq.Quote(s.path), werr)
	}
	return nil
}

// Approve approves the pending change of id in the pins file at path, for
// `mcp-toolsearch approve ID`: it appends "ID HASH" to path+".approved"
// (a running proxy picks it up; otherwise the next start does). It
// returns the approved hash.
//
// Errors: no pins file, or no change of id waiting, e.g.
// `no change of "mcp:gh:x" is waiting for approval in "/x/config.pins.json" (waiting: mcp:gh:y)`.
func Approve(path, id string) (string, error) {
	if path == "" {
		return "", errors.New("no pins file: the config was read without a path")
	}
	f, err := readFile(path)
	if err != nil {
		return "", err
	}
	p, ok := f.Pending[id]
	if !ok {
		var ids []string
		for k := range f.Pending {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		waiting := "none"
		if len(ids) > 0 {
			waiting = strings.Join(ids, ", ")
		}
		return "", fmt.Errorf("no change of %q is waiting for approval in %s (waiting: %s)", id, pathq.Quote(path), waiting)
	}
	af, err := os.OpenFile(path+".approved", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("approvals file: %w", err)
	}
	_, werr := fmt.Fprintf(af, "%s %s\n", id, p.Hash)
	if cerr := af.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("approvals file: %w", werr)
	}
	return p.Hash, nil
}
