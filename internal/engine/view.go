package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine/feed"
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

// resolveAll turns edits into ordered changes and checks the result.
// checked holds, per edit, a create's object checked ahead (see
// precheckCreates), or is nil.
// A candidate's edits (staged: true) were each valid when staged, so one
// that no longer resolves was undone by a commit since: its error says so,
// as the candidate's diff does, rather than a bare 404 on the commit's URL
// that a client would read as "no such candidate".
func (v *view) resolveAll(edits []Edit, checked []model.Object, staged bool) (*Outcome, []*change, error) {
	out := &Outcome{IDs: make([]uuid.UUID, len(edits)), ETags: make([]uint64, len(edits))}
	for i, ed := range edits {
		if i < len(checked) {
			v.checked = checked[i]
		}
		id, etag, err := v.resolve(ed)
		v.checked = nil
		if err != nil {
			if staged {
				err = NoLongerApplies(ed, err)
			}
			return nil, nil, err
		}
		out.IDs[i], out.ETags[i] = id, etag
	}
	v.sortChanges()
	return out, v.changes, nil
}

// resolveStream is resolveAll for edits handed over one at a time
// (Request.stream): the Outcome has no IDs or ETags.
func (v *view) resolveStream(stream func(yield func(Edit) error) error) (*Outcome, []*change, error) {
	err := stream(func(ed Edit) error {
		_, _, err := v.resolve(ed)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	v.sortChanges()
	return &Outcome{}, v.changes, nil
}

// sortChanges puts the request's changes in the order the backend applies
// them.
func (v *view) sortChanges() {
	// Deletes first, in reverse apply order, then creates and updates in
	// apply order; a parent's update comes before its new children. The
	// sort cannot reorder one object's changes: a request's changes hold
	// at most one per object, or a delete then a create (a re-create),
	// which it keeps in that order (update and remove fold each edit into
	// the object's earlier change).
	sort.SliceStable(v.changes, func(i, j int) bool {
		a, b := v.changes[i], v.changes[j]
		if (a.Op == model.Delete) != (b.Op == model.Delete) {
			return a.Op == model.Delete
		}
		if a.Op == model.Delete {
			return v.e.order[a.Kind.Name] > v.e.order[b.Kind.Name]
		}
		return v.e.order[a.Kind.Name] < v.e.order[b.Kind.Name]
	})
}

// NoLongerApplies is the 409 of a staged edit that the running
// configuration no longer accepts (err says why).
func NoLongerApplies(ed Edit, err error) error {
	return apierr.Conflict(apierr.CodeConflict, ed.Kind.Name, "the candidate no longer applies to the running configuration: %s %s: %s", ed.Op, ed.Kind.Name, apierr.From(err).Message)
}

func methodNotAllowed(k *model.Kind, what string) error {
	why := "it is created by the switch"
	if k.Singleton {
		why = "it always exists; change it with PATCH"
	} else if k.Discovered {
		why = "ports are discovered from the switch; change them with PATCH (BreakOutMode adds and removes sub-ports)"
	}
	return apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, k.Name, "", "cannot %s a %s: %s", what, k.Name, why)
}

// resolve turns one edit into changes, returning the object's id and, for an
// update that changes nothing, its current ETag.
func (v *view) resolve(ed Edit) (uuid.UUID, uint64, error) {
	k := ed.Kind
	switch ed.Op {
	case model.Create:
		if !k.Creatable() && !ed.System {
			return uuid.Nil, 0, methodNotAllowed(k, "create")
		}
		if ed.IfMatch != "" {
			// RFC 9110: a precondition on a resource that has no current
			// representation is false, "*" included.
			return uuid.Nil, 0, apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, k.Name, "", "If-Match %s on a create: the object does not exist yet, so it has no ETag to match; If-Match is for a PATCH or DELETE of an existing object, and for a candidate commit (the running revision)", ed.IfMatch)
		}
		v.prepared = ed.Prepared
		return v.createWithID(k, ed.Fields, ed.ID)
	case model.Update:
		return v.update(k, ed)
	case model.Delete:
		cur, err := v.find(k, ed.Target)
		if err != nil {
			return uuid.Nil, 0, err
		}
		if !k.Creatable() {
			return uuid.Nil, 0, methodNotAllowed(k, "delete")
		}
		if err := checkIfMatch(k, ed.IfMatch, cur); err != nil {
			return uuid.Nil, 0, err
		}
		v.remove(k, cur)
		return cur.id, 0, nil
	}
	return uuid.Nil, 0, fmt.Errorf("engine: edit with no operation")
}

func checkIfMatch(k *model.Kind, ifMatch string, cur *current) error {
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	match, ok := ifMatchAllows(ifMatch, ETag(cur.modRev))
	if !ok {
		return apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, k.Name, "", "If-Match %s is not *, nor a list of entity tags like \"42\" or \"41\", \"42\"", ifMatch)
	}
	if cur.modRev == 0 || !match {
		return apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, k.Name, "", "%s %s has changed since ETag %s; it is now %s (If-Match compares strongly: a weak W/ tag never matches)", k.Name, k.DescribeKey(cur.key), ifMatch, ETag(cur.modRev))
	}
	return nil
}

// ETag renders a revision as an HTTP entity tag.
func ETag(rev uint64) string { return `"` + strconv.FormatUint(rev, 10) + `"` }

func (v *view) create(k *model.Kind, given model.Object) (uuid.UUID, uint64, error) {
	return v.createWithID(k, given, nil)
}

func (v *view) createWithID(k *model.Kind, given model.Object, preset *uuid.UUID) (uuid.UUID, uint64, error) {
	obj := v.checked // the edit's own object, checked ahead; not its children's
	v.checked = nil
	if obj == nil {
		if err := k.RequireFields(given); err != nil {
			return uuid.Nil, 0, err
		}
		obj = given
		if !v.owned || !hasEveryField(k, given) {
			obj = k.Defaults()
			for name, val := range given {
				obj[name] = val
			}
		}
		if err := k.Validate(obj); err != nil {
			return uuid.Nil, 0, err
		}
	}
	key := k.Key(obj)
	cur, err := v.lookup(k, key)
	if err != nil {
		return uuid.Nil, 0, err
	}
	if cur != nil {
		e := apierr.Conflict(apierr.CodeDuplicate, k.Name, "%s with %s already exists; update it with PATCH or delete it first", k.Name, k.DescribeKey(key))
		e.ObjectId = cur.id.String()
		return uuid.Nil, 0, e
	}
	id := newObjectID()
	if preset != nil {
		id = *preset
		if v.idInUse(id) {
			return uuid.Nil, 0, apierr.Conflict(apierr.CodeDuplicate, k.Name, "ObjectId %s is already used by another object", id)
		}
	}
	c := &change{Change: model.Change{Kind: k, Op: model.Create, Key: key, After: obj, Prepared: v.prepared}, id: id, fresh: preset == nil}
	v.prepared = nil
	v.add(c)
	if k.Children != nil {
		for _, child := range k.Children(obj) {
			if _, _, err := v.create(k, child); err != nil {
				return uuid.Nil, 0, err
			}
		}
	}
	return c.id, 0, nil
}

// hasEveryField reports whether o holds a value for each of k's fields
// (an object as configfile decodes it: defaults filled in).
func hasEveryField(k *model.Kind, o model.Object) bool {
	if len(o) != len(k.Fields) {
		return false
	}
	for _, f := range k.Fields {
		if _, ok := o[f.Name]; !ok {
			return false
		}
	}
	return true
}

func (v *view) update(k *model.Kind, ed Edit) (uuid.UUID, uint64, error) {
	cur, err := v.find(k, ed.Target)
	if err != nil {
		return uuid.Nil, 0, err
	}
	if err := checkIfMatch(k, ed.IfMatch, cur); err != nil {
		return uuid.Nil, 0, err
	}
	merged := cur.obj.Clone()
	for name, val := range ed.Fields {
		f := k.Field(name)
		same := equalValue(cur.obj[name], val)
		switch {
		case f.Key && !same:
			return uuid.Nil, 0, apierr.BadRequest(apierr.CodeKeyChange, k.Name, name, "%s is a key and cannot change (from %v to %v); delete the %s and create it again", name, cur.obj[name], val, k.Name)
		case f.Secret != model.Public && val == "":
			continue // reads return "", so sending it back keeps the secret
		case f.CreateOnly && (f.Secret != model.Public || !same):
			return uuid.Nil, 0, apierr.BadRequest(apierr.CodeCreateOnly, k.Name, name, "%s can only be set when the %s is created; %s", name, k.Name, createOnlyHint(k))
		case f.ReadOnly && !same && !ed.System:
			return uuid.Nil, 0, apierr.BadRequest(apierr.CodeReadOnly, k.Name, name, "%s is set by the switch and cannot be changed", name)
		}
		merged[name] = val
	}
	if err := k.Validate(merged); err != nil {
		return uuid.Nil, 0, err
	}
	if equalObjects(k, cur.obj, merged) {
		return cur.id, cur.modRev, nil
	}
	c := &change{Change: model.Change{Kind: k, Op: model.Update, Key: cur.key, Before: cur.obj, After: merged}, id: cur.id, seq: cur.seq, createRev: cur.createRev}
	if k.Children != nil {
		before, after := k.Children(cur.obj), k.Children(merged)
		if !sameObjects(k, before, after) {
			for _, child := range before {
				old, err := v.lookup(k, k.Key(child))
				if err != nil {
					return uuid.Nil, 0, err
				}
				if old != nil {
					v.remove(k, old)
				}
			}
			v.addUpdate(c)
			for _, child := range after {
				if _, _, err := v.create(k, child); err != nil {
					return uuid.Nil, 0, err
				}
			}
			return cur.id, 0, nil
		}
	}
	v.addUpdate(c)
	return cur.id, 0, nil
}

// addUpdate adds the update c, or folds it into the change the current
// request made to the object before: an object created in this commit is
// created as c leaves it; one updated in this commit is updated once, from
// its state before the commit to c's (not at all if that is the same).
func (v *view) addUpdate(c *change) {
	p := v.ownPending(c.Kind, c.Key)
	if p == nil || p.Op == model.Delete { // a deleted object is not found to update
		v.add(c)
		return
	}
	p.After = c.After
	// An object with derived ones (a port and its sub-ports) keeps its
	// update: its children may have been removed and made again between.
	if p.Op == model.Update && c.Kind.Children == nil && equalObjects(c.Kind, p.Before, p.After) {
		v.forget(p)
	}
}

func createOnlyHint(k *model.Kind) string {
	if k.UpdateHint != "" {
		return k.UpdateHint
	}
	return "delete it and create it again"
}

// remove deletes cur, folded into the change the current request made to
// it before: an object created in this commit is not created (and a
// delete of this commit before that create stays); one updated in this
// commit is deleted as it was before the update.
func (v *view) remove(k *model.Kind, cur *current) {
	before := cur.obj
	if p := v.ownPending(k, cur.key); p != nil {
		switch p.Op {
		case model.Create:
			v.forget(p)
			return
		case model.Update:
			before = p.Before
			v.forget(p)
		}
	}
	v.add(&change{Change: model.Change{Kind: k, Op: model.Delete, Key: cur.key, Before: before}, id: cur.id, seq: cur.seq, createRev: cur.createRev})
	if k.Children != nil {
		for _, child := range k.Children(cur.obj) {
			if old, _ := v.lookup(k, k.Key(child)); old != nil {
				v.remove(k, old)
			}
		}
	}
}

func removeChange(cs []*change, c *change) []*change {
	out := cs[:0]
	for _, x := range cs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}

func equalObjects(k *model.Kind, a, b model.Object) bool {
	for _, f := range k.Fields {
		if !equalValue(a[f.Name], b[f.Name]) {
			return false
		}
	}
	return true
}

func sameObjects(k *model.Kind, a, b []model.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalObjects(k, a[i], b[i]) {
			return false
		}
	}
	return true
}

// refsOf lists the objects o names through reference fields.
func refsOf(k *model.Kind, o model.Object) []store.Ref {
	var refs []store.Ref
	for _, f := range k.Fields {
		if f.Ref == "" || o == nil {
			continue
		}
		vals := o.List(f.Name)
		switch f.Type {
		case model.String:
			vals = []string{o.Str(f.Name)}
		case model.Int:
			vals = nil
			if n := o.Int(f.Name); n != 0 {
				vals = []string{strconv.FormatInt(n, 10)}
			}
		}
		for _, val := range vals {
			if val == "" || val == f.RefImplied {
				continue
			}
			r := store.Ref{Kind: f.Ref, Key: val}
			r.Kind, r.Key = f.RefTarget(val)
			if !containsRef(refs, r) {
				refs = append(refs, r)
			}
		}
	}
	return refs
}

func containsRef(refs []store.Ref, r store.Ref) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

// checkReferences checks the configuration the changes produce: every
// reference names an existing object, and no deleted object is still named.
func (v *view) checkReferences(changes []*change) error {
	for _, c := range changes {
		if c.After == nil {
			continue
		}
		for _, f := range c.Kind.Fields {
			if f.Ref == "" {
				continue
			}
			for _, r := range refsOf(&model.Kind{Fields: []*model.Field{f}}, c.After) {
				target := v.e.reg.Lookup(model.Config, r.Kind)
				cur, err := v.lookup(target, r.Key)
				if err != nil {
					return err
				}
				if cur == nil {
					return apierr.BadRequest(apierr.CodeDanglingReference, c.Kind.Name, f.Name, "%s: %s %q does not exist", f.Name, r.Kind, r.Key)
				}
				if target.Referable != nil {
					if err := target.Referable(cur.obj); err != nil {
						e := apierr.From(err)
						return apierr.BadRequest(apierr.CodeInvalidValue, c.Kind.Name, f.Name, "%s: %s", f.Name, e.Message)
					}
				}
			}
		}
	}
	// pendingUsers maps an object to the pending changes (this request's and
	// those of the requests before it in the batch) that name it; made
	// once, on the first delete, so a commit of n deletes (a reset) costs
	// O(n), not O(n²).
	var pendingUsers map[store.Ref][]store.Ref
	for _, c := range changes {
		// An object that stops being referable (a port being broken out)
		// must not be in use, like an object being deleted.
		becomesUnreferable := c.Op == model.Update && c.Kind.Referable != nil &&
			c.Kind.Referable(c.After) != nil && c.Kind.Referable(c.Before) == nil
		if c.Op != model.Delete && !becomesUnreferable {
			continue
		}
		var users []string
		for _, src := range v.tx.Referrers(c.Kind.Name, c.Key) {
			if p := v.pending[src.Kind+"\x00"+src.Key]; p != nil {
				continue // checked below with its new value
			}
			users = append(users, describe(v.e.reg, src))
		}
		if pendingUsers == nil {
			pendingUsers = map[store.Ref][]store.Ref{}
			for _, p := range v.pending {
				if p.After == nil {
					continue
				}
				for _, r := range refsOf(p.Kind, p.After) {
					pendingUsers[r] = append(pendingUsers[r], store.Ref{Kind: p.Kind.Name, Key: p.Key})
				}
			}
		}
		// An object deleted and created again in this commit may be named
		// by objects this commit creates: the switch gets them after it.
		// Any other user would name it while the switch deletes it.
		last := v.ownPending(c.Kind, c.Key)
		recreated := c.Op == model.Delete && last != nil && last.Op == model.Create
		for _, src := range pendingUsers[store.Ref{Kind: c.Kind.Name, Key: c.Key}] {
			if user := v.pending[src.Kind+"\x00"+src.Key]; recreated && user.job == v.jobN && user.Op == model.Create {
				continue
			}
			users = append(users, describe(v.e.reg, src))
		}
		if len(users) > 0 {
			sort.Strings(users)
			what := "is still used by"
			if becomesUnreferable {
				what = "cannot change so: it is used by"
			}
			return apierr.Conflict(apierr.CodeReferenced, c.Kind.Name, "%s %s %s %s; change or delete those first", c.Kind.Name, c.Kind.DescribeKey(c.Key), what, strings.Join(users, ", "))
		}
	}
	return nil
}

func describe(reg *model.Registry, r store.Ref) string {
	k := reg.Lookup(model.Config, r.Kind)
	if k == nil {
		return r.Kind + " " + r.Key
	}
	return r.Kind + " " + k.DescribeKey(r.Key)
}

// write stores the changes as revision rev and returns what the change
// feed's event is made of, the diff of each change (the same values the
// record holds, secrets redacted) and the revision record to store
// (Txn.PutRevision). With omitDiffs, a commit whose event
// is too large for the feed's ring keeps no diffs (nil): its caller does
// not answer with them, and subscribers read the event from the store.
//
// A commit can hold 100,000 changes (a restore), so the record is written
// by hand, one change at a time, into a store.RecordBuilder (which
// deflates a large one as it goes), from diffs made once: building it as
// structs and encoding them with encoding/json held three copies of the
// commit at the peak (550-760 MiB for a restore).
func (e *Engine) write(tx store.Txn, rev uint64, changes []*change, meta Meta, omitDiffs bool) (*revisionEvent, []Diff, []byte, error) {
	// The stored public JSON of each change, for the object cache; a bulk
	// commit's need not live until it is published: the cache, which takes
	// only its last changes (objCache.commit), encodes those again.
	var publics [][]byte
	if len(changes) < bulkFrom {
		publics = make([][]byte, len(changes))
	}
	diffs := make([]Diff, 0, len(changes))
	if omitDiffs {
		diffs = make([]Diff, 0, min(len(changes), 1024)) // dropped once past feed.MaxRingEvent
	}
	head := Revision{Revision: rev, Time: time.Now().UTC().Format(time.RFC3339Nano), User: meta.User, Source: meta.Source, Comment: meta.Comment}
	publicSize := 256 + len(meta.User) + len(meta.Comment)
	// The record goes out in chunks of 64 KiB; one that fits in a chunk (a
	// commit of a few objects) is stored as it is.
	const chunkSize = 64 << 10
	var record *store.RecordBuilder
	chunk := appendRevisionHead(make([]byte, 0, min(publicSize+640*len(changes), chunkSize+8<<10)), &head, e.reg.SchemaVersion())
	for i, c := range changes {
		if i > 0 && i%bulkCollectEvery == 0 {
			runtime.GC()
		}
		k := c.Kind
		d := Diff{Kind: k.Name, Key: k.DescribeKey(c.Key), ObjectId: c.id.String(), Op: c.Op.String()}
		var sealed [2][]byte // before, after
		if c.Before != nil {
			d.Before = k.AppendRedactedJSON(nil, c.Before)
			sealed[0] = e.seal(k, c.id, c.Before)
		}
		switch c.Op {
		case model.Delete:
			rec := store.Record{Kind: k.Name, Key: c.Key}
			if err := tx.Delete(rec, refsOf(k, c.Before)); err != nil {
				return nil, nil, nil, err
			}
		default:
			rec := &store.Record{Kind: k.Name, Key: c.Key, ID: c.id, ModRev: rev}
			rec.Public = k.AppendJSON(nil, c.After, false)
			rec.Sealed = e.seal(k, c.id, c.After)
			if err := tx.Put(rec, refsOf(k, c.Before), refsOf(k, c.After)); err != nil {
				return nil, nil, nil, err
			}
			sealed[1] = rec.Sealed
			if publics != nil {
				publics[i] = rec.Public
			}
			if hasSecrets(k) {
				d.After = k.AppendRedactedJSON(nil, c.After)
			} else {
				d.After = rec.Public // the same bytes: one copy for the store, the diff and the cache
			}
		}
		publicSize += 128 + len(d.Kind) + len(d.Key) + len(d.Before) + len(d.After)
		if diffs != nil {
			diffs = append(diffs, d)
			if omitDiffs && publicSize > feed.MaxRingEvent {
				diffs = nil
			}
		}
		if i > 0 {
			chunk = append(chunk, ',')
		}
		chunk = appendDiff(chunk, &d)
		chunk = append(chunk[:len(chunk)-1], `,"StoreKey":`...)
		chunk = model.AppendJSONString(chunk, c.Key)
		for n, b := range sealed {
			if b != nil {
				chunk = append(chunk, [2]string{`,"BeforeSealed":"`, `,"AfterSealed":"`}[n]...)
				chunk = base64.StdEncoding.AppendEncode(chunk, b)
				chunk = append(chunk, '"')
			}
		}
		chunk = append(chunk, '}')
		if len(chunk) >= chunkSize {
			if record == nil {
				record = store.NewRecordBuilder(640 * len(changes))
			}
			record.Write(chunk)
			chunk = chunk[:0]
		}
	}
	chunk = append(chunk, "]}"...)
	if len(changes) >= collectAfter {
		runtime.GC()
	}
	ev := &revisionEvent{head: head, size: publicSize, publics: publics}
	if record == nil {
		return ev, diffs, chunk, nil
	}
	record.Write(chunk)
	return ev, diffs, record.Bytes(), nil
}

// bulkCollectEvery is how many changes of a bulk commit write writes between
// two forced collections, and it collects once more before bbolt's commit
// allocates its pages. The write's garbage (each change's diff, key and
// record encodings) would otherwise let the heap grow to twice what is
// live (the commit's objects and bbolt's pending writes, ~400 MiB for a
// restore of 300,000 objects) before the pacer collects: a collection every
// 75,000 changes costs about 4 collections of a 30 s restore and keeps the
// heap near what is live (bench/restorerss.sh: 605 -> 529 MiB).
const bulkCollectEvery = 75000

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

// hasSecrets reports whether k has a field that diffs redact.
func hasSecrets(k *model.Kind) bool {
	for _, f := range k.Fields {
		if f.Secret != model.Public {
			return true
		}
	}
	return false
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

// newObjectID makes the ObjectId of a new object: a version 7 UUID, which
// rises with time in this process, so that the creates of one commit are
// appended to the store's id index rather than inserted at random places
// (with random ids, bbolt moves half of an in-memory node for every insert:
// a restore of 100,000 objects spent seconds copying).
func newObjectID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New() // no time-ordered id without randomness: New panics likewise
	}
	return id
}
