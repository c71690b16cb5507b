package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// goodDB makes a data directory whose database spans many pages.
func goodDB(t *testing.T) (dir string, data []byte) {
	t.Helper()
	dir = t.TempDir()
	s := open(t, dir)
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("filler"))
		if err != nil {
			return err
		}
		for i := range 3000 {
			if err := b.Put(fmt.Appendf(nil, "key-%06d", i), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetKeyCheck([]byte("check")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err = os.ReadFile(filepath.Join(dir, "swmgr.db"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data
}

// A database that bbolt would take for a new one, or that would crash it,
// or that would silently lose the last commit, is refused with a message
// saying what is wrong and how to restore, and the file is left as it was.
func TestOpenRefusesDamagedDatabases(t *testing.T) {
	_, good := goodDB(t)
	page := os.Getpagesize()
	f, _ := os.CreateTemp(t.TempDir(), "db")
	f.Write(good)
	m, err := readMeta(f, 0)
	f.Close()
	if err != nil || int(m.pageSize) != page {
		t.Fatalf("meta of the good file: %+v %v", m, err)
	}
	hwm := int(m.hwm)
	flip := func(at int) func([]byte) []byte {
		return func(b []byte) []byte { b[at] ^= 0x40; return b }
	}
	for _, tc := range []struct {
		what   string
		damage func([]byte) []byte
		want   string
	}{
		{"empty", func([]byte) []byte { return nil }, "is empty (0 bytes)"},
		{"a few bytes", func(b []byte) []byte { return b[:100] }, "meta page 1 is damaged"},
		{"first page only", func(b []byte) []byte { return b[:page] }, "meta page 1 is damaged"},
		{"half of it", func(b []byte) []byte { return b[:len(b)/2] }, "is truncated"},
		{"all but its last page", func(b []byte) []byte { return b[:(hwm-1)*page] }, "is truncated"},
		{"meta 0 flipped", flip(16 + 20), "meta page 0 is damaged (its checksum does not match)"},
		{"meta 1 flipped", flip(page + 16 + 44), "meta page 1 is damaged (its checksum does not match)"},
		{"meta 0 magic", flip(16), "meta page 0 is damaged (it is not a bbolt meta page"},
		{"not a database", func(b []byte) []byte { return bytes.Repeat([]byte("garbage!"), len(b)/8) }, "meta page 0 is damaged"},
		{"pages overwritten", func(b []byte) []byte {
			for i := 4 * page; i < len(b)*2/3; i++ {
				b[i] = 0xAB
			}
			return b
		}, "is damaged"},
		{"a leaf overwritten", func(b []byte) []byte {
			for i := (hwm - 3) * page; i < (hwm-2)*page; i++ {
				b[i] = 0xAB
			}
			return b
		}, "is damaged"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "swmgr.db")
			bad := tc.damage(bytes.Clone(good))
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ResetConfigToFile") {
				t.Fatalf("error %q; want ErrDamaged with %q and the way to restore", err, tc.want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, bad) {
				t.Error("the damaged file was changed")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the data directory has %d entries, want the database alone", len(entries))
			}
		})
	}
	// The undamaged file opens and keeps its data.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "swmgr.db"), good, 0o600)
	s := open(t, dir)
	defer s.Close()
	if c, err := s.KeyCheck(); err != nil || string(c) != "check" {
		t.Fatalf("key check %q %v", c, err)
	}
}
