package debsig

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/gnoi/debtest"
)

func keys(t *testing.T) (privPEM, pubPEM []byte) {
	t.Helper()
	privPEM, pubPEM, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return privPEM, pubPEM
}

// A signed package verifies with its key, and dpkg-deb still reads it
// (its fields and its data archive); unsigned, tampered with (a byte of
// any member, or a member dropped), signed by another key, or with its
// signature not last, it does not. Signing again replaces the signature.
func TestSignVerify(t *testing.T) {
	deb := debtest.Build(t, "swmgr", "1.2.3", []byte("#!/bin/sh\necho hi\n"))
	privPEM, pubPEM := keys(t)
	priv, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := Sign(deb, priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(bytes.NewReader(signed), pub); err != nil {
		t.Fatalf("signed: %v", err)
	}
	again, err := Sign(signed, priv)
	if err != nil || !bytes.Equal(again, signed) {
		t.Errorf("signed twice: %v, same bytes %v", err, bytes.Equal(again, signed))
	}

	path := filepath.Join(t.TempDir(), "signed.deb")
	if err := os.WriteFile(path, signed, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("dpkg-deb", "--field", path, "Package", "Version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Version: 1.2.3") {
		t.Errorf("dpkg-deb --field of the signed package: %v: %s", err, out)
	}
	out, err = exec.Command("dpkg-deb", "-c", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "./usr/bin/swmgr") || strings.Contains(strings.ToLower(string(out)), "warning") {
		t.Errorf("dpkg-deb -c of the signed package: %v: %s", err, out)
	}
	out, err = exec.Command("dpkg-deb", "--info", path).CombinedOutput()
	if err != nil || strings.Contains(strings.ToLower(string(out)), "warning") {
		t.Errorf("dpkg-deb --info of the signed package: %v: %s", err, out)
	}

	if err := Verify(bytes.NewReader(deb), pub); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned: %v", err)
	}
	_, otherPEM := keys(t)
	other, _ := ParsePublicKey(otherPEM)
	if err := Verify(bytes.NewReader(signed), other); err == nil {
		t.Error("verified with another key")
	}
	members, err := readAr(bytes.NewReader(signed))
	if err != nil {
		t.Fatal(err)
	}
	rebuild := func(ms []member) []byte {
		var b bytes.Buffer
		b.WriteString(magic)
		for _, m := range ms {
			appendMember(&b, m)
		}
		return b.Bytes()
	}
	if !bytes.Equal(rebuild(members), signed) {
		t.Fatal("readAr and appendMember do not round-trip")
	}
	for i := range members[:len(members)-1] {
		tampered := append([]member{}, members...)
		data := append([]byte{}, tampered[i].data...)
		data[len(data)/2] ^= 1
		tampered[i].data = data
		if err := Verify(bytes.NewReader(rebuild(tampered)), pub); err == nil || errors.Is(err, ErrUnsigned) {
			t.Errorf("member %s tampered with: %v", members[i].name, err)
		}
		dropped := append(append([]member{}, members[:i]...), members[i+1:]...)
		if err := Verify(bytes.NewReader(rebuild(dropped)), pub); err == nil {
			t.Errorf("member %s dropped: verified", members[i].name)
		}
	}
	n := len(members)
	moved := append(append(append([]member{}, members[:n-2]...), members[n-1]), members[n-2])
	if err := Verify(bytes.NewReader(rebuild(moved)), pub); err == nil {
		t.Error("signature not last: verified")
	}
	if _, err := Sign([]byte("not a package"), priv); err == nil {
		t.Error("signed something that is no ar archive")
	}
}

// BenchmarkVerify checks the signature of a 64 MiB package (what
// OS.Install adds to an Install with --os-signing-key), reported in
// bytes per second.
func BenchmarkVerify(b *testing.B) {
	data := make([]byte, 64<<20)
	var deb bytes.Buffer
	deb.WriteString(magic)
	for _, m := range []member{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", make([]byte, 1000)}, {"data.tar.xz", data}} {
		appendMember(&deb, m)
	}
	_, priv, _ := ed25519.GenerateKey(nil)
	signed, err := Sign(deb.Bytes(), priv)
	if err != nil {
		b.Fatal(err)
	}
	pub := priv.Public().(ed25519.PublicKey)
	b.SetBytes(int64(len(signed)))
	for b.Loop() {
		if err := Verify(bytes.NewReader(signed), pub); err != nil {
			b.Fatal(err)
		}
	}
}
