package configfile

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/crypto/argon2"
)

// Magic opens every encrypted configuration file.
const Magic = "SWMGRENC"

// HeaderSize is the length of an encrypted file's header, which is also the
// AEAD's additional data.
const HeaderSize = 32

const (
	envelopeVersion = 1
	kdfArgon2id     = 1
	aeadAES256GCM   = 1
	gcmNonceSize    = 12
	gcmTagSize      = 16
)

// KDFParams are argon2id's costs. They are written in each file's header,
// so files made with other costs still open.
type KDFParams struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// DefaultKDF is RFC 9106's second recommended option (t=3, m=64 MiB, p=4):
// about a quarter of a second here, so a guessed passphrase costs the same.
var DefaultKDF = KDFParams{Time: 3, Memory: 64 * 1024, Threads: 4}

// Bounds a reader accepts, so that a forged header cannot make it spend
// minutes or gigabytes before the tag check refuses the file.
const (
	maxKDFTime   = 64
	maxKDFMemory = 256 * 1024 // KiB
)

// Errors of Open. A wrong passphrase and a tampered file cannot be told
// apart (that is the point of an AEAD): both are ErrAuth.
var (
	ErrNotEncrypted = errors.New("the file is not an encrypted swmgr configuration")
	ErrTruncated    = errors.New("the encrypted file is truncated")
	ErrAuth         = errors.New("the file cannot be decrypted: wrong Nonce or Passphrase, or the file was changed")
)

// IsEncrypted reports whether data starts like an encrypted file.
func IsEncrypted(data []byte) bool {
	return len(data) >= len(Magic) && string(data[:len(Magic)]) == Magic
}

// Seal encrypts a whole configuration file. The key is argon2id over the
// passphrase, salted with SHA-256 of the nonce (argon2 wants a salt of at
// least 8 bytes; a Nonce may be shorter); the AEAD nonce is fresh and random.
func Seal(plain []byte, nonce, passphrase string, p KDFParams) ([]byte, error) {
	if nonce == "" || passphrase == "" {
		return nil, errors.New("seal: Nonce and Passphrase are both required")
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	out := make([]byte, HeaderSize, HeaderSize+len(plain)+gcmTagSize)
	copy(out, Magic)
	out[8] = envelopeVersion
	out[9] = kdfArgon2id
	binary.BigEndian.PutUint32(out[10:], p.Time)
	binary.BigEndian.PutUint32(out[14:], p.Memory)
	out[18] = p.Threads
	out[19] = aeadAES256GCM
	if _, err := rand.Read(out[20:HeaderSize]); err != nil {
		return nil, fmt.Errorf("seal: random nonce: %w", err)
	}
	aead, err := newAEAD(nonce, passphrase, p)
	if err != nil {
		return nil, err
	}
	return aead.Seal(out, out[20:HeaderSize], plain, out[:HeaderSize]), nil
}

// Open decrypts what Seal made.
func Open(data []byte, nonce, passphrase string) ([]byte, error) {
	if !IsEncrypted(data) {
		return nil, ErrNotEncrypted
	}
	if len(data) < HeaderSize+gcmTagSize {
		return nil, ErrTruncated
	}
	hdr := data[:HeaderSize]
	if hdr[8] != envelopeVersion {
		return nil, fmt.Errorf("the encrypted file has envelope version %d; this swmgr reads version %d", hdr[8], envelopeVersion)
	}
	if hdr[9] != kdfArgon2id || hdr[19] != aeadAES256GCM {
		return nil, fmt.Errorf("the encrypted file uses KDF %d and AEAD %d; this swmgr knows argon2id (1) and AES-256-GCM (1)", hdr[9], hdr[19])
	}
	p := KDFParams{Time: binary.BigEndian.Uint32(hdr[10:]), Memory: binary.BigEndian.Uint32(hdr[14:]), Threads: hdr[18]}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("the encrypted file's header: %w", err)
	}
	aead, err := newAEAD(nonce, passphrase, p)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, hdr[20:HeaderSize], data[HeaderSize:], hdr)
	if err != nil {
		return nil, ErrAuth
	}
	return plain, nil
}

func (p KDFParams) check() error {
	if p.Time < 1 || p.Time > maxKDFTime || p.Memory < 8*uint32(max(p.Threads, 1)) || p.Memory > maxKDFMemory || p.Threads < 1 {
		return fmt.Errorf("argon2id costs t=%d m=%d KiB p=%d are outside 1..%d, 8p..%d KiB, 1..255", p.Time, p.Memory, p.Threads, maxKDFTime, maxKDFMemory)
	}
	return nil
}

func newAEAD(nonce, passphrase string, p KDFParams) (cipher.AEAD, error) {
	salt := sha256.Sum256([]byte(nonce))
	key := argon2.IDKey([]byte(passphrase), salt[:], p.Time, p.Memory, p.Threads, 32)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
