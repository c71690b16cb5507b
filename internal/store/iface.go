package store

import (
	"io"

	"github.com/google/uuid"
)

// Config is what swmgr needs of a configuration store, and all the engine
// uses: the bbolt Store implements it, and a replicated store (etcd, or a
// raft log over bbolt) can implement it too. What it promises:
//
//   - Atomic batch with a revision. Update runs fn as one transaction: every
//     write fn makes is kept, or (fn fails, the write fails) none is. Each
//     NextRevision inside it takes the next revision number, gapless and
//     increasing across the store's life; Update returns only once the
//     batch is durable (bbolt: fdatasync; replicated: committed by a
//     quorum). There is one writer at a time: the engine's writer loop.
//   - Consistent reads at a revision. View runs fn on a snapshot: every read
//     of fn sees the store as of one revision (Txn.Revision), never a part
//     of a later batch, however long fn runs, and without holding up Update.
//   - Ordered history from a revision. Every batch that took revisions
//     stores one revision record per revision (PutRevision); GetRevision
//     and Revisions read them back in revision order, the last MaxRevisions
//     kept. The engine's change feed is this history read from the
//     subscriber's revision up to the snapshot, then the writer's own
//     commits in order (see engine/feed): an ordered watch from a
//     revision. A replicated store whose members accept writes of their
//     own would add Watch(from) here, fed by its log, and the feed would
//     take its live part from it.
//   - Bulk writes. Bulk is Update for a batch of many object writes (a
//     restore's 300,000): objects writes them, and may take revisions, in
//     pieces of bounded size that no reader sees (bbolt: a staging area
//     written in several transactions); rest writes the rest of the batch in
//     the one transaction that makes the objects visible. The same promise
//     as Update: all or nothing, durable on return, readers see the old
//     objects or the new ones.
type Config interface {
	View(fn func(tx Txn) error) error
	Update(fn func(tx Txn) error) error
	Bulk(objects func(tx Txn) error, rest func(tx Txn) error) error
	Close() error
}

// Txn is one transaction of a Config: a snapshot in View, the batch in
// Update. Write methods may only be called in Update (they panic in View,
// which Update turns into its error); values read are valid only until fn
// returns.
type Txn interface {
	// The snapshot's revision, and the metadata the engine keeps (schema
	// digest, pending confirmation, secret key check).
	Revision() uint64
	Meta(name string) []byte
	SetMeta(name string, value []byte)

	// Objects, by kind and key, by ObjectId, in creation order (paged by
	// a marker that survives creations and deletions), and the index of
	// references between them.
	Get(kind, key string) (Record, bool, error)
	GetByID(id uuid.UUID) (Record, bool, error)
	List(kind string, marker uint64, count int, fn func(Record) error) (next uint64, more bool, err error)
	Referrers(kind, key string) []Ref
	Put(r *Record, oldRefs, newRefs []Ref) error
	Delete(r Record, refs []Ref) error
	// Rekey moves an object to a new key (a migration that changed a
	// kind's keys), keeping its ObjectId and creation order.
	Rekey(kind, oldKey, newKey string, refs []Ref) error

	// Revisions: NextRevision takes the next number for a commit of this
	// batch; its record is stored with PutRevision.
	NextRevision() uint64
	PutRevision(rev uint64, data []byte)
	GetRevision(rev uint64) []byte
	// RevisionReader streams a record (nil when there is none), so that a
	// large one (a restore's) is not held whole by its reader.
	RevisionReader(rev uint64) (r io.Reader, size int)
	Revisions(marker uint64, count int, fn func(rev uint64, data []byte) error) (next uint64, more bool, err error)

	// The config log (bounded, its sequence never reused).
	AppendLog(build func(seq uint64) []byte) uint64
	// AppendFailedLog appends a refused write's entry: once the log is
	// full, failures past MaxLogFailures replace older failures, so a
	// flood of refused writes cannot push the successful changes out.
	AppendFailedLog(build func(seq uint64) []byte) uint64
	ClearLog()
	Log(marker uint64, count int, fn func(seq uint64, entry []byte) error) (next uint64, more bool, err error)
	LogEntry(seq uint64) []byte

	// Candidates: metadata and an append-only list of sealed edits each.
	PutCandidate(id string, meta []byte)
	Candidate(id string) []byte
	AppendCandidateEdit(id string, edit []byte)
	CandidateEditCount(id string) int
	CandidateEdits(id string, fn func(edit []byte) error) error
	DeleteCandidate(id string)
	Candidates(fn func(id string, meta []byte) error) error
}

var (
	_ Config = (*Store)(nil)
	_ Txn    = (*Tx)(nil)
)
