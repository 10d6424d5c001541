package credentials

import (
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
)

// Store keeps per-user upstream tokens in one file, each encrypted with
// AES-256-GCM (crypto/cipher) under the deployment's key
// ([auth] token_store_key). The file maps an opaque slot name
// (hex SHA-256 of upstream and subject, so user names are not in the file)
// to base64(nonce || ciphertext); the upstream and subject are the
// additional authenticated data, so a value copied into another user's
// slot does not decrypt. Writes replace the file atomically (temporary
// file + rename, mode 0600).
//
// Trust: the file is as secret as the tokens only together with the key;
// the key comes from the environment (${VAR}), never from the file's
// folder. Safe for concurrent use.
type Store struct {
	path string
	aead cipher.AEAD

	mu    sync.Mutex
	slots map[string]string
}

type storeFile struct {
	Version int               `json:"version"`
	Tokens  map[string]string `json:"tokens"`
}

// OpenStore opens (or creates on first save) the store at path with a
// 32-byte key. A file that exists but cannot be read or parsed is an
// error; a slot that does not decrypt is reported when it is read.
func OpenStore(path string, key []byte) (*Store, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("token store key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
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

func slot(upstream, subject string) (name string, aad []byte) {
	aad = []byte(upstream + "\x00" + subject)
	sum := sha256.Sum256(aad)
	return hex.EncodeToString(sum[:]), aad
}

// Get returns the token stored for subject on upstream (nil when none).
func (s *Store) Get(upstream, subject string) (*oauth2.Token, error) {
	name, aad := slot(upstream, subject)
	s.mu.Lock()
	v, ok := s.slots[name]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	ns := s.aead.NonceSize()
	if err != nil || len(raw) < ns {
		return nil, errors.New("token store: a damaged entry")
	}
	plain, err := s.aead.Open(nil, raw[:ns], raw[ns:], aad)
	if err != nil {
		return nil, errors.New("token store: an entry does not decrypt (another key, or moved between users)")
	}
	var t oauth2.Token
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, errors.New("token store: a damaged entry")
	}
	return &t, nil
}

// Put stores t for subject on upstream (nil deletes) and writes the file.
func (s *Store) Put(upstream, subject string, t *oauth2.Token) error {
	name, aad := slot(upstream, subject)
	var v string
	if t != nil {
		plain, err := json.Marshal(t)
		if err != nil {
			return err
		}
		nonce := make([]byte, s.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return err
		}
		v = base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, aad))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil {
		delete(s.slots, name)
	} else {
		s.slots[name] = v
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
