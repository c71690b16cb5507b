// Package debsig signs Debian packages with Ed25519 and checks their
// signatures, the way debsigs does with GnuPG: the signature is an extra
// ar member appended to the .deb (Member, named with the underscore deb(5)
// reserves for local use, so dpkg and dpkg-deb read the package as they
// did), over the SHA-256 of every member before it (debian-binary, the
// control and data archives). Keys are PEM: the private key PKCS#8 (kept
// in a file, never on a command line), the public key PKIX, as
// crypto/x509 writes them.
package debsig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Member is the name of the ar member that holds the signature.
const Member = "_swmgr_sig"

// magic is an ar archive's global header.
const magic = "!<arch>\n"

// header is the first line of the signed manifest: what it is and its
// format's version.
const header = "swmgr package signature 1\n"

// ErrUnsigned is a package with no signature member.
var ErrUnsigned = errors.New("the package is not signed (no " + Member + " member)")

// member is one ar member: its name and contents.
type member struct {
	name string
	data []byte
}

// entry is what the manifest says of a member: its name, size and
// SHA-256.
type entry struct {
	name string
	size int64
	sum  [sha256.Size]byte
}

func entryOf(m member) entry {
	return entry{m.name, int64(len(m.data)), sha256.Sum256(m.data)}
}

// maxSignature bounds the signature member Verify reads.
const maxSignature = 64 << 10

// walkAr calls fn with each member of an ar archive (the format dpkg-deb
// writes: names up to 16 bytes, GNU's trailing "/" allowed), its contents
// to be read from r; what fn leaves unread is skipped.
func walkAr(r io.Reader, fn func(name string, size int64, r io.Reader) error) error {
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		return errors.New("not an ar archive")
	}
	h := make([]byte, 60)
	for {
		if _, err := io.ReadFull(r, h); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("ar member header: %w", err)
		}
		if string(h[58:60]) != "`\n" {
			return errors.New("ar member header: bad magic")
		}
		name := strings.TrimSuffix(strings.TrimRight(string(h[:16]), " "), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(h[48:58])), 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("ar member %q: bad size", name)
		}
		body := &io.LimitedReader{R: r, N: size}
		if err := fn(name, size, body); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return fmt.Errorf("ar member %q: %w", name, err)
		}
		if body.N > 0 {
			return fmt.Errorf("ar member %q: cut short", name)
		}
		if size%2 == 1 {
			var pad [1]byte
			if _, err := io.ReadFull(r, pad[:]); err != nil && err != io.EOF {
				return fmt.Errorf("ar member %q: %w", name, err)
			}
		}
	}
}

// readAr reads every member of an ar archive into memory.
func readAr(r io.Reader) ([]member, error) {
	var out []member
	err := walkAr(r, func(name string, _ int64, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("ar member %q: %w", name, err)
		}
		out = append(out, member{name, data})
		return nil
	})
	return out, err
}

// appendMember writes one ar member to b, as dpkg-deb writes them (mtime
// 0, owner 0, mode 100644), padded to an even length.
func appendMember(b *bytes.Buffer, m member) {
	fmt.Fprintf(b, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", len(m.data))
	b.Write(m.data)
	if len(m.data)%2 == 1 {
		b.WriteByte('\n')
	}
}

// manifest is what a signature covers: the header, the key's
// fingerprint, and each member's name, size and SHA-256, in order.
func manifest(pub ed25519.PublicKey, entries []entry) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "key %s\n", KeyID(pub))
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %d %s\n", e.name, e.size, hex.EncodeToString(e.sum[:]))
	}
	return b.Bytes()
}

// KeyID names a public key: the hex SHA-256 of its bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// Sign returns deb signed with key: its members (a signature already
// there dropped) and a last one, Member, holding the manifest and its
// signature.
func Sign(deb []byte, key ed25519.PrivateKey) ([]byte, error) {
	members, err := readAr(bytes.NewReader(deb))
	if err != nil {
		return nil, err
	}
	members = unsigned(members)
	if len(members) == 0 || members[0].name != "debian-binary" {
		return nil, errors.New("not a Debian package (its first member is not debian-binary)")
	}
	entries := make([]entry, len(members))
	for i, mem := range members {
		entries[i] = entryOf(mem)
	}
	m := manifest(key.Public().(ed25519.PublicKey), entries)
	sig := ed25519.Sign(key, m)
	body := append(append([]byte{}, m...), "signature "+base64.StdEncoding.EncodeToString(sig)+"\n"...)
	var b bytes.Buffer
	b.WriteString(magic)
	for _, mem := range append(members, member{Member, body}) {
		appendMember(&b, mem)
	}
	return b.Bytes(), nil
}

// unsigned is members without a signature member.
func unsigned(members []member) []member {
	out := members[:0:0]
	for _, m := range members {
		if m.name != Member {
			out = append(out, m)
		}
	}
	return out
}

// Verify checks that the package read from r is signed by pub: its last
// member is Member, whose signature is pub's over the manifest of the
// members before it as they are. ErrUnsigned when there is no signature.
// Members are hashed as they are read: the package is not held in memory.
func Verify(r io.Reader, pub ed25519.PublicKey) error {
	var entries []entry
	var sigm []byte
	sigAt := -1
	err := walkAr(r, func(name string, size int64, r io.Reader) error {
		if name == Member {
			if sigAt >= 0 {
				return errors.New("more than one signature member")
			}
			if size > maxSignature {
				return fmt.Errorf("the signature member is %d bytes", size)
			}
			sigAt = len(entries)
			var err error
			sigm, err = io.ReadAll(r)
			return err
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return fmt.Errorf("ar member %q: %w", name, err)
		}
		e := entry{name: name, size: size}
		h.Sum(e.sum[:0])
		entries = append(entries, e)
		return nil
	})
	switch {
	case err != nil:
		return err
	case sigAt < 0:
		return ErrUnsigned
	case sigAt != len(entries):
		return errors.New("the signature is not the package's last member")
	}
	var sigLine string
	for _, line := range strings.Split(string(sigm), "\n") {
		if s, ok := strings.CutPrefix(line, "signature "); ok {
			sigLine = s
		}
	}
	sig, err := base64.StdEncoding.DecodeString(sigLine)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("the signature member holds no Ed25519 signature")
	}
	if !ed25519.Verify(pub, manifest(pub, entries), sig) {
		return fmt.Errorf("the signature does not verify with key %s: the package was changed, or signed by another key", KeyID(pub)[:16])
	}
	return nil
}

// VerifyFile is Verify of the package in path.
func VerifyFile(path string, pub ed25519.PublicKey) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Verify(f, pub)
}

// GenerateKey makes an Ed25519 key pair as PEM: the private key PKCS#8,
// the public key PKIX.
func GenerateKey() (privPEM, pubPEM []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make key: %w", err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	pp, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pp}), nil
}

// ParsePrivateKey reads a PEM PKCS#8 Ed25519 private key.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM private key (PKCS#8)")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("private key: %T, not Ed25519", k)
	}
	return ek, nil
}

// ParsePublicKey reads a PEM PKIX Ed25519 public key.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM public key")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key: %T, not Ed25519", k)
	}
	return ek, nil
}

// LoadPublicKey reads ParsePublicKey's key from a file.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return k, nil
}
