package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// setFormat writes meta "format" of the closed store in dir straight
// through bbolt (nil: removes it, as a store made before formats were
// recorded).
func setFormat(t *testing.T, dir string, value []byte) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "swmgr.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		if value == nil {
			return tx.Bucket(bMeta).Delete(kFormat)
		}
		return tx.Bucket(bMeta).Put(kFormat, value)
	}); err != nil {
		t.Fatal(err)
	}
}

func formatIn(t *testing.T, s *Store) uint64 {
	t.Helper()
	var f uint64
	s.db.View(func(tx *bolt.Tx) error { f = formatOf(tx.Bucket(bMeta)); return nil })
	return f
}

// A new store is in the current format; one written by a newer swmgr is
// refused at Open, naming both formats, and left exactly as it was.
func TestOpenRefusesANewerFormat(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if got := formatIn(t, s); got != Format {
		t.Errorf("a new store records format %d, want %d", got, Format)
	}
	s.Close()

	setFormat(t, dir, be(Format+1))
	before, err := os.ReadFile(filepath.Join(dir, "swmgr.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("Open of a format %d store: %v, want ErrNewerFormat", Format+1, err)
	}
	for _, want := range []string{"store format 3", "formats up to 2", "SaveConfig"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "swmgr.db"))
	if !bytes.Equal(before, after) {
		t.Error("the refused store was changed")
	}

	// The current format opens.
	setFormat(t, dir, be(Format))
	s = open(t, dir)
	s.Close()
}

// A store made before formats were recorded stays in format 1 (which an
// older swmgr reads) until it stores its first deflated revision record.
func TestFormatRisesWithTheFirstDeflatedRecord(t *testing.T) {
	dir := t.TempDir()
	open(t, dir).Close()
	setFormat(t, dir, nil)
	s := open(t, dir)
	defer s.Close()
	if got := formatIn(t, s); got != 1 {
		t.Fatalf("an old store opens in format %d, want 1", got)
	}
	put := func(size int) {
		t.Helper()
		b := NewRecordBuilder(size)
		b.Write(append([]byte(`{"x":"`), append(bytes.Repeat([]byte("a"), size), `"}`...)...))
		if err := s.Update(func(tx Txn) error { tx.PutRevision(tx.NextRevision(), b.Bytes()); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	put(100)
	if got := formatIn(t, s); got != 1 {
		t.Fatalf("after a plain record the format is %d, want 1", got)
	}
	put(2 * DeflateAbove)
	if got := formatIn(t, s); got != 2 {
		t.Fatalf("after a deflated record the format is %d, want 2", got)
	}
}
