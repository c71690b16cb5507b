package history

import (
	"context"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Rollback makes a new commit that restores the configuration as it was
// after revision to.
func (h *History) Rollback(ctx context.Context, to uint64, req engine.Request) (*engine.Outcome, error) {
	req.Meta.Source = "rollback"
	req.Prepare = func(v *engine.View, r *engine.Request) error {
		edits, err := h.rollbackEdits(v, to)
		r.Edits = edits
		return err
	}
	return h.e.Commit(ctx, req)
}

// rollbackEdits computes the edits that take the running configuration back
// to its state after revision to: every object changed since is returned to
// the state it had before its first change after to.
func (h *History) rollbackEdits(v *engine.View, to uint64) ([]engine.Edit, error) {
	tx := v.Txn()
	cur := tx.Revision()
	if to == v.Revision() {
		return nil, nil // nothing to undo
	}
	if to == 0 || to > cur {
		return nil, apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d; the running revision is %d", to, cur)
	}
	type target struct {
		k     *model.Kind
		key   string
		state model.Object // nil: the object did not exist
		id    string
	}
	var order []*target
	targets := map[string]*target{}
	notKept := func(uint64) error {
		return apierr.BadRequest(apierr.CodeInvalidValue, "Rollback", "Revision", "revision %d is older than the last %d revisions kept", to, store.MaxRevisions)
	}
	err := h.eachChange(tx, to+1, cur, notKept, func(k *model.Kind, key string, r *engine.StoredRevision, d engine.StoredDiff) error {
		id := d.Kind + "\x00" + key
		if targets[id] != nil {
			return nil
		}
		t := &target{k: k, key: key, id: d.ObjectId}
		if d.Op != model.Create.String() {
			var err error
			if t.state, err = h.e.RevisionObject(k, r, d, true); err != nil {
				return err
			}
		}
		targets[id] = t
		order = append(order, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Objects changed by commits of the writer's batch that are not in the
	// store yet: their state after "to" is the stored one.
	for _, ref := range v.ChangedInBatch() {
		id := ref.Kind + "\x00" + ref.Key
		if targets[id] != nil {
			continue
		}
		k := h.reg.Lookup(model.Config, ref.Kind)
		if k == nil {
			continue
		}
		t := &target{k: k, key: ref.Key}
		if rec, ok, err := tx.Get(ref.Kind, ref.Key); err == nil && ok {
			if t.state, err = h.e.Decode(k, rec); err != nil {
				return nil, err
			}
			t.id = rec.ID.String()
		}
		targets[id] = t
		order = append(order, t)
	}
	// Objects derived from others (breakout sub-ports) follow their parent.
	derived := map[string]bool{}
	for _, t := range order {
		if t.k.Children == nil {
			continue
		}
		for _, state := range []model.Object{t.state, v.Get(t.k.Name, t.key)} {
			if state != nil {
				for _, c := range t.k.Children(state) {
					derived[t.k.Name+"\x00"+t.k.Key(c)] = true
				}
			}
		}
	}
	var edits []engine.Edit
	for _, t := range order {
		if derived[t.k.Name+"\x00"+t.key] {
			continue
		}
		now := v.Get(t.k.Name, t.key)
		switch {
		case t.state == nil && now == nil:
		case t.state == nil:
			edits = append(edits, engine.Edit{Kind: t.k, Op: model.Delete, Target: engine.Target{Key: engine.KeyFields(t.k, now)}, System: true})
		case now == nil:
			for _, f := range t.k.Fields {
				if f.Secret == model.Transient && f.Required {
					return nil, apierr.New(http.StatusConflict, apierr.CodeConflict, t.k.Name, f.Name, "cannot roll back: %s %s was deleted since revision %d and its %s is not kept; create it again", t.k.Name, t.k.DescribeKey(t.key), to, f.Name)
				}
			}
			id, err := engine.ParseObjectID(t.id)
			if err != nil {
				return nil, err
			}
			edits = append(edits, engine.Edit{Kind: t.k, Op: model.Create, Fields: t.state, ID: &id, System: true})
		case recreatable(t.k) && t.id != "" && idOf(v, t.k, now) != t.id:
			// Deleted and created again since: the object comes back with
			// its ObjectId (clients may hold it) and create-only fields.
			id, err := engine.ParseObjectID(t.id)
			if err != nil {
				return nil, err
			}
			edits = append(edits,
				engine.Edit{Kind: t.k, Op: model.Delete, Target: engine.Target{Key: engine.KeyFields(t.k, now)}, System: true},
				engine.Edit{Kind: t.k, Op: model.Create, Fields: t.state, ID: &id, System: true})
		default:
			fields := model.Object{}
			for _, f := range t.k.Fields {
				if f.ReadOnly || f.Secret == model.Transient {
					continue
				}
				if f.CreateOnly && !model.EqualValue(now[f.Name], t.state[f.Name]) {
					return nil, apierr.New(http.StatusConflict, apierr.CodeConflict, t.k.Name, f.Name, "cannot roll back %s %s: its %s changed since revision %d and can only be set by re-creating it", t.k.Name, t.k.DescribeKey(t.key), f.Name, to)
				}
				fields[f.Name] = t.state[f.Name]
			}
			edits = append(edits, engine.Edit{Kind: t.k, Op: model.Update, Target: engine.Target{Key: engine.KeyFields(t.k, now)}, Fields: fields})
		}
	}
	return edits, nil
}

// eachChange calls fn with each change of a configuration kind in the
// stored revisions first to last of tx, in order, with its kind and key
// (engine.RevisionKey: in the current form); a revision not kept is
// notKept's error.
func (h *History) eachChange(tx store.Txn, first, last uint64, notKept func(rev uint64) error, fn func(k *model.Kind, key string, r *engine.StoredRevision, d engine.StoredDiff) error) error {
	for rev := first; rev <= last; rev++ {
		data := tx.GetRevision(rev)
		if data == nil {
			return notKept(rev)
		}
		r, err := engine.DecodeStoredRevision(data)
		if err != nil {
			return err
		}
		for _, d := range r.Changes {
			k := h.reg.Lookup(model.Config, d.Kind)
			if k == nil {
				continue
			}
			if err := fn(k, h.e.RevisionKey(k, r, d), r, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// recreatable reports whether a rollback may delete an object of k and
// create it again: k's objects are created by clients, and keep every
// field a create needs (a transient one, a password, is not kept).
func recreatable(k *model.Kind) bool {
	if !k.Creatable() {
		return false
	}
	for _, f := range k.Fields {
		if f.Secret == model.Transient && f.Required {
			return false
		}
	}
	return true
}

// idOf is the ObjectId of the object o of k in v, or "".
func idOf(v *engine.View, k *model.Kind, o model.Object) string {
	_, id, err := v.Find(k, engine.Target{Key: engine.KeyFields(k, o)})
	if err != nil {
		return ""
	}
	return id.String()
}
