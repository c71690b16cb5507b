// Package secrets seals write-only fields before they are stored.
//
// The key is 32 random bytes in <data-dir>/secret.key (mode 0600), made on
// first start. Sealing is AES-256-GCM with a fresh random nonce per value and
// the owning object's identity as additional data, so a sealed value cannot
// be moved to another object unnoticed.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/datadir"
)

// Box seals and opens values with one key.
type Box struct {
	aead cipher.AEAD
	key  []byte
}

// Open loads the key in dir, making it on first use.
func Open(dir string) (*Box, error) {
	path := filepath.Join(dir, datadir.SecretKey)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteNew(path, key, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s: want a 32-byte key, have %d bytes", path, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead, key: key}, nil
}

// Tag is a name of this key for purpose, 16 hex digits of an HMAC-SHA256
// under it: the same for the same key and purpose, another for another key,
// and telling nothing of the key. It names the data directory whose store
// the key belongs to (the store checks the key at every start).
func (b *Box) Tag(purpose string) string {
	m := hmac.New(sha256.New, b.key)
	m.Write([]byte(purpose))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// Seal encrypts plain, bound to ad.
func (b *Box) Seal(plain, ad []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return b.aead.Seal(nonce, nonce, plain, ad)
}

// Unseal decrypts what Seal made with the same ad.
func (b *Box) Unseal(sealed, ad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, errors.New("sealed value is too short")
	}
	return b.aead.Open(nil, sealed[:n], sealed[n:], ad)
}
