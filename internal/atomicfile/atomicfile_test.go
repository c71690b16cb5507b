package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := WriteNew(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(p, []byte("two"), 0o600); err == nil {
		t.Fatal("WriteNew overwrote an existing file")
	}
	if err := Replace(p, []byte("three"), 0o640); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "three" {
		t.Fatalf("content %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if err := ReplaceKeepingOwner(p, []byte("four")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode after ReplaceKeepingOwner %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	if err := Replace(filepath.Join(dir, "missing", "x"), nil, 0o600); err == nil {
		t.Fatal("Replace into a missing directory succeeded")
	}
}
