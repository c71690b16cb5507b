package secrets

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpenAndKeyPersistence(t *testing.T) {
	dir := t.TempDir()
	box, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal([]byte("hunter2"), []byte("NtpServer\x00id1"))
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("plaintext visible in sealed value")
	}
	if again := box.Seal([]byte("hunter2"), []byte("NtpServer\x00id1")); bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are equal: the nonce is not fresh")
	}
	// The key is kept: a new Box on the same directory opens the value.
	box2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := box2.Unseal(sealed, []byte("NtpServer\x00id1")); err != nil || string(plain) != "hunter2" {
		t.Fatalf("Unseal = %q, %v", plain, err)
	}
	if _, err := box2.Unseal(sealed, []byte("NtpServer\x00id2")); err == nil {
		t.Fatal("a value sealed for one object opened for another")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := box2.Unseal(sealed, []byte("NtpServer\x00id1")); err == nil {
		t.Fatal("a tampered value opened")
	}
	if _, err := box2.Unseal([]byte("short"), nil); err == nil {
		t.Fatal("a short value opened")
	}
	fi, err := os.Stat(filepath.Join(dir, "secret.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret.key mode = %v, %v; want 0600", fi.Mode(), err)
	}
	other, _ := Open(t.TempDir())
	if _, err := other.Unseal(box.Seal([]byte("x"), nil), nil); err == nil {
		t.Fatal("another data directory's key opened the value")
	}
}

func TestBadKeyFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "secret.key"), []byte("too short"), 0o600)
	if _, err := Open(dir); err == nil {
		t.Fatal("a 9-byte key was accepted")
	}
}

// A key's tag is the same for the same key and purpose, and another for
// another purpose or another data directory's key.
func TestTag(t *testing.T) {
	dir := t.TempDir()
	box, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tag := box.Tag("host accounts")
	if len(tag) != 16 || strings.Trim(tag, "0123456789abcdef") != "" {
		t.Fatalf("tag %q: want 16 hex digits", tag)
	}
	if again.Tag("host accounts") != tag {
		t.Error("the same key gave another tag")
	}
	if box.Tag("something else") == tag || other.Tag("host accounts") == tag {
		t.Error("another purpose or another key gave the same tag")
	}
}
