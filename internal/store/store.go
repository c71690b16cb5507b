// Package store keeps swmgr's configuration durable in one bbolt file.
//
// Layout (all integers big-endian so that byte order is numeric order):
//
//	meta                 "rev" -> last revision, "seq" -> last creation sequence
//	obj                  kind NUL key -> record (see tx.go)
//	ord                  kind NUL creation seq -> key; pages walk this, so a
//	                     page at any offset costs O(page), and objects created
//	                     or deleted while a client pages never make it skip or
//	                     repeat one
//	ids                  ObjectId (16 bytes) -> kind NUL key
//	refs                 target kind NUL target key NUL source kind NUL source key -> ""
//	revs                 revision -> revision record (JSON), the last MaxRevisions
//	log                  config log SeqNum -> entry (JSON), the last MaxLogEntries
//	logmeta              "seq" -> last config log SeqNum (never reused)
//	cands/<id>           candidate: "meta" -> JSON, edit seq -> sealed edit
//
// Every change goes through Commit. Concurrent commits are group-committed: a
// single goroutine runs the commit functions that are waiting, one after the
// other, in one bbolt write transaction, and syncs it to disk once. No caller
// is answered before its data is on disk.
package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Retention limits.
const (
	MaxLogEntries = 1000
	MaxRevisions  = 1000
	maxBatch      = 512
)

var (
	bMeta    = []byte("meta")
	bObj     = []byte("obj")
	bOrd     = []byte("ord")
	bIDs     = []byte("ids")
	bRefs    = []byte("refs")
	bRevs    = []byte("revs")
	bLog     = []byte("log")
	bLogMeta = []byte("logmeta")
	bCands   = []byte("cands")
	kRev     = []byte("rev")
	kSeq     = []byte("seq")
)

// ErrLocked means another process has the data directory open.
var ErrLocked = errors.New("data directory is in use by another swmgr process")

// Store is an open configuration database.
type Store struct {
	db   *bolt.DB
	reqs chan *request
	stop chan struct{}
	done chan struct{}

	closeOnce sync.Once
	closeErr  error
	observe   atomic.Pointer[BatchObserver]
}

// BatchObserver is told the size of each group commit that reached the
// disk and how long its write and fsync took.
type BatchObserver func(batch int, sync time.Duration)

// ObserveBatches sets the observer (metrics).
func (s *Store) ObserveBatches(o BatchObserver) { s.observe.Store(&o) }

// Open opens (creating if needed) the database in dir. It fails at once with
// ErrLocked if another process holds it.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, "swmgr.db")
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err := safely(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout:      200 * time.Millisecond,
			FreelistType: bolt.FreelistMapType,
		})
		return err
	})
	if err == nil {
		if err = checkPages(db, path); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			pid, _ := os.ReadFile(filepath.Join(dir, "swmgr.pid"))
			return nil, fmt.Errorf("%w: %s (pid %s)", ErrLocked, dir, strings.TrimSpace(string(pid)))
		}
		if damaged(err) {
			return nil, fmt.Errorf("%w: %s: %v. %s", ErrDamaged, path, err, restoreHint)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	_ = os.WriteFile(filepath.Join(dir, "swmgr.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	// Only a new database is written to here: one refused by a check after
	// Open (the secret key's) must be left exactly as it was.
	buckets := [][]byte{bMeta, bObj, bOrd, bIDs, bRefs, bRevs, bLog, bLogMeta, bCands}
	complete := true
	_ = db.View(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			complete = complete && tx.Bucket(b) != nil
		}
		return nil
	})
	if !complete {
		err = db.Update(func(tx *bolt.Tx) error {
			for _, b := range buckets {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialise %s: %w", path, err)
	}
	s := &Store{db: db, reqs: make(chan *request, maxBatch), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s, nil
}

// Close waits for commits in progress, then closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// View runs fn in a read-only transaction. Records passed to fn are valid
// only until fn returns.
func (s *Store) View(fn func(tx *Tx) error) error {
	return safely(func() error { return s.db.View(func(btx *bolt.Tx) error { return fn(&Tx{btx: btx}) }) })
}

// CommitFunc changes the store inside a shared write transaction. It must do
// all its checks before its first write: returning an error after writing
// makes the store roll back the whole batch and rerun every other function
// alone. On success it may return undo, which reverts what it did outside the
// store (in a backend) should the transaction fail to reach the disk.
type CommitFunc func(tx *Tx) (undo func(), err error)

type request struct {
	fn    CommitFunc
	err   error
	undo  func()
	hooks []func()
	done  chan struct{}
}

// Commit runs fn and returns once its writes are durable, or with fn's error
// (and then nothing fn wrote is kept).
func (s *Store) Commit(ctx context.Context, fn CommitFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{fn: fn, done: make(chan struct{})}
	select {
	case s.reqs <- r:
	case <-s.stop:
		return errors.New("store is closed")
	}
	<-r.done // a submitted commit always finishes, so the caller knows its fate
	return r.err
}

func (s *Store) run() {
	defer close(s.done)
	batch := make([]*request, 0, maxBatch)
	for {
		select {
		case r := <-s.reqs:
			batch = append(batch[:0], r)
		drain:
			for len(batch) < maxBatch {
				select {
				case r := <-s.reqs:
					batch = append(batch, r)
				default:
					break drain
				}
			}
			if !s.runBatch(batch) {
				for _, r := range batch {
					s.runBatch([]*request{r})
				}
			}
			for _, r := range batch {
				close(r.done)
			}
		case <-s.stop:
			for {
				select {
				case r := <-s.reqs:
					r.err = errors.New("store is closed")
					close(r.done)
				default:
					return
				}
			}
		}
	}
}

// runBatch runs the requests in one transaction. It returns false when a
// function failed after writing, having undone everything; the caller then
// reruns the requests one by one.
func (s *Store) runBatch(batch []*request) bool {
	btx, err := s.db.Begin(true)
	if err != nil {
		for _, r := range batch {
			r.err = fmt.Errorf("begin transaction: %w", err)
		}
		return true
	}
	undo := func(upto int) {
		for i := upto - 1; i >= 0; i-- {
			if r := batch[i]; r.err == nil && r.undo != nil {
				r.undo()
			}
		}
	}
	for i, r := range batch {
		tx := &Tx{btx: btx, writable: true}
		r.undo, r.err = call(r.fn, tx)
		r.hooks = tx.hooks
		if r.err != nil && tx.wrote {
			btx.Rollback()
			if len(batch) == 1 {
				return true
			}
			// Undo the backend effects of the functions that ran before
			// this one; all of them run again, alone.
			undo(i)
			for _, r := range batch {
				r.err, r.undo = nil, nil
			}
			return false
		}
	}
	syncStart := time.Now()
	if err := btx.Commit(); err != nil {
		undo(len(batch))
		for _, r := range batch {
			if r.err == nil {
				r.err = fmt.Errorf("commit to disk: %w", err)
			}
		}
		return true
	}
	if o := s.observe.Load(); o != nil {
		(*o)(len(batch), time.Since(syncStart))
	}
	// Durable now: run the hooks in commit order.
	for _, r := range batch {
		if r.err == nil {
			for _, h := range r.hooks {
				h()
			}
		}
	}
	return true
}

func call(fn CommitFunc, tx *Tx) (undo func(), err error) {
	defer func() {
		if p := recover(); p != nil {
			tx.wrote = true // assume the worst about a function that panicked
			err = fmt.Errorf("commit function panicked: %v", p)
		}
	}()
	return fn(tx)
}

// Dump writes every bucket except the config log as sorted hex lines. Two
// dumps are equal exactly when the stored configuration, its indexes and the
// revision history are byte-identical.
func (s *Store) Dump(w io.Writer) error {
	return s.View(func(tx *Tx) error {
		return tx.btx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bLog) || string(name) == string(bLogMeta) {
				return nil
			}
			return dumpBucket(w, string(name), b)
		})
	})
}

func dumpBucket(w io.Writer, path string, b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return dumpBucket(w, path+"/"+string(k), b.Bucket(k))
		}
		_, err := fmt.Fprintf(w, "%s %x %x\n", path, k, v)
		return err
	})
}

func u64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func be(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}
