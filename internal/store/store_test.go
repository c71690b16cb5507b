package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(tx *Tx, kind, key string) (uuid.UUID, error) {
	r := &Record{Kind: kind, Key: key, ID: uuid.New(), Public: []byte(`{"k":"` + key + `"}`)}
	r.CreateRev = tx.NextRevision()
	r.ModRev = r.CreateRev
	return r.ID, tx.Put(r, nil, nil)
}

func TestConcurrentCommitsAreDurableAndNumbered(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Commit(context.Background(), func(tx *Tx) (func(), error) {
				_, err := put(tx, "K", fmt.Sprintf("k%03d", i))
				return nil, err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	s.Close()

	s = open(t, dir)
	defer s.Close()
	err := s.View(func(tx Txn) error {
		if got := tx.Revision(); got != n {
			t.Errorf("revision = %d, want %d", got, n)
		}
		seen := 0
		_, more, err := tx.List("K", 0, 1000, func(r Record) error {
			seen++
			got, ok, err := tx.GetByID(r.ID)
			if err != nil || !ok || got.Key != r.Key {
				t.Errorf("GetByID(%s) = %v, %v, %v", r.ID, got.Key, ok, err)
			}
			return nil
		})
		if seen != n || more {
			t.Errorf("listed %d (more=%v), want %d", seen, more, n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPagingSurvivesConcurrentChanges(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	for i := range 50 {
		s.Commit(context.Background(), func(tx *Tx) (func(), error) {
			_, err := put(tx, "K", fmt.Sprintf("k%02d", i))
			return nil, err
		})
	}
	var seen []string
	var marker uint64
	for page := 0; ; page++ {
		var more bool
		s.View(func(tx Txn) error {
			var err error
			marker, more, err = tx.List("K", marker, 7, func(r Record) error {
				seen = append(seen, r.Key)
				return nil
			})
			return err
		})
		// Between pages: delete an object already listed and one not yet
		// listed, and add a new one.
		s.Commit(context.Background(), func(tx *Tx) (func(), error) {
			for _, key := range []string{fmt.Sprintf("k%02d", page), fmt.Sprintf("k%02d", 49-page)} {
				if r, ok, _ := tx.Get("K", key); ok && page < 20 {
					if err := tx.Delete(r, nil); err != nil {
						return nil, err
					}
				}
			}
			_, err := put(tx, "K", fmt.Sprintf("new%02d", page))
			return nil, err
		})
		if !more {
			break
		}
	}
	count := map[string]int{}
	for _, k := range seen {
		count[k]++
	}
	for k, c := range count {
		if c != 1 {
			t.Errorf("%s listed %d times", k, c)
		}
	}
	// k20..k29 exist throughout: they must all be listed.
	for i := 20; i < 30; i++ {
		if count[fmt.Sprintf("k%02d", i)] != 1 {
			t.Errorf("k%02d not listed", i)
		}
	}
}

func TestLogKeepsLastEntriesAndSeqNum(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for i := 0; i < MaxLogEntries+25; i += 5 {
		s.Commit(context.Background(), func(tx *Tx) (func(), error) {
			for range 5 {
				tx.AppendLog(func(seq uint64) []byte { return []byte(fmt.Sprint(seq)) })
			}
			return nil, nil
		})
	}
	s.View(func(tx Txn) error {
		var first, n uint64
		tx.Log(0, 2000, func(seq uint64, e []byte) error {
			if n == 0 {
				first = seq
			}
			n++
			return nil
		})
		if n != MaxLogEntries || first != 26 {
			t.Errorf("log holds %d entries from %d; want %d from 26", n, first, MaxLogEntries)
		}
		return nil
	})
	s.Commit(context.Background(), func(tx *Tx) (func(), error) {
		tx.ClearLog()
		tx.AppendLog(func(seq uint64) []byte { return []byte("clear") })
		return nil, nil
	})
	s.Close()
	s = open(t, dir)
	defer s.Close()
	s.View(func(tx Txn) error {
		var seqs []uint64
		tx.Log(0, 10, func(seq uint64, e []byte) error { seqs = append(seqs, seq); return nil })
		if len(seqs) != 1 || seqs[0] != MaxLogEntries+26 {
			t.Errorf("after clear and reopen: %v", seqs)
		}
		return nil
	})
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v; want ErrLocked", err)
	}
}

func TestDumpIgnoresLogOnly(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	s.Commit(context.Background(), func(tx *Tx) (func(), error) { _, err := put(tx, "K", "a"); return nil, err })
	var before, after bytes.Buffer
	s.Dump(&before)
	s.Commit(context.Background(), func(tx *Tx) (func(), error) {
		tx.AppendLog(func(uint64) []byte { return []byte("x") })
		return nil, nil
	})
	s.Dump(&after)
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("a config log entry changed the dump")
	}
	s.Commit(context.Background(), func(tx *Tx) (func(), error) { _, err := put(tx, "K", "b"); return nil, err })
	after.Reset()
	s.Dump(&after)
	if bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("a new object did not change the dump")
	}
}

func TestRevisionsNewestFirst(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	for range 5 {
		s.Commit(context.Background(), func(tx *Tx) (func(), error) {
			rev := tx.NextRevision()
			tx.PutRevision(rev, []byte(fmt.Sprint(rev)))
			return nil, nil
		})
	}
	s.View(func(tx Txn) error {
		var got []uint64
		next, more, _ := tx.Revisions(0, 2, func(rev uint64, _ []byte) error { got = append(got, rev); return nil })
		tx.Revisions(next, 10, func(rev uint64, _ []byte) error { got = append(got, rev); return nil })
		if fmt.Sprint(got) != "[5 4 3 2 1]" || !more {
			t.Errorf("revisions = %v (more %v)", got, more)
		}
		return nil
	})
}

// Commit writes through Update with the shape these tests were written
// for. (The group commit and the isolation of a failing commit moved to the
// engine's writer: see engine's TestBatchIsolatesAFailingCommit.)
func (s *Store) Commit(ctx context.Context, fn func(tx *Tx) (func(), error)) error {
	return s.Update(func(tx Txn) error { _, err := fn(tx.(*Tx)); return err })
}

// TestListGoesOnPastADamagedRecord: a record whose header does not read
// stops List with a DamagedError naming it and its place, from which the
// list goes on to the records after it; Get names it the same way.
func TestListGoesOnPastADamagedRecord(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	err := s.Commit(context.Background(), func(tx *Tx) (func(), error) {
		for _, k := range []string{"a", "b", "c"} {
			if _, err := put(tx, "K", k); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bObj).Put(objKey("K", "b"), []byte("not a record"))
	}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	var damaged *DamagedError
	err = s.View(func(tx Txn) error {
		for marker := uint64(0); ; {
			_, _, err := tx.List("K", marker, 10, func(r Record) error {
				seen = append(seen, r.Key)
				return nil
			})
			if !errors.As(err, &damaged) {
				return err
			}
			marker = damaged.Seq + 1
		}
	})
	if err != nil || fmt.Sprint(seen) != "[a c]" || damaged == nil || damaged.Kind != "K" || damaged.Key != "b" {
		t.Fatalf("listed %v, damaged %+v, %v", seen, damaged, err)
	}
	s.View(func(tx Txn) error {
		if _, _, err := tx.Get("K", "b"); !errors.As(err, &damaged) || damaged.Key != "b" {
			t.Errorf("Get of the damaged record: %v", err)
		}
		return nil
	})
}
