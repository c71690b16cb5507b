package engine

import (
	"errors"
	"slices"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// change is a resolved edit: one object's before and after.
type change struct {
	model.Change
	id        uuid.UUID
	seq       uint64 // creation sequence of an existing object
	createRev uint64
	job       int32 // the request of the batch that made it
	// fresh: a create whose ObjectId the writer made just now, which no
	// edit can name yet: not indexed by ObjectId (view.byID).
	fresh bool
	// prev is the object's pending change this one followed (nil: the
	// store's object): what the view shows again when this one is folded
	// away (see remove).
	prev *change
}

// view is the running configuration as the writer sees it while it
// resolves a batch: the store's read snapshot plus the changes of the
// requests resolved so far. It is also the model.View the check phase reads.
type view struct {
	e       *Engine
	tx      store.Txn
	pending map[string]*change // kind NUL key -> the object's latest change
	// byID indexes pending by ObjectId: the key (kind NUL key) the first
	// change with that id was made under, and in byIDMore any other (an
	// object deleted and created again under another key with its
	// ObjectId: rare, so a restore's 300,000 entries cost no slice each).
	// An entry is a hint checked against pending (undo leaves stale ones),
	// so finding a change by id costs O(1), not a scan of every pending
	// change.
	byID     map[uuid.UUID]string
	byIDMore map[uuid.UUID][]string
	changes  []*change      // the current request's changes
	journal  []journalEntry // to forget a request's changes (mark, undo)
	jobN     int32
	commits  int               // requests of the batch that changed something
	touched  map[string]uint64 // kind NUL key -> revision of the batch that changed it
	prepared any               // what the driver prepared for the create being resolved
	owned    bool              // the request's created objects may be kept as given (Replace)
	checked  model.Object      // the create being resolved, checked ahead (precheckCreates)
	confirm  *Confirmation     // the commit awaiting confirmation, as the batch sees it
}

type journalEntry struct {
	key  string
	prev *change // nil: there was none
}

func newView(e *Engine, tx store.Txn) *view {
	return &view{e: e, tx: tx, pending: map[string]*change{}, byID: map[uuid.UUID]string{}, touched: map[string]uint64{}}
}

// viewMark is a point to return the view to.
type viewMark struct {
	journal, commits int
	confirm          *Confirmation
}

func (v *view) mark() viewMark {
	return viewMark{journal: len(v.journal), commits: v.commits, confirm: v.confirm}
}

// undo forgets everything resolved since m.
func (v *view) undo(m viewMark) {
	for i := len(v.journal) - 1; i >= m.journal; i-- {
		j := v.journal[i]
		if j.prev == nil {
			delete(v.pending, j.key)
		} else {
			v.pending[j.key] = j.prev
		}
	}
	v.journal = v.journal[:m.journal]
	v.commits, v.confirm = m.commits, m.confirm
	v.changes = nil
}

func (v *view) setPending(key string, c *change) {
	v.journal = append(v.journal, journalEntry{key: key, prev: v.pending[key]})
	if c == nil {
		delete(v.pending, key)
		return
	}
	v.pending[key] = c
	switch first, ok := v.byID[c.id]; {
	case c.fresh:
	case !ok:
		v.byID[c.id] = key
	case first != key && !slices.Contains(v.byIDMore[c.id], key):
		if v.byIDMore == nil {
			v.byIDMore = map[uuid.UUID][]string{}
		}
		v.byIDMore[c.id] = append(v.byIDMore[c.id], key)
	}
}

// pendingByID is the pending change of the object with ObjectId id: one
// that keeps the object if there is one, else its deletion; nil when no
// pending change has that id.
func (v *view) pendingByID(id uuid.UUID) *change {
	first, ok := v.byID[id]
	if !ok {
		return nil
	}
	var found *change
	for i, more := -1, v.byIDMore[id]; i < len(more); i++ {
		key := first
		if i >= 0 {
			key = more[i]
		}
		if c := v.pending[key]; c != nil && c.id == id {
			if c.Op != model.Delete {
				return c
			}
			found = c
		}
	}
	return found
}

// beginJob starts resolving the next request of the batch.
func (v *view) beginJob() {
	v.jobN++
	v.changes = nil
}

// endJob records that the request's changes will be a commit. What they
// touched is kept for the conflict check of the requests after it in the
// batch (checkConflicts); a bulk commit has none (runBatch), and its
// 300,000 keys would cost ~20 MiB.
func (v *view) endJob(changes []*change) {
	v.commits++
	if len(changes) >= bulkFrom {
		return
	}
	for _, c := range changes {
		v.touched[c.Kind.Name+"\x00"+c.Key] = v.revision()
	}
}

// revision is the running revision as the batch sees it: the store's plus
// the commits resolved before.
func (v *view) revision() uint64 { return v.tx.Revision() + uint64(v.commits) }

// current is an existing object as the view sees it.
type current struct {
	obj       model.Object
	key       string
	id        uuid.UUID
	seq       uint64
	createRev uint64
	modRev    uint64
}

func (v *view) lookup(k *model.Kind, key string) (*current, error) {
	if c := v.pending[k.Name+"\x00"+key]; c != nil {
		if c.Op == model.Delete {
			return nil, nil
		}
		return &current{obj: c.After, key: key, id: c.id, seq: c.seq, createRev: c.createRev}, nil
	}
	rec, ok, err := v.tx.Get(k.Name, key)
	if err != nil || !ok {
		return nil, err
	}
	return v.fromRecord(k, rec)
}

// Get implements model.View: the object of kind with key in the resulting
// configuration, or nil.
func (v *view) Get(kind, key string) model.Object {
	k := v.e.reg.Lookup(model.Config, kind)
	if k == nil {
		return nil
	}
	cur, err := v.lookup(k, key)
	if err != nil || cur == nil {
		return nil
	}
	return cur.obj
}

// Each implements model.View: every object of kind in the resulting
// configuration, stored ones in creation order, then new ones.
func (v *view) Each(kind string, fn func(key string, o model.Object) bool) error {
	k := v.e.reg.Lookup(model.Config, kind)
	if k == nil {
		return nil
	}
	stop := errors.New("stop")
	err := eachRecord(v.tx, kind, func(rec store.Record) error {
		if c := v.pending[kind+"\x00"+rec.Key]; c != nil {
			if c.Op == model.Delete || !fn(rec.Key, c.After) {
				return nilOr(c.Op == model.Delete, stop)
			}
			return nil
		}
		o, err := v.e.decode(k, rec)
		if err != nil {
			return err
		}
		if !fn(rec.Key, o) {
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range v.pending {
		if c.Kind.Name != kind || c.Op != model.Create {
			continue
		}
		if _, ok, _ := v.tx.Get(kind, c.Key); ok {
			continue // listed above
		}
		if !fn(c.Key, c.After) {
			break
		}
	}
	return nil
}

func nilOr(isNil bool, err error) error {
	if isNil {
		return nil
	}
	return err
}

func (v *view) fromRecord(k *model.Kind, rec store.Record) (*current, error) {
	obj, err := v.e.decode(k, rec)
	if err != nil {
		return nil, err
	}
	return &current{obj: obj, key: rec.Key, id: rec.ID, seq: rec.Seq, createRev: rec.CreateRev, modRev: rec.ModRev}, nil
}

// find resolves a Target to an existing object, or a 404.
func (v *view) find(k *model.Kind, t Target) (*current, error) {
	if t.ID != nil {
		if c := v.pendingByID(*t.ID); c != nil && c.Kind == k && c.Op != model.Delete {
			return v.lookup(k, c.Key)
		}
		rec, ok, err := v.tx.GetByID(*t.ID)
		if err != nil {
			return nil, err
		}
		if !ok || rec.Kind != k.Name {
			return nil, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s has ObjectId %s", k.Name, t.ID)
		}
		if c := v.pending[k.Name+"\x00"+rec.Key]; c != nil && (c.Op == model.Delete || c.id != *t.ID) {
			// Deleted, or deleted and created again with a new ObjectId.
			return nil, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s has ObjectId %s", k.Name, t.ID)
		}
		return v.lookup(k, rec.Key)
	}
	key, err := KeyOf(k, t.Key)
	if err != nil {
		return nil, err
	}
	cur, err := v.lookup(k, key)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s with %s", k.Name, k.DescribeKey(key))
	}
	return cur, nil
}

// KeyOf builds the store key from key fields given by a client, filling
// keys that have a default ("Vrf" is "default" when left out).
func KeyOf(k *model.Kind, given model.Object) (string, error) {
	full := model.Object{}
	for _, f := range k.Keys() {
		val, ok := given[f.Name]
		if !ok {
			if f.Default == nil {
				return "", apierr.BadRequest(apierr.CodeMissingField, k.Name, f.Name, "%s is a key of %s: give it in the body or the query string", f.Name, k.Name)
			}
			val = f.Default
		}
		switch val.(type) {
		case string:
			if f.Type != model.String {
				return "", apierr.BadRequest(apierr.CodeWrongType, k.Name, f.Name, "%s must be an integer", f.Name)
			}
		case int64:
			if f.Type != model.Int {
				return "", apierr.BadRequest(apierr.CodeWrongType, k.Name, f.Name, "%s must be a string", f.Name)
			}
		default:
			return "", apierr.BadRequest(apierr.CodeWrongType, k.Name, f.Name, "%s must be a %s", f.Name, f.Type)
		}
		full[f.Name] = val
	}
	return k.Key(full), nil
}

func (v *view) idInUse(id uuid.UUID) bool {
	if c := v.pendingByID(id); c != nil {
		return c.Op != model.Delete
	}
	rec, ok, _ := v.tx.GetByID(id)
	if !ok {
		return false
	}
	// The stored object with id may have been deleted and created again
	// with another ObjectId.
	c := v.pending[rec.Kind+"\x00"+rec.Key]
	return c == nil
}

func (v *view) add(c *change) {
	key := c.Kind.Name + "\x00" + c.Key
	c.job, c.prev = v.jobN, v.pending[key]
	v.setPending(key, c)
	v.changes = append(v.changes, c)
}

// forget takes back c, a change of the current request: the view shows
// the object as it was before c.
func (v *view) forget(c *change) {
	v.setPending(c.Kind.Name+"\x00"+c.Key, c.prev)
	v.changes = removeChange(v.changes, c)
}

// ownPending is the change the current request made to the object of k
// with key, or nil.
func (v *view) ownPending(k *model.Kind, key string) *change {
	if c := v.pending[k.Name+"\x00"+key]; c != nil && c.job == v.jobN {
		return c
	}
	return nil
}
