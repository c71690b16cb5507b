// Package store keeps swmgr's configuration durable in one bbolt file.
//
// Layout (all integers big-endian so that byte order is numeric order):
//
//	meta                 "rev" -> last revision, "seq" -> last creation sequence,
//	                     "format" -> the store format (Format; absent: 1)
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
//	stage/{obj,ord,ids,refs}  only during a bulk write (bulk.go): the object
//	                     buckets as they will be, switched in by its final
//	                     transaction; dropped by Open after a crash
//
// The store is passive: it has no goroutine and calls nothing back. Its
// single writer (the engine's writer loop) hands it a batch of writes with
// Update, which runs them in one bbolt write transaction and returns once
// that is on disk (fdatasync); readers take consistent snapshots with View.
// Store is the bbolt implementation of the Config interface (iface.go),
// which a replicated store can implement too; the engine uses only that.
package store

import (
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
	bolterr "go.etcd.io/bbolt/errors"

	"github.com/swmgr/swmgr/internal/datadir"
)

// Retention limits.
const (
	MaxLogEntries = 1000
	MaxRevisions  = 1000
	// MaxLogFailures is how many failed requests a full config log keeps
	// before it drops the oldest failure instead of the oldest entry, so
	// that a flood of refused writes cannot push the successful changes
	// out: at least MaxLogEntries-MaxLogFailures of the newest successful
	// entries (all of them, if fewer) always stay.
	MaxLogFailures = MaxLogEntries / 2
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
	// In logmeta besides kSeq: the number of entries and of failed ones,
	// and an index of the failed ones (kFailed + SeqNum).
	kLogN      = []byte("n")
	kLogFailed = []byte("nfailed")
	kFailed    = []byte("failed/")
)

// InitialMmapSize is the address space mapped for the database at open.
// bbolt grows a smaller map by remapping the file inside a write
// transaction's commit, which waits for every open read transaction: a long
// read (checking a large candidate's staging, saving the configuration,
// paging through a large list) would then hold every write behind it. With
// the map this large no remap happens below this database size. It is
// address space, not memory: only the pages touched count in RSS. (See
// growthStep for the file's own growth.)
const InitialMmapSize = 1 << 30

// growthStep is how much bbolt grows the file by beyond what a commit
// needs: as much as the database holds, between 32 KiB and 16 MiB. With
// the large map (InitialMmapSize) bbolt would otherwise grow the file in
// 16 MiB steps from the start; this keeps the doubling it does with a small
// map, so the file stays within about twice its pages (and a file cut in
// half loses pages, which the check at open finds).
func growthStep(size int64) int {
	return int(min(max(size, 32<<10), 16<<20))
}

// Format is the newest store format this binary writes and reads. A store
// records the format its data needs (meta "format"), and a binary refuses a
// store of a newer format at Open instead of misreading it (a downgrade):
//
//	1  JSON revision records (no "format" key: swmgr before it)
//	2  revision records may be stored deflated (RecordBuilder)
const Format = 2

// ErrNewerFormat means the data directory was written by a newer swmgr.
var ErrNewerFormat = errors.New("the data directory was written by a newer swmgr")

var kFormat = []byte("format")

// formatOf is the format a store records.
func formatOf(meta *bolt.Bucket) uint64 {
	if meta == nil {
		return 1
	}
	if v := meta.Get(kFormat); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 1
}

// ErrLocked means another process has the data directory open.
var ErrLocked = errors.New("data directory is in use by another swmgr process")

// Store is an open configuration database.
type Store struct {
	db *bolt.DB

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
	path := filepath.Join(dir, datadir.DB)
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	complete, empty, format, staged := true, true, uint64(0), false // what the store holds, read once at open
	err := safely(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout:         200 * time.Millisecond,
			FreelistType:    bolt.FreelistMapType,
			InitialMmapSize: InitialMmapSize,
		})
		return err
	})
	if err == nil {
		if err = checkPages(db, path); err != nil {
			db.Close()
			return nil, err
		}
		_ = db.View(func(tx *bolt.Tx) error {
			for _, b := range bucketNames {
				complete = complete && tx.Bucket(b) != nil
			}
			empty = tx.Bucket(bMeta) == nil
			format = formatOf(tx.Bucket(bMeta))
			staged = tx.Bucket(bStage) != nil
			return nil
		})
		if format > Format {
			db.Close()
			return nil, fmt.Errorf("%w: %s is in store format %d, and this swmgr reads formats up to %d. Run the newer swmgr, or start this one on an empty data directory and restore a configuration saved with SaveConfig", ErrNewerFormat, path, format, Format)
		}
	}
	if err != nil {
		if errors.Is(err, bolterr.ErrTimeout) {
			pid, _ := os.ReadFile(filepath.Join(dir, datadir.PID))
			return nil, fmt.Errorf("%w: %s (pid %s)", ErrLocked, dir, strings.TrimSpace(string(pid)))
		}
		if damaged(err) {
			return nil, fmt.Errorf("%w: %s: %v. %s", ErrDamaged, path, err, restoreHint)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.AllocSize = growthStep(0)
	_ = os.WriteFile(filepath.Join(dir, datadir.PID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	// Only a new database is written to here, and one holding the staging
	// area of a bulk write that did not finish (not part of the
	// configuration): one refused by a check after Open (the secret key's)
	// must otherwise be left exactly as it was.
	if !complete {
		err = db.Update(func(tx *bolt.Tx) error {
			for _, b := range bucketNames {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			if empty {
				// A new store is in the current format from the start; an
				// older one says so when it first needs it (PutRevision).
				return tx.Bucket(bMeta).Put(kFormat, be(Format))
			}
			return nil
		})
	}
	if err == nil && staged {
		// A bulk write that did not finish (bulk.go): its staging area is
		// not part of the configuration, which is as it was before it.
		err = db.Update(dropStage)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialise %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database; the caller has stopped writing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.db.Close() })
	return s.closeErr
}

// View runs fn in a read-only transaction: a consistent snapshot at one
// revision. Records passed to fn are valid only until fn returns.
func (s *Store) View(fn func(tx Txn) error) error {
	return safely(func() error { return s.db.View(func(btx *bolt.Tx) error { return fn(&Tx{btx: btx}) }) })
}

// Update runs fn in one write transaction and returns once it is durable.
// If fn returns an error (or panics), nothing it wrote is kept. Only one
// goroutine, the engine's writer, calls it.
// The batch observer (metrics) is told how many revisions the transaction
// wrote (the commits the writer grouped) and how long it took to reach the
// disk.
func (s *Store) Update(fn func(tx Txn) error) error {
	btx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{btx: btx, writable: true}
	return s.writeAndCommit(tx, fn, time.Time{})
}

// writeAndCommit runs fn in tx (its writes flushed into tx's bbolt
// transaction) and commits that transaction; if fn fails or panics, the
// transaction is rolled back and nothing is kept. The batch observer is
// told the revisions written and the time since start (zero: since the
// commit to disk began).
func (s *Store) writeAndCommit(tx *Tx, fn func(tx Txn) error, start time.Time) error {
	btx := tx.btx
	if err := call(func(tx Txn) error {
		if err := fn(tx); err != nil {
			return err
		}
		tx.(*Tx).flush()
		return nil
	}, tx); err != nil {
		btx.Rollback()
		return err
	}
	s.db.AllocSize = growthStep(btx.Size())
	if tx.puts >= bulkPuts {
		tx.fillObjectPages()
	}
	if start.IsZero() {
		start = time.Now()
	}
	if err := btx.Commit(); err != nil {
		return fmt.Errorf("commit to disk: %w", err)
	}
	if o := s.observe.Load(); o != nil {
		(*o)(max(1, tx.revisions), time.Since(start))
	}
	return nil
}

// bulkPuts is the number of objects a transaction writes from which its
// pages are filled (fillObjectPages).
const bulkPuts = 1024

// fillObjectPages makes the transaction fill the pages of the object
// buckets. bbolt splits a node that outgrows its page at FillPercent (0.5
// by default), so keys written in order (a restore's objects, ids,
// creation order) would fill their pages half: twice the pages to allocate
// at the commit and to write. Append-like writes fill them.
func (tx *Tx) fillObjectPages() {
	for _, i := range objectBuckets {
		tx.bucket(i).FillPercent = 1.0
	}
}

func call(fn func(tx Txn) error, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store write failed: %v", p)
		}
	}()
	return fn(tx)
}

// Dump writes every bucket except the config log (and a bulk write's
// staging area) as sorted hex lines. Two
// dumps are equal exactly when the stored configuration, its indexes and the
// revision history are byte-identical.
func (s *Store) Dump(w io.Writer) error {
	return s.db.View(func(btx *bolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bLog) || string(name) == string(bLogMeta) || string(name) == string(bStage) {
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
