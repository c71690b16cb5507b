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

// TestReplaceDoesNotFollowAPlantedLink: a link at the temporary name (left
// by someone who can write the directory) is replaced, and its target is
// not touched; a stale temporary file from a crash does not stop a write.
func TestReplaceDoesNotFollowAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "saved")
	if err := os.Symlink(victim, filepath.Join(dir, ".saved.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := Replace(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v %v, want a regular file", p, fi, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".saved.tmp"), []byte("half a fi"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(p, []byte("newer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "newer" {
		t.Fatalf("content %q", b)
	}
}
