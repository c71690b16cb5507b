package history

import (
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// DiffRevisions is what changed in the configuration from its state after
// revision from to its state after revision to (from may be the later
// one: the diff then undoes theirs), composed from the revision records
// between them: each object changed in between is compared as it was
// before its first change there and after its last. An object changed
// and changed back does not appear; one whose only change is a secret
// does, with the secret "******" on both sides, as every diff shows it.
// Both revisions and every one between must be kept (404 otherwise).
func (h *History) DiffRevisions(from, to uint64) ([]engine.Diff, error) {
	lo, hi := min(from, to), max(from, to)
	var out []engine.Diff
	err := h.store.View(func(tx store.Txn) error {
		cur := tx.Revision()
		for _, rev := range []uint64{from, to} {
			if rev == 0 || rev > cur || tx.GetRevision(rev) == nil {
				return apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d; the running revision is %d and the last %d are kept", rev, cur, store.MaxRevisions)
			}
		}
		type side struct {
			r *engine.StoredRevision
			d engine.StoredDiff
		}
		type span struct {
			k           *model.Kind
			key         string
			first, last side
		}
		var order []*span
		spans := map[string]*span{}
		notKept := func(rev uint64) error {
			return apierr.NotFound(apierr.CodeNotFound, "Revision", "revision %d, between %d and %d, is no longer kept", rev, lo, hi)
		}
		err := h.eachChange(tx, lo+1, hi, notKept, func(k *model.Kind, key string, r *engine.StoredRevision, d engine.StoredDiff) error {
			id := d.Kind + "\x00" + key
			if s := spans[id]; s != nil {
				s.last = side{r, d}
				return nil
			}
			s := &span{k: k, key: key, first: side{r, d}, last: side{r, d}}
			spans[id], order = s, append(order, s)
			return nil
		})
		if err != nil {
			return err
		}
		for _, s := range order {
			var early, late model.Object // after lo, after hi; nil: absent
			if s.first.d.Op != model.Create.String() {
				if early, err = h.e.RevisionObject(s.k, s.first.r, s.first.d, true); err != nil {
					return err
				}
			}
			if s.last.d.Op != model.Delete.String() {
				if late, err = h.e.RevisionObject(s.k, s.last.r, s.last.d, false); err != nil {
					return err
				}
			}
			before, after := early, late
			if from > to {
				before, after = late, early
			}
			if d, changed := objectDiff(s.k, s.key, s.last.d.ObjectId, before, after); changed {
				out = append(out, d)
			}
		}
		return nil
	})
	return out, err
}

// objectDiff is the diff of an object of k from before to after (nil:
// absent), secrets redacted; changed is false when they are the same.
func objectDiff(k *model.Kind, key, id string, before, after model.Object) (d engine.Diff, changed bool) {
	d = engine.Diff{Kind: k.Name, Key: key, ObjectId: id}
	switch {
	case before == nil && after == nil:
		return d, false
	case before == nil:
		d.Op = model.Create.String()
	case after == nil:
		d.Op = model.Delete.String()
	default:
		same := true
		for _, f := range k.Fields {
			if !model.EqualValue(before[f.Name], after[f.Name]) {
				same = false
				break
			}
		}
		if same {
			return d, false
		}
		d.Op = model.Update.String()
	}
	if before != nil {
		d.Before = k.AppendRedactedJSON(nil, before)
	}
	if after != nil {
		d.After = k.AppendRedactedJSON(nil, after)
	}
	return d, true
}
