package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// The revision record: every commit is stored as one record (written by
// write, in write.go, in the store write of its batch), which the history
// (package history: revisions, rollback, confirmation), the change feed and
// the conflict check of a commit based on an older revision read. Its
// format is the core's, since the core writes it.

// Revision is one commit as clients see it.
type Revision struct {
	Revision uint64
	Time     string
	User     string
	Source   string // rest, cli, rollback, confirm-timeout, system, reset, restore, startup
	Comment  string
	Changes  []Diff
}

// Diff is one object's change (declared with the model, which every
// front door and provider shares).
type Diff = model.Diff

// StoredDiff keeps the secrets too, sealed, so that a rollback can restore
// them. It is never sent to clients.
type StoredDiff struct {
	Diff
	StoreKey     string
	BeforeSealed []byte `json:",omitempty"`
	AfterSealed  []byte `json:",omitempty"`
}

// StoredRevision is a revision record as stored: with its StoredDiffs and
// the schema version its objects are in.
type StoredRevision struct {
	Revision
	// Schema is the schema version (model.SchemaVersion) the record's
	// objects were written in; 0 in a record written before records held
	// it (Version).
	Schema  int `json:"SchemaVersion,omitempty"`
	Changes []StoredDiff
}

// Version is the schema version the record's objects are in: a record
// without one predates version 2 (model.UnversionedSchema).
func (r *StoredRevision) Version() int {
	return max(r.Schema, model.UnversionedSchema)
}

// RevisionObject rebuilds the full state (secrets included) of one side of
// a diff of the stored revision record r (before: the state the change
// found) in the current form: the migrations declared since the version
// r was written in run over it, its sealed fields opened for them in
// memory only (upgrade).
func (e *Engine) RevisionObject(k *model.Kind, r *StoredRevision, d StoredDiff, before bool) (model.Object, error) {
	raw, sealed := d.After, d.AfterSealed
	if before {
		raw, sealed = d.Before, d.BeforeSealed
	}
	var sec map[string]string
	if len(sealed) > 0 {
		id, err := ParseObjectID(d.ObjectId)
		if err != nil {
			return nil, err
		}
		if sec, err = e.openSecrets(k, id, sealed); err != nil {
			return nil, fmt.Errorf("revision %d, %s %s: %w", r.Revision.Revision, k.Name, d.Key, err)
		}
	}
	given, err := upgrade(k, raw, sec, true, e.reg.MigrationsOf(k.Name, r.Version()))
	if err != nil {
		return nil, fmt.Errorf("revision %d, %s %s, in schema version %d: %w", r.Revision.Revision, k.Name, d.Key, e.reg.SchemaVersion(), err)
	}
	return k.WithDefaults(given), nil
}

func (e *Engine) diff(c *change) Diff {
	k := c.Kind
	d := Diff{Kind: k.Name, Key: k.DescribeKey(c.Key), ObjectId: c.id.String(), Op: c.Op.String()}
	if c.Before != nil {
		d.Before = k.AppendRedactedJSON(nil, c.Before)
	}
	if c.After != nil && c.Op != model.Delete {
		d.After = k.AppendRedactedJSON(nil, c.After)
	}
	return d
}

func (e *Engine) diffs(changes []*change) []Diff {
	out := make([]Diff, len(changes))
	for i, c := range changes {
		out[i] = e.diff(c)
	}
	return out
}

// DecodeStoredRevision reads a stored revision record.
func DecodeStoredRevision(data []byte) (*StoredRevision, error) {
	var r StoredRevision
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("stored revision: %w", err)
	}
	return &r, nil
}

// PublicRevision re-encodes a stored revision record without its sealed
// secrets.
func PublicRevision(data []byte) ([]byte, error) {
	if out, ok := streamPublicRevision(nil, bytes.NewReader(data), len(data)); ok {
		return out, nil
	}
	r, err := DecodeStoredRevision(data)
	if err != nil {
		return nil, err
	}
	r.Revision.Changes = make([]Diff, len(r.Changes))
	for i, d := range r.Changes {
		r.Revision.Changes[i] = d.Diff
	}
	return json.Marshal(r.Revision)
}

// ReadPublicRevision returns revision rev of tx as clients see it (nil when
// it is not kept), streaming a record of the shape write makes: a
// restore's holds 100,000 changes, which neither the inflated record nor
// its decoded changes then hold whole (streamPublicRevision).
func ReadPublicRevision(tx store.Txn, rev uint64) ([]byte, error) {
	return appendPublicRevision(nil, tx, rev)
}

// appendPublicRevision is ReadPublicRevision appending to dst (nil when
// the revision is not kept).
func appendPublicRevision(dst []byte, tx store.Txn, rev uint64) ([]byte, error) {
	r, size := tx.RevisionReader(rev)
	if pub, ok := streamPublicRevision(dst, r, size); ok {
		return pub, nil
	}
	data := tx.GetRevision(rev)
	if data == nil {
		return nil, nil
	}
	pub, err := PublicRevision(data)
	if err != nil {
		return nil, err
	}
	return append(dst, pub...), nil
}

// checkConflicts refuses a commit that changes an object some other commit
// changed after base.
func (v *view) checkConflicts(base uint64, changes []*change) error {
	tx := v.tx
	cur := tx.Revision()
	if v.revision() <= base {
		return nil
	}
	mine := map[string]bool{}
	for _, c := range changes {
		mine[c.Kind.Name+"\x00"+c.Key] = true
	}
	var clash []string
	seen := map[string]bool{}
	for id, rev := range v.touched {
		if mine[id] && rev > base {
			seen[id] = true
			kind, key, _ := strings.Cut(id, "\x00")
			clash = append(clash, fmt.Sprintf("%s %s (revision %d)", kind, key, rev))
		}
	}
	for rev := base + 1; rev <= cur; rev++ {
		data := tx.GetRevision(rev)
		if data == nil {
			return apierr.Conflict(apierr.CodeConflict, "", "the candidate is based on revision %d, older than the revisions kept; commit with Force, or start a new candidate", base)
		}
		r, err := DecodeStoredRevision(data)
		if err != nil {
			return err
		}
		for _, d := range r.Changes {
			key := d.StoreKey
			if k := v.e.reg.Lookup(model.Config, d.Kind); k != nil {
				key = v.e.RevisionKey(k, r, d)
			}
			id := d.Kind + "\x00" + key
			if mine[id] && !seen[id] {
				seen[id] = true
				clash = append(clash, fmt.Sprintf("%s %s (revision %d by %q)", d.Kind, d.Key, rev, r.User))
			}
		}
	}
	if len(clash) > 0 {
		return apierr.Conflict(apierr.CodeConflict, "", "since revision %d, other commits changed objects this commit changes: %s; review and commit again with Force to overwrite them", base, joinList(clash))
	}
	return nil
}

func joinList(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// RevisionKey is the store key the object of a diff of the stored
// revision record r has under the current model: a record written before
// a key field was added to its kind (BGPv4Neighbor's IntfRef), or before a
// migration that changes a key field, names it by its old key, which the
// start's migration has since changed.
func (e *Engine) RevisionKey(k *model.Kind, r *StoredRevision, d StoredDiff) string {
	steps := e.reg.MigrationsOf(k.Name, r.Version())
	if len(steps) == 0 && strings.Count(d.StoreKey, "\x00")+1 == len(k.Keys()) {
		return d.StoreKey
	}
	raw := d.After
	if raw == nil {
		raw = d.Before
	}
	given, err := upgrade(k, raw, nil, true, steps)
	if err != nil {
		return d.StoreKey
	}
	return k.Key(k.WithDefaults(given))
}

// revisionEvent is what the change feed gets of a commit: the revision
// record as clients see it. It is encoded after the store write (not
// during it, beside the write's own buffers), from the commit's diffs.
type revisionEvent struct {
	head    Revision
	size    int
	publics [][]byte // per change, its stored public JSON (nil: encode again), for the cache
}

func (r *revisionEvent) encode(diffs []Diff) []byte {
	public := appendRevisionHead(make([]byte, 0, r.size), &r.head, 0)
	for i := range diffs {
		if i > 0 {
			public = append(public, ',')
		}
		public = appendDiff(public, &diffs[i])
	}
	return append(public, "]}"...)
}

// appendRevisionHead writes a revision record up to the opening bracket of
// its Changes, fields in the order of Revision (as encoding/json would).
func appendRevisionHead(b []byte, r *Revision, schemaVersion int) []byte {
	b = append(b, `{"Revision":`...)
	b = strconv.AppendUint(b, r.Revision, 10)
	b = append(b, `,"Time":`...)
	b = model.AppendJSONString(b, r.Time)
	b = append(b, `,"User":`...)
	b = model.AppendJSONString(b, r.User)
	b = append(b, `,"Source":`...)
	b = model.AppendJSONString(b, r.Source)
	b = append(b, `,"Comment":`...)
	b = model.AppendJSONString(b, r.Comment)
	if schemaVersion > 0 {
		b = append(b, `,"SchemaVersion":`...)
		b = strconv.AppendInt(b, int64(schemaVersion), 10)
	}
	return append(b, `,"Changes":[`...)
}

// appendDiff writes d as encoding/json would (Before and After are JSON
// the model wrote, compact already).
func appendDiff(b []byte, d *Diff) []byte {
	b = append(b, `{"Kind":`...)
	b = model.AppendJSONString(b, d.Kind)
	b = append(b, `,"Key":`...)
	b = model.AppendJSONString(b, d.Key)
	b = append(b, `,"ObjectId":`...)
	b = model.AppendJSONString(b, d.ObjectId)
	b = append(b, `,"Op":`...)
	b = model.AppendJSONString(b, d.Op)
	if len(d.Before) > 0 {
		b = append(b, `,"Before":`...)
		b = append(b, d.Before...)
	}
	if len(d.After) > 0 {
		b = append(b, `,"After":`...)
		b = append(b, d.After...)
	}
	return append(b, '}')
}
