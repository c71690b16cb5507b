package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// Record is one stored config object. Public and Sealed point into the
// database's memory map when read: they are valid only inside the
// transaction that read them.
type Record struct {
	Kind      string
	Key       string
	ID        uuid.UUID
	Seq       uint64 // creation order, assigned by Put
	CreateRev uint64
	ModRev    uint64 // the revision that last changed the object (its ETag)
	Public    []byte // the object as JSON, write-only fields blanked
	Sealed    []byte // the write-only fields, encrypted; nil when none
}

// Ref names an object that another object refers to.
type Ref struct{ Kind, Key string }

const recordHeader = 1 + 8 + 8 + 8 + 16 + 4

func encodeRecord(r *Record) []byte {
	b := make([]byte, recordHeader, recordHeader+len(r.Public)+len(r.Sealed))
	b[0] = 1 // format version
	binary.BigEndian.PutUint64(b[1:], r.Seq)
	binary.BigEndian.PutUint64(b[9:], r.CreateRev)
	binary.BigEndian.PutUint64(b[17:], r.ModRev)
	copy(b[25:41], r.ID[:])
	binary.BigEndian.PutUint32(b[41:], uint32(len(r.Public)))
	b = append(b, r.Public...)
	return append(b, r.Sealed...)
}

// DamagedError is a stored object's record that does not read: its
// header or its length is not what swmgr writes. Seq is its place in its
// kind's creation order when a List met it (0 otherwise), so that a reader
// can go on past it.
type DamagedError struct {
	Kind, Key string
	Seq       uint64
	What      string // what is wrong with it
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the stored record of %s %q is damaged: %s", e.Kind, e.Key, e.What)
}

func decodeRecord(kind, key string, b []byte) (Record, error) {
	if len(b) < recordHeader || b[0] != 1 {
		return Record{}, &DamagedError{Kind: kind, Key: key, What: "bad header"}
	}
	r := Record{Kind: kind, Key: key}
	r.Seq = binary.BigEndian.Uint64(b[1:])
	r.CreateRev = binary.BigEndian.Uint64(b[9:])
	r.ModRev = binary.BigEndian.Uint64(b[17:])
	copy(r.ID[:], b[25:41])
	n := int(binary.BigEndian.Uint32(b[41:]))
	if len(b) < recordHeader+n {
		return Record{}, &DamagedError{Kind: kind, Key: key, What: fmt.Sprintf("truncated (%d bytes, its header says %d)", len(b), recordHeader+n)}
	}
	r.Public = b[recordHeader : recordHeader+n]
	if len(b) > recordHeader+n {
		r.Sealed = b[recordHeader+n:]
	}
	return r, nil
}

// Tx is a transaction. Write methods are only valid inside Update.
type Tx struct {
	btx       *bolt.Tx
	writable  bool
	revisions int // NextRevision calls: the commits of a write transaction
	puts      int // objects written (Put)

	// The buckets, looked up once: a read transaction's Bucket lookup
	// searches the root and allocates the bucket each time.
	buckets [nBuckets]*bolt.Bucket

	// The counters a write transaction advances with every commit, object
	// and log entry (meta rev and seq; logmeta seq, n and nfailed), read
	// once and written once when the transaction ends (flush): each Put
	// is a B-tree search, and a group commit of 64 creates would otherwise
	// write each counter 64 times.
	counters [nCounters]counter

	// Trimming a write transaction leaves to its end (trimHistory): the
	// revision records past MaxRevisions and the config log's oldest
	// entries go in one walk each, not one search and delete per commit
	// and entry of the batch. What is stored at the commit is the same.
	trimRevs uint64 // the newest revision record put (0: none)
	logDrop  uint64 // the log's oldest entries to delete, all successes (see appendLog)

	// A bulk write's objects (bulk.go): the object buckets are the staging
	// area's (staged), only object writes are allowed (objectsOnly), and the
	// transaction is committed and begun again on db every BulkChunk
	// object writes (chunk counts them).
	staged, objectsOnly bool
	db                  *bolt.DB
	chunk               int
}

// Bucket indexes of Tx.buckets.
const (
	iMeta = iota
	iObj
	iOrd
	iIDs
	iRefs
	iRevs
	iLog
	iLogMeta
	iCands
	nBuckets
)

var bucketNames = [nBuckets][]byte{bMeta, bObj, bOrd, bIDs, bRefs, bRevs, bLog, bLogMeta, bCands}

func (tx *Tx) bucket(i int) *bolt.Bucket {
	b := tx.buckets[i]
	if b == nil {
		if tx.staged && isObjectBucket(i) {
			b = tx.btx.Bucket(bStage).Bucket(bucketNames[i])
		} else {
			b = tx.btx.Bucket(bucketNames[i])
		}
		if tx.writable && appendOnly[i] {
			b.FillPercent = appendFill
		}
		tx.buckets[i] = b
	}
	return b
}

// appendOnly are the buckets whose new keys come after the others (the
// creation order, ObjectIds that rise with time, revisions, log entries).
// bbolt splits a full page in halves (FillPercent 0.5), which leaves every
// page of such a bucket half empty, to be written again by the next
// commits; split nearly full instead, a commit writes about half as many
// pages. It changes where bbolt cuts its pages, nothing stored.
var appendOnly = [nBuckets]bool{iOrd: true, iIDs: true, iRevs: true, iLog: true}

const appendFill = 0.95

// counter is a uint64 value of a bucket that a write transaction keeps in
// memory until flush.
type counter struct {
	val           uint64
	loaded, dirty bool
	absent        bool // not stored (and not set): a read returns nil
}

// Counter indexes of Tx.counters and where each is stored.
const (
	cRev = iota
	cSeq
	cLogSeq
	cLogN
	cLogFailed
	nCounters
)

var counterPlaces = [nCounters]struct {
	bucket int
	key    []byte
}{
	cRev:       {iMeta, kRev},
	cSeq:       {iMeta, kSeq},
	cLogSeq:    {iLogMeta, kSeq},
	cLogN:      {iLogMeta, kLogN},
	cLogFailed: {iLogMeta, kLogFailed},
}

// counterOf returns the counter stored in bucket under key, or -1.
func counterOf(bucket int, key []byte) int {
	for i, p := range counterPlaces {
		if p.bucket == bucket && bytes.Equal(p.key, key) {
			return i
		}
	}
	return -1
}

// get returns counter i: from memory in a write transaction once read.
func (tx *Tx) get(i int) uint64 {
	c := &tx.counters[i]
	if !tx.writable {
		return u64(tx.bucket(counterPlaces[i].bucket).Get(counterPlaces[i].key))
	}
	if !c.loaded {
		v := tx.bucket(counterPlaces[i].bucket).Get(counterPlaces[i].key)
		c.val, c.absent, c.loaded = u64(v), v == nil, true
	}
	return c.val
}

// set changes counter i, written by flush.
func (tx *Tx) set(i int, v uint64) {
	tx.counters[i] = counter{val: v, loaded: true, dirty: true}
}

// raw returns counter i as its stored bytes would be.
func (tx *Tx) raw(i int) []byte {
	if !tx.writable || !tx.counters[i].loaded {
		return tx.bucket(counterPlaces[i].bucket).Get(counterPlaces[i].key)
	}
	if tx.counters[i].absent {
		return nil
	}
	return be(tx.counters[i].val)
}

// flush trims the history and writes the counters a write transaction
// changed.
func (tx *Tx) flush() {
	tx.trimHistory()
	for i := range tx.counters {
		c := &tx.counters[i]
		if c.dirty {
			must(tx.bucket(counterPlaces[i].bucket).Put(counterPlaces[i].key, be(c.val)))
			c.dirty = false
		}
	}
}

// Meta returns a value of the meta bucket.
func (tx *Tx) Meta(name string) []byte {
	if i := counterOf(iMeta, []byte(name)); i >= 0 {
		return tx.raw(i)
	}
	return tx.bucket(iMeta).Get([]byte(name))
}

// SetMeta sets (or with nil, deletes) a value of the meta bucket.
func (tx *Tx) SetMeta(name string, value []byte) {
	tx.mustWrite()
	if i := counterOf(iMeta, []byte(name)); i >= 0 {
		tx.counters[i] = counter{} // written through: read it again from the bucket
	}
	if value == nil {
		must(tx.bucket(iMeta).Delete([]byte(name)))
		return
	}
	must(tx.bucket(iMeta).Put([]byte(name), value))
}

// Objects and the creation order live in two flat buckets keyed by kind:
// obj: kind NUL key, ord: kind NUL seq. Nested buckets would cost an
// allocation per lookup in a read transaction.

func objKey(kind, key string) []byte {
	b := make([]byte, 0, len(kind)+1+len(key))
	b = append(b, kind...)
	b = append(b, 0)
	return append(b, key...)
}

func ordKey(kind string, seq uint64) []byte {
	b := make([]byte, len(kind)+1+8)
	copy(b, kind)
	binary.BigEndian.PutUint64(b[len(kind)+1:], seq)
	return b
}

// Revision returns the number of the last commit.
func (tx *Tx) Revision() uint64 { return tx.get(cRev) }

// Get returns the object of kind with key.
func (tx *Tx) Get(kind, key string) (Record, bool, error) {
	v := tx.bucket(iObj).Get(objKey(kind, key))
	if v == nil {
		return Record{}, false, nil
	}
	r, err := decodeRecord(kind, key, v)
	return r, err == nil, err
}

// GetByID returns the object with ObjectId id.
func (tx *Tx) GetByID(id uuid.UUID) (Record, bool, error) {
	v := tx.bucket(iIDs).Get(id[:])
	if v == nil {
		return Record{}, false, nil
	}
	kind, key, ok := bytes.Cut(v, []byte{0})
	if !ok {
		return Record{}, false, fmt.Errorf("id index entry %s is corrupt", id)
	}
	rec := tx.bucket(iObj).Get(v) // the id index value is the object's key
	if rec == nil {
		return Record{}, false, fmt.Errorf("id index entry %s names a missing object", id)
	}
	r, err := decodeRecord(string(kind), string(key), rec)
	return r, err == nil, err
}

// List calls fn for up to count objects of kind in creation order, starting
// at marker (0 for the first page). It returns the marker of the next page
// and whether more objects follow. A record that does not read stops it
// with a *DamagedError naming the record and its place (Seq): the list
// goes on from Seq+1.
func (tx *Tx) List(kind string, marker uint64, count int, fn func(Record) error) (next uint64, more bool, err error) {
	obj := tx.bucket(iObj)
	prefix := len(kind) + 1
	c := tx.bucket(iOrd).Cursor()
	next = marker
	n := 0
	for k, v := c.Seek(ordKey(kind, marker)); k != nil && len(k) == prefix+8 && string(k[:len(kind)]) == kind && k[len(kind)] == 0; k, v = c.Next() {
		if n == count {
			return next, true, nil
		}
		r, err := decodeRecord(kind, string(v), obj.Get(objKey(kind, string(v))))
		if d := (*DamagedError)(nil); errors.As(err, &d) {
			d.Seq = u64(k[prefix:])
		}
		if err != nil {
			return next, false, err
		}
		if err := fn(r); err != nil {
			return next, false, err
		}
		next = u64(k[prefix:]) + 1
		n++
	}
	return next, false, nil
}

// Referrers lists the objects that refer to kind/key.
func (tx *Tx) Referrers(kind, key string) []Ref {
	prefix := []byte(kind + "\x00" + key + "\x00")
	var out []Ref
	c := tx.bucket(iRefs).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		src, srcKey, _ := bytes.Cut(k[len(prefix):], []byte{0})
		out = append(out, Ref{Kind: string(src), Key: string(srcKey)})
	}
	return out
}

func (tx *Tx) mustWrite() {
	tx.mustWriteObjects()
	if tx.objectsOnly {
		panic("store: a bulk write's objects may only write objects")
	}
}

// mustWriteObjects allows the writes of a bulk write's objects too.
func (tx *Tx) mustWriteObjects() {
	if !tx.writable {
		panic("store: write in a read-only transaction")
	}
}

// NextRevision assigns the next global revision number.
func (tx *Tx) NextRevision() uint64 {
	tx.mustWriteObjects()
	rev := tx.Revision() + 1
	tx.set(cRev, rev)
	tx.revisions++
	return rev
}

// Put stores r, replacing the object with the same kind and key, which
// keeps its creation sequence, creation revision and ObjectId. A new object
// gets the next creation sequence, r.ModRev as its creation revision, and
// its id is indexed. The reference index moves from oldRefs to newRefs.
// r.Public and r.Sealed then point into the stored value (the same bytes,
// held once).
func (tx *Tx) Put(r *Record, oldRefs, newRefs []Ref) error {
	tx.mustWriteObjects()
	ok := objKey(r.Kind, r.Key)
	obj := tx.bucket(iObj)
	if old := obj.Get(ok); old != nil {
		prev, err := decodeRecord(r.Kind, r.Key, old)
		if err != nil {
			return err
		}
		r.Seq, r.CreateRev, r.ID = prev.Seq, prev.CreateRev, prev.ID
	} else {
		r.CreateRev = r.ModRev
		r.Seq = tx.get(cSeq) + 1
		tx.set(cSeq, r.Seq)
		must(tx.bucket(iOrd).Put(ordKey(r.Kind, r.Seq), []byte(r.Key)))
		must(tx.bucket(iIDs).Put(r.ID[:], ok))
	}
	v := encodeRecord(r)
	must(obj.Put(ok, v))
	// The caller's copies can go: bbolt keeps v until the commit.
	r.Public = v[recordHeader : recordHeader+len(r.Public)]
	if r.Sealed != nil {
		r.Sealed = v[recordHeader+len(r.Public):]
	}
	tx.moveRefs(r.Kind, r.Key, oldRefs, newRefs)
	tx.wrote(true)
	return nil
}

// Delete removes the object of r.Kind and r.Key and its index entries,
// including its references.
func (tx *Tx) Delete(r Record, refs []Ref) error {
	tx.mustWriteObjects()
	obj, ok := tx.bucket(iObj), objKey(r.Kind, r.Key)
	old := obj.Get(ok)
	if old == nil {
		return errors.New("store: delete of a missing object")
	}
	prev, err := decodeRecord(r.Kind, r.Key, old)
	if err != nil {
		return err
	}
	r.Seq, r.ID = prev.Seq, prev.ID
	must(obj.Delete(ok))
	must(tx.bucket(iOrd).Delete(ordKey(r.Kind, r.Seq)))
	must(tx.bucket(iIDs).Delete(r.ID[:]))
	tx.moveRefs(r.Kind, r.Key, refs, nil)
	tx.wrote(false)
	return nil
}

// Rekey moves the object of kind stored under oldKey to newKey, keeping its
// ObjectId, creation sequence and revisions; refs are the references it
// makes, re-indexed under the new key. The caller makes sure nothing refers
// to the object by its old key (a schema migration of a kind that no field
// references).
func (tx *Tx) Rekey(kind, oldKey, newKey string, refs []Ref) error {
	tx.mustWriteObjects()
	obj := tx.bucket(iObj)
	raw := obj.Get(objKey(kind, oldKey))
	if raw == nil {
		return fmt.Errorf("store: rekey of a missing %s %q", kind, oldKey)
	}
	if obj.Get(objKey(kind, newKey)) != nil {
		return fmt.Errorf("store: rekey of %s %q: %q exists", kind, oldKey, newKey)
	}
	r, err := decodeRecord(kind, oldKey, raw)
	if err != nil {
		return err
	}
	val := append([]byte(nil), raw...)
	must(obj.Delete(objKey(kind, oldKey)))
	must(obj.Put(objKey(kind, newKey), val))
	must(tx.bucket(iOrd).Put(ordKey(kind, r.Seq), []byte(newKey)))
	must(tx.bucket(iIDs).Put(r.ID[:], objKey(kind, newKey)))
	tx.moveRefs(kind, oldKey, refs, nil)
	tx.moveRefs(kind, newKey, nil, refs)
	tx.wrote(false)
	return nil
}

func (tx *Tx) moveRefs(kind, key string, old, new []Ref) {
	refs := tx.bucket(iRefs)
	src := "\x00" + kind + "\x00" + key
	for _, t := range old {
		must(refs.Delete([]byte(t.Kind + "\x00" + t.Key + src)))
	}
	for _, t := range new {
		must(refs.Put([]byte(t.Kind+"\x00"+t.Key+src), nil))
	}
}

// PutRevision stores the record of a revision; the oldest beyond
// MaxRevisions are dropped when the transaction ends.
func (tx *Tx) PutRevision(rev uint64, data []byte) {
	tx.mustWrite()
	if len(data) > 0 && data[0] == deflatedRecord {
		// From here on the store needs a binary that inflates records.
		if meta := tx.bucket(iMeta); formatOf(meta) < 2 {
			must(meta.Put(kFormat, be(2)))
		}
	}
	must(tx.bucket(iRevs).Put(be(rev), data))
	tx.trimRevs = max(tx.trimRevs, rev)
}

// trimHistory drops what the transaction's revision records and log
// entries pushed out of the history; reads in a write transaction call it
// first, so that they see what the commit will store.
func (tx *Tx) trimHistory() {
	if !tx.writable {
		return
	}
	if tx.trimRevs != 0 {
		trim(tx.bucket(iRevs), tx.trimRevs, MaxRevisions)
		tx.trimRevs = 0
	}
	tx.dropLog()
}

// dropLog deletes the log entries appendLog left to trimHistory.
func (tx *Tx) dropLog() {
	if tx.logDrop != 0 {
		b := tx.bucket(iLog)
		var old [][]byte // collected first: deleting under a bbolt cursor makes Next skip keys
		c := b.Cursor()
		for k, _ := c.First(); k != nil && uint64(len(old)) < tx.logDrop; k, _ = c.Next() {
			old = append(old, append([]byte(nil), k...))
		}
		for _, k := range old {
			must(b.Delete(k))
		}
		tx.logDrop = 0
	}
}

// GetRevision returns the stored record of revision rev (inflated when it
// was stored deflated: see RecordBuilder).
func (tx *Tx) GetRevision(rev uint64) []byte {
	tx.trimHistory()
	return plainRecord(tx.bucket(iRevs).Get(be(rev)))
}

// RevisionReader reads the record of revision rev as JSON, inflating a
// deflated one as it goes (a restore's is ~37 MiB: its reader need not hold
// it whole); nil when there is none. size is its length. It reads the
// database's memory: only inside the transaction.
func (tx *Tx) RevisionReader(rev uint64) (r io.Reader, size int) {
	tx.trimHistory()
	data := tx.bucket(iRevs).Get(be(rev))
	if data == nil {
		return nil, 0
	}
	return recordReader(data)
}

// Revisions calls fn for up to count revision records, newest first, starting
// below marker (0 means from the newest). It returns the next marker.
func (tx *Tx) Revisions(marker uint64, count int, fn func(rev uint64, data []byte) error) (next uint64, more bool, err error) {
	tx.trimHistory()
	return walkDown(tx.bucket(iRevs), marker, count, func(rev uint64, data []byte) error { return fn(rev, plainRecord(data)) })
}

// AppendLog adds a config log entry of a successful request; build
// receives the entry's SeqNum.
func (tx *Tx) AppendLog(build func(seq uint64) []byte) uint64 { return tx.appendLog(build, false) }

// AppendFailedLog adds a config log entry of a failed request. Once the
// log is full, failures past MaxLogFailures replace the oldest failure
// rather than the oldest entry.
func (tx *Tx) AppendFailedLog(build func(seq uint64) []byte) uint64 { return tx.appendLog(build, true) }

func (tx *Tx) appendLog(build func(seq uint64) []byte, failed bool) uint64 {
	tx.mustWrite()
	meta := tx.bucket(iLogMeta)
	b := tx.bucket(iLog)
	n, nFailed := tx.logCounts()
	seq := tx.get(cLogSeq) + 1
	tx.set(cLogSeq, seq)
	must(b.Put(be(seq), build(seq)))
	n++
	if !failed && nFailed == 0 && n > MaxLogEntries {
		// A log without failures drops its oldest entries, all
		// successes, whatever the order: at the end of the transaction
		// (trimHistory), as this loop would have one by one.
		tx.logDrop += n - MaxLogEntries
		n = MaxLogEntries
	} else {
		tx.dropLog() // the rule for failures needs the log as it is
	}
	if failed {
		must(meta.Put(failedKey(seq), []byte{}))
		nFailed++
	}
	for n > MaxLogEntries {
		var oldest []byte
		if nFailed > MaxLogFailures {
			k, _ := meta.Cursor().Seek(kFailed)
			oldest = append([]byte(nil), k[len(kFailed):]...)
		} else {
			k, _ := b.Cursor().First()
			oldest = append([]byte(nil), k...)
		}
		must(b.Delete(oldest))
		if fk := failedKey(u64(oldest)); nFailed > 0 && meta.Get(fk) != nil {
			must(meta.Delete(fk))
			nFailed--
		}
		n--
	}
	tx.set(cLogN, n)
	tx.set(cLogFailed, nFailed)
	return seq
}

func failedKey(seq uint64) []byte { return append(append([]byte(nil), kFailed...), be(seq)...) }

// logCounts returns the number of log entries and of failed ones,
// counting them once in a log written before the counts were kept.
func (tx *Tx) logCounts() (n, nFailed uint64) {
	if tx.raw(cLogN) != nil {
		return tx.get(cLogN), tx.get(cLogFailed)
	}
	n = uint64(tx.bucket(iLog).Stats().KeyN)
	c := tx.bucket(iLogMeta).Cursor()
	for k, _ := c.Seek(kFailed); k != nil && bytes.HasPrefix(k, kFailed); k, _ = c.Next() {
		nFailed++
	}
	return n, nFailed
}

// ClearLog removes every config log entry; SeqNum keeps counting.
func (tx *Tx) ClearLog() {
	tx.mustWrite()
	tx.logDrop = 0 // the whole bucket goes
	must(tx.btx.DeleteBucket(bLog))
	_, err := tx.btx.CreateBucket(bLog)
	must(err)
	tx.buckets[iLog] = nil // the new one
	meta := tx.bucket(iLogMeta)
	var failed [][]byte
	c := meta.Cursor()
	for k, _ := c.Seek(kFailed); k != nil && bytes.HasPrefix(k, kFailed); k, _ = c.Next() {
		failed = append(failed, append([]byte(nil), k...))
	}
	for _, k := range failed {
		must(meta.Delete(k))
	}
	tx.set(cLogN, 0)
	tx.set(cLogFailed, 0)
}

// Log calls fn for up to count config log entries, oldest first, starting at
// marker.
func (tx *Tx) Log(marker uint64, count int, fn func(seq uint64, entry []byte) error) (next uint64, more bool, err error) {
	tx.trimHistory()
	c := tx.bucket(iLog).Cursor()
	next, n := marker, 0
	for k, v := c.Seek(be(marker)); k != nil; k, v = c.Next() {
		if n == count {
			return next, true, nil
		}
		if err := fn(u64(k), v); err != nil {
			return next, false, err
		}
		next = u64(k) + 1
		n++
	}
	return next, false, nil
}

// LogEntry returns one config log entry by SeqNum.
func (tx *Tx) LogEntry(seq uint64) []byte {
	tx.trimHistory()
	return tx.bucket(iLog).Get(be(seq))
}

// trim keeps the newest keep entries of a bucket whose keys are sequence
// numbers up to last.
func trim(b *bolt.Bucket, last uint64, keep uint64) {
	if last <= keep {
		return
	}
	// Collect first: deleting under a bbolt cursor makes Next skip keys.
	var old [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && u64(k) <= last-keep; k, _ = c.Next() {
		old = append(old, append([]byte(nil), k...))
	}
	for _, k := range old {
		must(b.Delete(k))
	}
}

func walkDown(b *bolt.Bucket, marker uint64, count int, fn func(uint64, []byte) error) (uint64, bool, error) {
	c := b.Cursor()
	var k, v []byte
	switch {
	case marker == 0:
		k, v = c.Last()
	default:
		// The newest key below marker.
		if k, _ = c.Seek(be(marker)); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	next, n := marker, 0
	for ; k != nil; k, v = c.Prev() {
		if n == count {
			return next, true, nil
		}
		if err := fn(u64(k), v); err != nil {
			return next, false, err
		}
		next = u64(k)
		n++
	}
	return next, false, nil
}

// must panics on a bbolt error that can only come from a bug (a write to a
// read-only transaction, an empty key); Update turns the panic into an
// error and rolls back.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
