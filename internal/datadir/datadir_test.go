package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	for _, c := range []struct {
		path string
		own  bool
	}{
		{filepath.Join(dir, ArchiveKnownHosts), true},
		{filepath.Join(dir, DB), true},
		{filepath.Join(dir, DB+".lock"), true},
		{filepath.Join(dir, ArchiveState+".damaged-20261127T000000Z"), true},
		{filepath.Join(dir, Accounts, "shadow"), true},
		{filepath.Join(dir, ".startup-config.tmp"), true},
		{filepath.Join(link, SecretKey), true}, // through a link to the directory
		{filepath.Join(dir, StartupConfig), false},
		{filepath.Join(dir, "switch1-backup"), false},
		{filepath.Join(dir, "swmgr.dbx"), false},
		{filepath.Join(other, SecretKey), false}, // another directory
		{dir, false},
	} {
		err := Check(dir, c.path)
		if got := errors.Is(err, ErrOwnFile); got != c.own {
			t.Errorf("Check(%s): %v; want own=%v", c.path, err, c.own)
		}
	}
}

// A state file that does not parse is moved aside and reported; the value
// is left zero; a missing one is not an error.
func TestLoadState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	var m map[string]int
	if d, err := LoadState(path, &m); d != nil || err != nil || m != nil {
		t.Fatalf("a missing file: %v %v %v", d, err, m)
	}
	os.WriteFile(path, []byte(`{"a":1,"b":`), 0o600)
	d, err := LoadState(path, &m)
	if err != nil || d == nil || m != nil {
		t.Fatalf("a damaged file: %v %v %v", d, err, m)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged file is still at %s", path)
	}
	if data, err := os.ReadFile(d.Aside); err != nil || string(data) != `{"a":1,"b":` {
		t.Errorf("the damaged file aside: %q %v", data, err)
	}
	os.WriteFile(path, []byte(`{"a":1}`), 0o600)
	if d, err := LoadState(path, &m); d != nil || err != nil || m["a"] != 1 {
		t.Fatalf("a good file: %v %v %v", d, err, m)
	}
}
