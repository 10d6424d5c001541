package credentials

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"

	"github.com/mcp-toolsearch/mcp-toolsearch/statestore"
)

// Store keeps per-user upstream tokens, each encrypted with AES-256-GCM
// (crypto/cipher) under the deployment's key ([auth] token_store_key),
// either in one file (OpenStore: one machine) or in the shared state store
// (NewSharedStore: [server] state_store, every replica sees a user's
// token). A token's slot is an opaque name (hex SHA-256 of upstream and
// subject, so user names are not stored); the upstream and subject are
// the additional authenticated data, so a value copied into another
// user's slot does not decrypt. The file maps slots to base64(nonce ||
// ciphertext); writes replace it atomically (temporary file + rename,
// mode 0600).
//
// Trust: the file or the store is as secret as the tokens only together
// with the key; the key comes from the environment (${VAR}), never from
// the file's folder or the store. Safe for concurrent use.
type Store struct {
	aead cipher.AEAD
	kv   statestore.Store // nil: the file

	path  string
	mu    sync.Mutex
	slots map[string]string
}

type storeFile struct {
	Version int               `json:"version"`
	Tokens  map[string]string `json:"tokens"`
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("token store key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// OpenStore opens (or creates on first save) the store at path with a
// 32-byte key. A file that exists but cannot be read or parsed is an
// error; a slot that does not decrypt is reported when it is read.
func OpenStore(path string, key []byte) (*Store, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, aead: aead, slots: map[string]string{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("token store: %w", err)
	default:
		var f storeFile
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("token store %s: not a token store file: %v", path, err)
		}
		if f.Version != 1 {
			return nil, fmt.Errorf("token store %s: version %d, want 1", path, f.Version)
		}
		if f.Tokens != nil {
			s.slots = f.Tokens
		}
	}
	return s, nil
}

// NewSharedStore keeps the tokens in kv (key "tok:<slot>"), encrypted
// with key as in the file.
func NewSharedStore(kv statestore.Store, key []byte) (*Store, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return &Store{aead: aead, kv: kv}, nil
}

func slot(upstream, subject string) (name string, aad []byte) {
	aad = []byte(upstream + "\x00" + subject)
	sum := sha256.Sum256(aad)
	return hex.EncodeToString(sum[:]), aad
}

// seal encrypts plain bound to aad: nonce || ciphertext.
func (s *Store) seal(plain, aad []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, aad)
}

// open decrypts what seal made with the same aad.
func (s *Store) open(raw, aad []byte) ([]byte, bool) {
	ns := s.aead.NonceSize()
	if len(raw) < ns {
		return nil, false
	}
	plain, err := s.aead.Open(nil, raw[:ns], raw[ns:], aad)
	return plain, err == nil
}

// Get returns the token stored for subject on upstream (nil when none).
// With a shared store that cannot be reached the error wraps
// statestore.ErrUnavailable: the caller gets no token (fail closed).
func (s *Store) Get(ctx context.Context, upstream, subject string) (*oauth2.Token, error) {
	name, aad := slot(upstream, subject)
	var raw []byte
	if s.kv != nil {
		v, err := s.kv.Get(ctx, "tok:"+name)
		if err != nil {
			return nil, fmt.Errorf("token store: %w", err)
		}
		if v == nil {
			return nil, nil
		}
		raw = v
	} else {
		s.mu.Lock()
		v, ok := s.slots[name]
		s.mu.Unlock()
		if !ok {
			return nil, nil
		}
		var err error
		if raw, err = base64.StdEncoding.DecodeString(v); err != nil {
			return nil, errors.New("token store: a damaged entry")
		}
	}
	plain, ok := s.open(raw, aad)
	if !ok {
		return nil, errors.New("token store: an entry does not decrypt (another key, or moved between users)")
	}
	var t oauth2.Token
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, errors.New("token store: a damaged entry")
	}
	return &t, nil
}

// Put stores t for subject on upstream (nil deletes).
func (s *Store) Put(ctx context.Context, upstream, subject string, t *oauth2.Token) error {
	name, aad := slot(upstream, subject)
	var sealed []byte
	if t != nil {
		plain, err := json.Marshal(t)
		if err != nil {
			return err
		}
		sealed = s.seal(plain, aad)
	}
	if s.kv != nil {
		var err error
		if t == nil {
			err = s.kv.Delete(ctx, "tok:"+name)
		} else {
			err = s.kv.Set(ctx, "tok:"+name, sealed, 0)
		}
		if err != nil {
			return fmt.Errorf("token store: %w", err)
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil {
		delete(s.slots, name)
	} else {
		s.slots[name] = base64.StdEncoding.EncodeToString(sealed)
	}
	return s.writeLocked()
}

func (s *Store) writeLocked() error {
	b, err := json.MarshalIndent(storeFile{Version: 1, Tokens: s.slots}, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".tokens-*")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}
