package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	bolterr "go.etcd.io/bbolt/errors"
)

// ErrDamaged means the database file is empty, truncated or corrupted.
// swmgr refuses to start on it rather than start as a new switch or lose
// acknowledged commits silently.
var ErrDamaged = errors.New("the configuration database is damaged")

// RecoverHint says how to recover from a damaged database or record.
const RecoverHint = "restore swmgr.db from a backup of the data directory; or move the data directory away, start swmgr on a new one and load a saved configuration (POST /public/v1/action/ResetConfigToFile with the SaveConfig file)"

// restoreHint says what an operator can do about a damaged database.
const restoreHint = "swmgr has not changed it. Stop here and " + RecoverHint

// bbolt's file layout, as far as this check reads it: two meta pages at
// the start of the file (page 0 and page 1), each a 16-byte page header
// then the meta: magic, version, page size, flags (4 bytes each), the root
// bucket (16), the freelist page, the high-water mark page id, the
// transaction id (8 each) and an FNV-64a checksum of what precedes it.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSumLen     = 56 // bytes of the meta the checksum covers
	metaSize       = metaSumLen + 8
)

type boltMeta struct {
	pageSize uint32
	hwm      uint64 // pages below this exist
	txid     uint64
}

// readMeta parses and validates the meta page at off.
func readMeta(f *os.File, off int64) (boltMeta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := f.ReadAt(buf, off); err != nil {
		return boltMeta{}, fmt.Errorf("cannot read it: %w", err)
	}
	m := buf[pageHeaderSize:]
	le := binary.LittleEndian // bbolt writes its pages in the machine's order; swmgr runs on little-endian hosts
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, errors.New("it is not a bbolt meta page (bad magic)")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt file format version %d, not %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSumLen])
	if h.Sum64() != le.Uint64(m[metaSumLen:]) {
		return boltMeta{}, errors.New("its checksum does not match")
	}
	return boltMeta{pageSize: le.Uint32(m[8:]), hwm: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// checkFile refuses a database file that bbolt would silently treat as a
// new database (an empty file), one with a damaged meta page (bbolt would
// fall back to the older one, losing the last commit, which was
// acknowledged), and one shorter than its pages (reading it would crash
// with SIGBUS). A file that does not exist is fine: a new switch.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return fmt.Errorf("%w: %s is empty (0 bytes), so all configuration and history would be lost; swmgr does not start a new switch over it. %s", ErrDamaged, path, restoreHint)
	}
	m0, err0 := readMeta(f, 0)
	pageSize := int64(m0.pageSize)
	if err0 != nil {
		pageSize = int64(os.Getpagesize())
	}
	m1, err1 := readMeta(f, pageSize)
	for i, err := range []error{err0, err1} {
		if err != nil {
			return fmt.Errorf("%w: %s (%d bytes): meta page %d is damaged (%v), so the last acknowledged commit may be lost or the file is truncated; swmgr does not guess. %s", ErrDamaged, path, size, i, err, restoreHint)
		}
	}
	if m0.pageSize != m1.pageSize {
		return fmt.Errorf("%w: %s: its meta pages disagree on the page size (%d, %d). %s", ErrDamaged, path, m0.pageSize, m1.pageSize, restoreHint)
	}
	if need := int64(max(m0.hwm, m1.hwm)) * pageSize; size < need {
		return fmt.Errorf("%w: %s is truncated: %d bytes, its pages need %d. %s", ErrDamaged, path, size, need, restoreHint)
	}
	return nil
}

// checkPages walks every page of the database (bbolt's consistency check),
// with memory faults turned into errors, so corruption inside the file is
// found at start rather than as a crash in the middle of a request.
func checkPages(db *bolt.DB, path string) error {
	err := safely(func() error {
		return db.View(func(tx *bolt.Tx) error {
			var errs []error
			for err := range tx.Check() { // drained: the check runs on the transaction until it ends
				if len(errs) < 5 {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		})
	})
	if err != nil {
		return fmt.Errorf("%w: %s fails bbolt's consistency check: %v. %s", ErrDamaged, path, err, restoreHint)
	}
	return nil
}

var errReadFailed = errors.New("reading the database failed")

// damaged tells whether an error of bbolt's Open is about the file's
// contents.
func damaged(err error) bool {
	return errors.Is(err, errReadFailed) || errors.Is(err, bolterr.ErrInvalid) || errors.Is(err, bolterr.ErrChecksum) || errors.Is(err, bolterr.ErrVersionMismatch)
}

// safely runs fn with a panic, or a memory fault on the mapped file (a
// truncated or unreadable page), turned into an error.
func safely(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errReadFailed, p)
		}
	}()
	return fn()
}

const metaKeyCheck = "secret-key-check"

// KeyCheck is the check value that binds the secret key to this database,
// nil if none was stored yet.
func (s *Store) KeyCheck() (check []byte, err error) {
	err = s.View(func(tx Txn) error {
		if v := tx.Meta(metaKeyCheck); v != nil {
			check = append([]byte(nil), v...)
		}
		return nil
	})
	return check, err
}

// SetKeyCheck stores the check value of the secret key. It is written
// directly, at start, before anything else writes.
func (s *Store) SetKeyCheck(check []byte) error {
	return s.db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bMeta).Put([]byte(metaKeyCheck), check)
	})
}
