package configfile

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/swmgr/swmgr/internal/model"
)

// cheap keeps the tests fast; the header carries the costs, so Open reads
// files of any cost.
var cheap = KDFParams{Time: 1, Memory: 64, Threads: 1}

func TestSealOpen(t *testing.T) {
	plain := []byte(`{"Format":2,"ConfigData":{}}`)
	sealed, err := Seal(plain, "nonce-1", "correct horse", cheap)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Seal(plain, "nonce-1", "correct horse", cheap)
	if bytes.Equal(sealed[20:32], again[20:32]) {
		t.Fatal("two seals used the same AEAD nonce")
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("the plaintext shows in the sealed file")
	}
	got, err := Open(sealed, "nonce-1", "correct horse")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open: %v %q", err, got)
	}
	bad := []struct {
		name        string
		data        []byte
		nonce, pass string
		want        error
	}{
		{"wrong passphrase", sealed, "nonce-1", "wrong horse", ErrAuth},
		{"wrong nonce", sealed, "nonce-2", "correct horse", ErrAuth},
		{"truncated to the header", sealed[:HeaderSize], "nonce-1", "correct horse", ErrTruncated},
		{"truncated by one byte", sealed[:len(sealed)-1], "nonce-1", "correct horse", ErrAuth},
		{"not encrypted", plain, "nonce-1", "correct horse", ErrNotEncrypted},
		{"empty", nil, "nonce-1", "correct horse", ErrNotEncrypted},
	}
	for _, tc := range bad {
		if _, err := Open(tc.data, tc.nonce, tc.pass); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	// Every flipped byte is refused: in the header (AEAD additional data,
	// or costs that change the key) and in the ciphertext and tag.
	for i := range sealed {
		if i == 8 || i == 9 || i == 19 { // version and algorithm bytes: a clear error of their own
			continue
		}
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		if _, err := Open(c, "nonce-1", "correct horse"); err == nil {
			t.Fatalf("a flip of byte %d was not detected", i)
		}
	}
	for _, i := range []int{8, 9, 19} {
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		if _, err := Open(c, "nonce-1", "correct horse"); err == nil || !strings.Contains(err.Error(), "version") && !strings.Contains(err.Error(), "KDF") {
			t.Errorf("byte %d changed: err %v", i, err)
		}
	}
	// A forged header asking for 4 GiB of memory is refused before the KDF.
	c := bytes.Clone(sealed)
	binary.BigEndian.PutUint32(c[14:], 4<<20)
	// (ErrAuth would mean the KDF ran with the forged costs.)
	if _, err := Open(c, "nonce-1", "correct horse"); err == nil || errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("forged costs: err %v, want the header refused before the KDF", err)
	}
	if _, err := Seal(plain, "", "x", cheap); err == nil {
		t.Fatal("Seal without a nonce")
	}
}

// TestEnvelopeSpec decrypts with the steps docs/configfile.md gives, written
// out with the primitives, so the document and the code cannot drift.
func TestEnvelopeSpec(t *testing.T) {
	plain := []byte("{\"ConfigData\":{}}\n")
	file, err := Seal(plain, "n", "p", KDFParams{Time: 2, Memory: 256, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if string(file[:8]) != "SWMGRENC" || file[8] != 1 || file[9] != 1 || file[19] != 1 {
		t.Fatalf("header % x", file[:32])
	}
	tcost, mcost, par := binary.BigEndian.Uint32(file[10:14]), binary.BigEndian.Uint32(file[14:18]), file[18]
	if tcost != 2 || mcost != 256 || par != 2 {
		t.Fatalf("costs %d %d %d", tcost, mcost, par)
	}
	salt := sha256.Sum256([]byte("n"))
	key := argon2.IDKey([]byte("p"), salt[:], tcost, mcost, par, 32)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	got, err := gcm.Open(nil, file[20:32], file[32:], file[:32])
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("decrypting by the spec: %v", err)
	}
}

// box is a Sealer with a key of its own (another switch has another).
type box struct{ aead cipher.AEAD }

func newBox(t testing.TB) *box {
	key := make([]byte, 32)
	rand.Read(key)
	b, _ := aes.NewCipher(key)
	g, _ := cipher.NewGCM(b)
	return &box{g}
}

func (b *box) Seal(plain, ad []byte) []byte {
	n := make([]byte, 12)
	rand.Read(n)
	return b.aead.Seal(n, n, plain, ad)
}

func (b *box) Unseal(s, ad []byte) ([]byte, error) {
	if len(s) < 12 {
		return nil, errors.New("short")
	}
	return b.aead.Open(nil, s[:12], s[12:], ad)
}

func sampleDoc(t *testing.T, reg *model.Registry, sealer Sealer) []byte {
	enc := NewEncoder(Header{SwmgrVersion: "test", Revision: 42, SavedAt: time.Unix(1e9, 0)}, sealer)
	ntp := reg.Lookup(model.Config, "NtpServer")
	arch := reg.Lookup(model.Config, "ConfigArchiveServer")
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		o := ntp.Defaults()
		o["IpAddr"] = ip
		enc.Add(ntp, o)
	}
	o := arch.Defaults()
	o["IpAddr"], o["Username"], o["Password"], o["Nonce"], o["Passphrase"] = "192.0.2.9", "backup", "s3cret-pass", "n1", "s3cret-phrase"
	enc.Add(arch, o)
	return enc.Finish()
}

func TestDocument(t *testing.T) {
	reg := model.Builtin()
	mine, other := newBox(t), newBox(t)

	plain := sampleDoc(t, reg, mine)
	for _, secret := range []string{"s3cret-pass", "s3cret-phrase"} {
		if bytes.Contains(plain, []byte(secret)) {
			t.Fatalf("a plain document shows the secret %q", secret)
		}
	}
	doc, err := Decode(bytes.NewReader(plain), reg, DecodeOptions{Sealer: mine})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != 2 || doc.Revision != 42 || doc.SwmgrVersion != "test" || doc.Count() != 3 {
		t.Fatalf("header %+v count %d", doc.Header, doc.Count())
	}
	a := doc.Objects["ConfigArchiveServer"][0]
	if a.Str("Password") != "s3cret-pass" || a.Str("Passphrase") != "s3cret-phrase" {
		t.Fatalf("secrets not restored: %v", a)
	}
	if _, err := Decode(bytes.NewReader(plain), reg, DecodeOptions{Sealer: other}); err == nil || !strings.Contains(err.Error(), "another switch") {
		t.Fatalf("another switch's key: %v", err)
	}

	clearDoc := sampleDoc(t, reg, nil)
	if !bytes.Contains(clearDoc, []byte("s3cret-pass")) {
		t.Fatal("a document for encryption lacks its secrets")
	}
	if doc, err := Decode(bytes.NewReader(clearDoc), reg, DecodeOptions{Encrypted: true}); err != nil || doc.Objects["ConfigArchiveServer"][0].Str("Password") != "s3cret-pass" {
		t.Fatalf("clear secrets: %v", err)
	}

	bad := []struct{ name, doc, want string }{
		{"format 1 (FlexSwitch, no header) loads", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":4}]}}`, ""},
		{"newer format", `{"Format":4,"ConfigData":{}}`, "newer swmgr"},
		{"a newer schema", `{"Format":3,"SchemaVersion":2,"Secrets":"sealed","ConfigData":{}}`, "newer swmgr"},
		{"format 3 without its schema", `{"Format":3,"Secrets":"sealed","ConfigData":{}}`, "names its SchemaVersion"},
		{"the schema after the objects", `{"Format":2,"Secrets":"sealed","ConfigData":{},"SchemaVersion":1}`, "must come before"},
		{"format 0", `{"Format":0,"ConfigData":{}}`, "unknown format"},
		{"not JSON", `SWMGR`, "not a configuration document"},
		{"no ConfigData", `{"Format":2,"Secrets":"sealed"}`, "no ConfigData"},
		{"bad Secrets", `{"Format":2,"Secrets":"maybe","ConfigData":{}}`, "Secrets"},
		{"unknown field", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","Bogus":1}]}}`, "Bogus"},
		{"invalid value", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":99}]}}`, "MinPoll"},
		{"duplicate key", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1"},{"IpAddr":"192.0.2.1"}]}}`, "twice"},
		{"stray sealed secrets", `{"Format":2,"Secrets":"sealed","ConfigData":{},"SealedSecrets":{"NtpServer":{"x":"AA=="}}}`, "does not hold"},
		{"sealed in format 1", `{"ConfigData":{},"SealedSecrets":{}}`, "format 1"},
		// A member given twice, at every level: which one counts would be
		// the reader's choice.
		{"ConfigData twice", `{"ConfigData":{},"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1"}]}}`, "ConfigData is given twice"},
		{"Format twice", `{"Format":2,"Secrets":"sealed","Format":1,"ConfigData":{}}`, "Format is given twice"},
		{"Secrets twice", `{"Format":2,"Secrets":"sealed","Secrets":"clear","ConfigData":{}}`, "Secrets is given twice"},
		{"a kind twice", `{"ConfigData":{"NtpServer":[],"NtpServer":[{"IpAddr":"192.0.2.1"}]}}`, "ConfigData.NtpServer is given twice"},
		{"a field twice", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":4,"MinPoll":5}]}}`, "twice"},
		{"a sealed kind twice", `{"Format":2,"Secrets":"sealed","ConfigData":{},"SealedSecrets":{"NtpServer":{},"NtpServer":{}}}`, "twice"},
		{"a sealed key twice", `{"Format":2,"Secrets":"sealed","ConfigData":{},"SealedSecrets":{"NtpServer":{"x":"","x":""}}}`, "twice"},
		// Secrets in clear belong inside an encrypted file only.
		{"clear secrets in a plain file", `{"Format":2,"Secrets":"clear","ConfigData":{}}`, `"Secrets":"clear" is refused`},
		{"a secret in clear in a sealed document", `{"Format":2,"Secrets":"sealed","ConfigData":{"ConfigArchiveServer":[{"IpAddr":"192.0.2.9","Password":"in-clear"}]}}`, "Password is in clear"},
		{"data after the document", `{"ConfigData":{}} {"ConfigData":{}}`, "data after"},
		{"an object that is null", `{"ConfigData":{"NtpServer":[null]}}`, "not an object"},
	}
	for _, tc := range bad {
		_, err := Decode(strings.NewReader(tc.doc), reg, DecodeOptions{Sealer: mine})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Decode(bytes.NewReader(plain), reg, DecodeOptions{Sealer: mine, Encrypted: true}); err == nil || !strings.Contains(err.Error(), `"Secrets":"sealed" inside an encrypted file`) {
		t.Errorf("sealed secrets inside an encrypted file: %v", err)
	}
	doc, _ = Decode(strings.NewReader(`{"ConfigData":{"Widget":[{"WidgetId":1}]}}`), reg, DecodeOptions{})
	if len(doc.Unknown) != 1 || doc.Unknown[0] != "Widget" {
		t.Fatalf("unknown kinds %v", doc.Unknown)
	}
}

// laterSchema is the builtin model at schema version 2, which counts
// NtpServer's MaxPoll from 1 more (a change of unit) and keeps
// ConfigArchiveServer's sealed Password with a prefix.
func laterSchema(t *testing.T) *model.Registry {
	t.Helper()
	later, err := model.Builtin().WithSchema(2,
		model.Migration{From: 1, Kind: "NtpServer", Doc: "MaxPoll one more", Migrate: func(o map[string]any) (map[string]any, error) {
			o["MaxPoll"] = o["MaxPoll"].(float64) + 1
			return o, nil
		}},
		model.Migration{From: 1, Kind: "ConfigArchiveServer", Doc: "Password prefixed", Migrate: func(o map[string]any) (map[string]any, error) {
			o["Password"] = "v2:" + o["Password"].(string)
			return o, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return later
}

// TestDocumentOfAnOlderSchema: a file saved at schema version 1 (naming
// it, or from before files named it, or FlexSwitch's format 1) read by a
// model at version 2 comes out in version 2's form, a sealed secret
// migrated too; a file of version 2 names it (format 3) and is read as it
// is by version 2, and refused by version 1.
func TestDocumentOfAnOlderSchema(t *testing.T) {
	later := laterSchema(t)
	mine := newBox(t)
	sealed := sampleDoc(t, model.Builtin(), mine)
	if !bytes.HasPrefix(sealed, []byte(`{"Format":2,"SchemaVersion":1,`)) {
		t.Fatalf("the header of a version 1 file: %.40s", sealed)
	}
	unnamed := bytes.Replace(sealed, []byte(`,"SchemaVersion":1`), nil, 1)
	clear := sampleDoc(t, model.Builtin(), nil)
	for _, tc := range []struct {
		name      string
		doc       []byte
		encrypted bool
	}{{"sealed", sealed, false}, {"from before files named their schema", unnamed, false}, {"in clear, to encrypt", clear, true}} {
		doc, err := Decode(bytes.NewReader(tc.doc), later, DecodeOptions{Sealer: mine, Encrypted: tc.encrypted})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := doc.Objects["NtpServer"]; len(n) != 2 || n[0].Int("MaxPoll") != 11 || n[1].Int("MaxPoll") != 11 {
			t.Errorf("%s: NtpServers %v, want MaxPoll 11", tc.name, n)
		}
		if a := doc.Objects["ConfigArchiveServer"]; len(a) != 1 || a[0].Str("Password") != "v2:s3cret-pass" || a[0].Str("Passphrase") != "s3cret-phrase" {
			t.Errorf("%s: the archive server's secrets %q %q", tc.name, a[0].Str("Password"), a[0].Str("Passphrase"))
		}
		if doc.SchemaVersion != 1 {
			t.Errorf("%s: schema version %d, want 1", tc.name, doc.SchemaVersion)
		}
	}
	flex := `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":5,"MaxPoll":12}]}}`
	if doc, err := Decode(strings.NewReader(flex), later, DecodeOptions{}); err != nil || doc.Objects["NtpServer"][0].Int("MaxPoll") != 13 {
		t.Errorf("format 1: %v %v", doc, err)
	}
	// A migrated object is checked as any other: one the migration takes
	// out of range is refused, naming it.
	low := `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":4,"MaxPoll":17}]}}`
	if _, err := Decode(strings.NewReader(low), later, DecodeOptions{}); err == nil || !strings.Contains(err.Error(), "ConfigData.NtpServer[0], migrated from schema version 1") {
		t.Errorf("an object out of range once migrated: %v", err)
	}

	enc := NewEncoder(Header{SchemaVersion: later.SchemaVersion(), SwmgrVersion: "test"}, mine)
	ntp := later.Lookup(model.Config, "NtpServer")
	o := ntp.Defaults()
	o["IpAddr"], o["MinPoll"], o["MaxPoll"] = "192.0.2.1", int64(4), int64(4)
	enc.Add(ntp, o)
	v2 := enc.Finish()
	if !bytes.HasPrefix(v2, []byte(`{"Format":3,"SchemaVersion":2,`)) {
		t.Fatalf("the header of a version 2 file: %.40s", v2)
	}
	if doc, err := Decode(bytes.NewReader(v2), later, DecodeOptions{Sealer: mine}); err != nil || doc.Objects["NtpServer"][0].Int("MaxPoll") != 4 {
		t.Errorf("a version 2 file read by version 2 (no migration): %v %v", doc, err)
	}
	if _, err := Decode(bytes.NewReader(v2), model.Builtin(), DecodeOptions{Sealer: mine}); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("a version 2 file read by version 1: %v", err)
	}
}

// A document is read a piece at a time and bounded: a file over
// MaxFileSize or with more than MaxObjects objects is refused as soon as
// the reader gets there, without reading the rest.
func TestDecodeBounds(t *testing.T) {
	reg := model.Builtin()
	// An endless file: a string that never ends.
	endless := io.MultiReader(strings.NewReader(`{"ConfigData":{"NtpServer":[{"IpAddr":"`), repeatReader('a'))
	if _, err := Decode(endless, reg, DecodeOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an endless file: %v; want ErrTooLarge", err)
	}
	small := DecodeOptions{MaxSize: 1000, MaxObjects: 10}
	var b strings.Builder
	b.WriteString(`{"ConfigData":{"NtpServer":[`)
	for i := range small.MaxObjects + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"IpAddr":"10.0.0.%d"}`, i+1)
	}
	b.WriteString("]}}")
	if _, err := Decode(strings.NewReader(b.String()), reg, small); err == nil || !strings.Contains(err.Error(), "more than 10 objects") {
		t.Errorf("%d objects: %v; want a refusal", small.MaxObjects+1, err)
	}
	// Exactly at the limit is a size, not an excess.
	exact := `{"ConfigData":{}}` + strings.Repeat(" ", int(small.MaxSize)-len(`{"ConfigData":{}}`))
	if _, err := Decode(strings.NewReader(exact), reg, small); err != nil {
		t.Errorf("a file of exactly MaxSize bytes: %v", err)
	}
	if _, err := Decode(strings.NewReader(exact+" "), reg, small); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file of MaxSize+1 bytes: %v", err)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func FuzzDecode(f *testing.F) {
	reg := model.Builtin()
	f.Add([]byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1"}]}}`))
	f.Add([]byte(`{"Format":2,"Secrets":"sealed","ConfigData":{"Port":[{"IntfRef":"fpPort1"}]},"SealedSecrets":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Decode(bytes.NewReader(data), reg, DecodeOptions{})
		if err != nil {
			return
		}
		for name, objs := range doc.Objects {
			k := reg.Lookup(model.Config, name)
			for _, o := range objs {
				if err := k.Validate(o); err != nil {
					t.Fatalf("Decode accepted an invalid %s: %v", name, err)
				}
			}
		}
	})
}

func FuzzOpen(f *testing.F) {
	sealed, _ := Seal([]byte("{}"), "n", "p", cheap)
	f.Add(sealed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > HeaderSize && binary.BigEndian.Uint32(data[14:18]) > 4096 {
			return // valid but slow costs; bounds are tested above
		}
		if plain, err := Open(data, "n", "p"); err == nil && string(plain) != "{}" {
			// Only the seed, sealed with n/p, opens; the fuzzer cannot forge one.
			t.Fatalf("forged file opened: %q", plain)
		}
	})
}
