package engine

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

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
