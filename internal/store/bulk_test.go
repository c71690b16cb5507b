package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// bulkOps writes what a restore does: n objects created (each naming the
// one before), some of the existing ones updated or deleted, one revision
// with its record and a log entry. ids makes the ObjectIds the same in
// every store.
func bulkOps(n int, ids func(i int) uuid.UUID) (objects, rest func(tx Txn) error) {
	var rev uint64
	objects = func(tx Txn) error {
		rev = tx.NextRevision()
		for i := range n {
			r := &Record{Kind: "K", Key: fmt.Sprintf("k%07d", i), ID: ids(i), ModRev: rev, Public: []byte(fmt.Sprintf(`{"k":%d,"pad":"0123456789012345678901234567890123456789"}`, i))}
			var refs []Ref
			if i > 0 {
				refs = []Ref{{Kind: "K", Key: fmt.Sprintf("k%07d", i-1)}}
			}
			if err := tx.Put(r, nil, refs); err != nil {
				return err
			}
		}
		// Objects that were there: one updated, one deleted.
		if err := tx.Put(&Record{Kind: "Old", Key: "a", ID: ids(-1), ModRev: rev, Public: []byte(`{"v":2}`)}, nil, nil); err != nil {
			return err
		}
		return tx.Delete(Record{Kind: "Old", Key: "b"}, nil)
	}
	rest = func(tx Txn) error {
		tx.PutRevision(rev, []byte(fmt.Sprintf(`{"Revision":%d}`, rev)))
		tx.AppendLog(func(seq uint64) []byte { return []byte(fmt.Sprintf(`{"SeqNum":%d}`, seq)) })
		return nil
	}
	return objects, rest
}

func seeded(t *testing.T) *Store {
	t.Helper()
	s := open(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	seedInto(t, s)
	return s
}

// seedInto writes the objects a bulk write finds (bulkOps changes two).
func seedInto(t *testing.T, s *Store) {
	t.Helper()
	err := s.Update(func(tx Txn) error {
		rev := tx.NextRevision()
		for i, key := range []string{"a", "b", "c"} {
			if err := tx.Put(&Record{Kind: "Old", Key: key, ID: uuid.UUID{byte(i + 1)}, ModRev: rev, Public: []byte(`{"v":1}`)}, nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func dump(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func seqID(i int) uuid.UUID {
	var id uuid.UUID
	id[0] = 0x80
	id[15], id[14], id[13], id[12] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
	return id
}

// A bulk write of several chunks stores exactly what one transaction
// stores (objects, indexes, counters, revision), and leaves no staging area.
func TestBulkStoresWhatUpdateStores(t *testing.T) {
	n := 2*BulkChunk + 100
	one, bulk := seeded(t), seeded(t)
	objects, rest := bulkOps(n, seqID)
	if err := one.Update(func(tx Txn) error {
		if err := objects(tx); err != nil {
			return err
		}
		return rest(tx)
	}); err != nil {
		t.Fatal(err)
	}
	objects, rest = bulkOps(n, seqID)
	if err := bulk.Bulk(objects, rest); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, one), dump(t, bulk); !bytes.Equal(a, b) {
		t.Fatalf("the bulk write stored something else than one transaction: %d vs %d bytes of dump", len(a), len(b))
	}
	bulk.db.View(func(btx *bolt.Tx) error {
		if btx.Bucket(bStage) != nil {
			t.Error("the staging area is left")
		}
		return nil
	})
	var logged int
	bulk.View(func(tx Txn) error {
		_, _, err := tx.Log(0, 10, func(uint64, []byte) error { logged++; return nil })
		return err
	})
	if logged != 1 {
		t.Errorf("%d log entries; want 1", logged)
	}
}

// A bulk write that fails, in its objects (after chunks were committed) or
// in the final transaction, changes nothing; nor do its other writes
// while it stages.
func TestBulkFailureChangesNothing(t *testing.T) {
	s := seeded(t)
	before := dump(t, s)
	n := BulkChunk + 10
	objects, rest := bulkOps(n, seqID)
	boom := errors.New("boom")
	err := s.Bulk(func(tx Txn) error {
		if err := objects(tx); err != nil {
			return err
		}
		return boom
	}, rest)
	if !errors.Is(err, boom) {
		t.Fatalf("Bulk: %v; want boom", err)
	}
	objects, _ = bulkOps(n, seqID)
	if err := s.Bulk(objects, func(Txn) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Bulk: %v; want boom", err)
	}
	if err := s.Bulk(func(tx Txn) error { tx.SetMeta("x", []byte("y")); return nil }, func(Txn) error { return nil }); err == nil {
		t.Fatal("a bulk write's objects wrote meta")
	}
	if after := dump(t, s); !bytes.Equal(before, after) {
		t.Fatal("a failed bulk write changed the store")
	}
}

// Open drops the staging area a bulk write left (a crash before its final
// transaction), and the store is as it was.
func TestOpenDropsAStagingArea(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Update(func(tx Txn) error { _, err := put(tx.(*Tx), "K", "a"); return err }); err != nil {
		t.Fatal(err)
	}
	before := dump(t, s)
	if err := s.fillStage(); err != nil {
		t.Fatal(err)
	}
	s.db.Update(func(btx *bolt.Tx) error { return btx.Bucket(bStage).Bucket(bObj).Put([]byte("K\x00b"), []byte("x")) })
	s.Close()
	s = open(t, dir)
	defer s.Close()
	s.db.View(func(btx *bolt.Tx) error {
		if btx.Bucket(bStage) != nil {
			t.Error("the staging area is still there after Open")
		}
		return nil
	})
	if after := dump(t, s); !bytes.Equal(before, after) {
		t.Fatal("the store changed")
	}
}

// What the store holds in memory while a bulk write writes its objects
// does not grow with their number: the live heap at the final transaction,
// per object, stays far below what bbolt holds of a write in one
// transaction (its nodes: ~490 bytes an object here, ~40 with Bulk: bbolt's
// freelist). This fails if the objects go back into one transaction.
func TestBulkHeapDoesNotGrowWithObjects(t *testing.T) {
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	grow := func(n int) float64 {
		s := seeded(t)
		objects, rest := bulkOps(n, seqID)
		base := live()
		var at uint64
		if err := s.Bulk(objects, func(tx Txn) error { at = live(); return rest(tx) }); err != nil {
			t.Fatal(err)
		}
		return float64(int64(at)-int64(base)) / float64(n)
	}
	n := 6 * BulkChunk
	perObject := grow(n)
	t.Logf("live heap at the final transaction: %.1f bytes per object of %d", perObject, n)
	if perObject > 100 {
		t.Fatalf("a bulk write of %d objects holds %.1f bytes of heap per object at its final transaction; want at most 100 (one transaction holds ~490)", n, perObject)
	}
}
