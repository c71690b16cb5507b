package store

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A bulk write is a batch that writes too many objects for one bbolt
// transaction to hold. bbolt keeps every key and value a transaction writes
// in its in-memory nodes until the commit, and the commit then allocates
// every page they fill at once: for a restore of 300,000 objects, ~130 MiB
// of nodes and ~100 MiB of pages on top of everything else the commit
// holds. Bulk writes the objects into a staging area instead, a copy of the
// object buckets (obj, ord, ids, refs) under the root bucket "stage", in
// transactions of at most BulkChunk object writes each, then puts the staged
// buckets in the place of the live ones in one final transaction, with the
// rest of the batch (revision record, counters, config log): bbolt moves a
// bucket by its root page, so that transaction is small whatever the
// objects.
//
// Readers see the old objects until the final transaction commits, and the
// new ones from then on, as with Update. A crash (kill -9, power loss) before
// it leaves the staging area, which is not part of the configuration: Open
// drops it, and so does the next Bulk; the store is the old one. The final
// transaction is one bbolt commit: old or new, nothing in between.

// bStage is the root bucket of the staging area.
var bStage = []byte("stage")

// objectBuckets are the buckets a bulk write stages.
var objectBuckets = [...]int{iObj, iOrd, iIDs, iRefs}

func isObjectBucket(i int) bool { return slices.Contains(objectBuckets[:], i) }

// BulkChunk is the number of object writes (Put, Delete, Rekey; copied keys
// when the staging area is filled) after which a bulk write commits its
// transaction and goes on in a new one: what bbolt holds of a bulk write
// at any time.
const BulkChunk = 16384

// Bulk runs a batch that writes many objects. objects runs first, in
// transactions on the staging area: its object reads and writes (Get,
// GetByID, List, Referrers, Put, Delete, Rekey) see and change the staged
// objects, and it may take revisions (NextRevision); any other write
// panics (Bulk returns the error). The store commits its transaction every
// BulkChunk object writes, so what objects reads from the store is valid only
// until its next object write. Then rest runs in the final transaction, in
// which the staged objects are the objects, with the same rules as Update's
// fn. Bulk returns once that transaction is durable; if anything fails,
// nothing changed (the staging area is dropped).
func (s *Store) Bulk(objects func(tx Txn) error, rest func(tx Txn) error) error {
	err := s.bulk(objects, rest)
	if err != nil {
		// Best effort: Open and the next Bulk drop it too.
		_ = safely(func() error { return s.db.Update(dropStage) })
	}
	return err
}

func (s *Store) bulk(objects func(tx Txn) error, rest func(tx Txn) error) error {
	start := time.Now()
	if err := s.fillStage(); err != nil {
		return err
	}
	tx := &Tx{writable: true, objectsOnly: true, staged: true, db: s.db}
	if err := tx.begin(); err != nil {
		return err
	}
	if err := call(objects, tx); err != nil {
		if tx.btx != nil {
			tx.btx.Rollback()
		}
		return err
	}
	if err := tx.commitChunk(); err != nil {
		return err
	}
	// The final transaction: the staged buckets take the place of the live
	// ones, then the rest of the batch.
	btx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx.btx, tx.buckets, tx.objectsOnly, tx.staged, tx.db = btx, [nBuckets]*bolt.Bucket{}, false, false, nil
	tx.puts = 0 // the staged writes filled their own pages
	if err := call(func(Txn) error { return switchStage(btx) }, tx); err != nil {
		btx.Rollback()
		return err
	}
	return s.writeAndCommit(tx, rest, start)
}

// begin starts the next transaction of a bulk write's objects.
func (tx *Tx) begin() error {
	btx, err := tx.db.Begin(true)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx.btx, tx.buckets, tx.chunk = btx, [nBuckets]*bolt.Bucket{}, 0
	return nil
}

// commitChunk commits the current transaction of a bulk write's objects
// (its counters stay in memory, written by the final transaction).
func (tx *Tx) commitChunk() error {
	if tx.chunk >= bulkPuts {
		tx.fillObjectPages()
	}
	if err := tx.btx.Commit(); err != nil {
		return fmt.Errorf("commit to disk: %w", err)
	}
	tx.btx = nil
	return nil
}

// wrote counts an object write (put: a Put); in a bulk write's objects, the
// BulkChunk-th commits the transaction and begins the next.
func (tx *Tx) wrote(put bool) {
	if put {
		tx.puts++
	}
	if !tx.staged {
		return
	}
	if tx.chunk++; tx.chunk < BulkChunk {
		return
	}
	must(tx.commitChunk())
	must(tx.begin())
}

// fillStage makes the staging area a copy of the object buckets, in
// transactions of at most BulkChunk keys.
func (s *Store) fillStage() error {
	err := safely(func() error {
		return s.db.Update(func(btx *bolt.Tx) error {
			if err := dropStage(btx); err != nil {
				return err
			}
			st, err := btx.CreateBucket(bStage)
			if err != nil {
				return err
			}
			for _, i := range objectBuckets {
				if _, err := st.CreateBucket(bucketNames[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("start the staging area: %w", err)
	}
	for _, i := range objectBuckets {
		name := bucketNames[i]
		var last []byte // the last key copied
		for done := false; !done; {
			err := safely(func() error {
				return s.db.Update(func(btx *bolt.Tx) error {
					src, dst := btx.Bucket(name), btx.Bucket(bStage).Bucket(name)
					dst.FillPercent = 1.0 // in key order
					c := src.Cursor()
					k, v := c.First()
					if last != nil {
						if k, v = c.Seek(last); k != nil && bytes.Equal(k, last) {
							k, v = c.Next()
						}
					}
					n := 0
					for ; k != nil && n < BulkChunk; k, v = c.Next() {
						if err := dst.Put(k, bytes.Clone(v)); err != nil {
							return err
						}
						last = k
						n++
					}
					last = bytes.Clone(last)
					done = k == nil
					return nil
				})
			})
			if err != nil {
				return fmt.Errorf("copy %s to the staging area: %w", name, err)
			}
		}
	}
	return nil
}

// switchStage puts the staged object buckets in the place of the live ones.
func switchStage(btx *bolt.Tx) error {
	st := btx.Bucket(bStage)
	if st == nil {
		return fmt.Errorf("store: no staging area")
	}
	for _, i := range objectBuckets {
		name := bucketNames[i]
		if err := btx.DeleteBucket(name); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		if err := btx.MoveBucket(name, st, nil); err != nil {
			return fmt.Errorf("move the staged %s: %w", name, err)
		}
	}
	return btx.DeleteBucket(bStage)
}

// dropStage deletes the staging area, if there is one.
func dropStage(btx *bolt.Tx) error {
	if btx.Bucket(bStage) == nil {
		return nil
	}
	return btx.DeleteBucket(bStage)
}
