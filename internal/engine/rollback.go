package engine

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Rollback makes a new commit that restores the configuration as it was
// after revision to.
func (e *Engine) Rollback(ctx context.Context, to uint64, req Request) (*Outcome, error) {
	req.Meta.Source = "rollback"
	return e.commitWith(ctx, req, func(v *view, r *Request) error {
		edits, err := e.rollbackEdits(v, to)
		r.Edits = edits
		return err
	})
}

// rollbackEdits computes the edits that take the running configuration back
// to its state after revision to: every object changed since is returned to
// the state it had before its first change after to.
func (e *Engine) rollbackEdits(v *view, to uint64) ([]Edit, error) {
	tx := v.tx
	cur := tx.Revision()
	if to == v.revision() {
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
	for rev := to + 1; rev <= cur; rev++ {
		data := tx.GetRevision(rev)
		if data == nil {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, "Rollback", "Revision", "revision %d is older than the last %d revisions kept", to, store.MaxRevisions)
		}
		r, err := decodeStoredRevision(data)
		if err != nil {
			return nil, err
		}
		for _, d := range r.Changes {
			k := e.reg.Lookup(model.Config, d.Kind)
			if k == nil {
				continue
			}
			key := currentKey(k, d)
			id := d.Kind + "\x00" + key
			if targets[id] != nil {
				continue
			}
			t := &target{k: k, key: key, id: d.ObjectId}
			if d.Op != model.Create.String() {
				if t.state, err = e.objectAt(k, d, true); err != nil {
					return nil, err
				}
			}
			targets[id] = t
			order = append(order, t)
		}
	}
	// Objects changed by commits of the writer's batch that are not in the
	// store yet: their state after "to" is the stored one.
	var batchKeys []string
	for id := range v.touched {
		if targets[id] == nil {
			batchKeys = append(batchKeys, id)
		}
	}
	sort.Strings(batchKeys)
	for _, id := range batchKeys {
		kind, key, _ := strings.Cut(id, "\x00")
		k := e.reg.Lookup(model.Config, kind)
		if k == nil {
			continue
		}
		t := &target{k: k, key: key}
		if rec, ok, err := tx.Get(kind, key); err == nil && ok {
			if t.state, err = e.decode(k, rec); err != nil {
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
	var edits []Edit
	for _, t := range order {
		if derived[t.k.Name+"\x00"+t.key] {
			continue
		}
		now := v.Get(t.k.Name, t.key)
		switch {
		case t.state == nil && now == nil:
		case t.state == nil:
			edits = append(edits, Edit{Kind: t.k, Op: model.Delete, Target: Target{Key: keyFields(t.k, now)}, System: true})
		case now == nil:
			for _, f := range t.k.Fields {
				if f.Secret == model.Transient && f.Required {
					return nil, apierr.New(http.StatusConflict, apierr.CodeConflict, t.k.Name, f.Name, "cannot roll back: %s %s was deleted since revision %d and its %s is not kept; create it again", t.k.Name, t.k.DescribeKey(t.key), to, f.Name)
				}
			}
			id, err := parseUUID(t.id)
			if err != nil {
				return nil, err
			}
			edits = append(edits, Edit{Kind: t.k, Op: model.Create, Fields: t.state, ID: &id, System: true})
		default:
			fields := model.Object{}
			for _, f := range t.k.Fields {
				if f.ReadOnly || f.Secret == model.Transient {
					continue
				}
				if f.CreateOnly && !equalValue(now[f.Name], t.state[f.Name]) {
					return nil, apierr.New(http.StatusConflict, apierr.CodeConflict, t.k.Name, f.Name, "cannot roll back %s %s: its %s changed since revision %d and can only be set by re-creating it", t.k.Name, t.k.DescribeKey(t.key), f.Name, to)
				}
				fields[f.Name] = t.state[f.Name]
			}
			edits = append(edits, Edit{Kind: t.k, Op: model.Update, Target: Target{Key: keyFields(t.k, now)}, Fields: fields})
		}
	}
	return edits, nil
}

// current returns the running state of an object, or nil.
func (e *Engine) current(tx *store.Tx, k *model.Kind, key string) model.Object {
	rec, ok, err := tx.Get(k.Name, key)
	if err != nil || !ok {
		return nil
	}
	obj, err := e.decode(k, rec)
	if err != nil {
		return nil
	}
	return obj
}

// currentKey is the store key a stored diff's object has under the current
// model: a revision written before a key field was added to its kind
// (BGPv4Neighbor's IntfRef) names it by its old key, which the start's
// migration has since changed.
func currentKey(k *model.Kind, d storedDiff) string {
	if strings.Count(d.StoreKey, "\x00")+1 == len(k.Keys()) {
		return d.StoreKey
	}
	raw := d.After
	if raw == nil {
		raw = d.Before
	}
	given, err := k.DecodeStored(raw)
	if err != nil {
		return d.StoreKey
	}
	obj := k.Defaults()
	for n, v := range given {
		obj[n] = v
	}
	return k.Key(obj)
}
