package engine

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Snapshot calls fn for every object of the named config kinds (nil: all),
// secrets included, as of one revision, which it passes to begin (if set)
// before the first object and returns. Kinds come in registry order, so a
// reader meets what others refer to first.
func (e *Engine) Snapshot(ctx context.Context, kinds []string, begin func(rev uint64), fn func(k *model.Kind, o model.Object) error) (uint64, error) {
	var rev uint64
	err := e.store.View(func(tx store.Txn) error {
		rev = tx.Revision()
		if begin != nil {
			begin(rev)
		}
		for _, k := range e.reg.Kinds() {
			if k.Class != model.Config || (kinds != nil && !slices.Contains(kinds, k.Name)) {
				continue
			}
			err := e.eachStored(tx, k, func(_ store.Record, o model.Object) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return fn(k, o)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return rev, err
}

// Replacement is a whole configuration to put in place of the running one.
type Replacement struct {
	// Objects holds, per config kind name, every object wanted (full
	// objects, as configfile decodes them). A created kind's objects that
	// are not listed are deleted; a discovered or singleton kind's go back
	// to their defaults.
	Objects map[string][]model.Object
	// Keep, if set, spares running objects of created kinds that Objects
	// does not list (the users a reset keeps).
	//
	// Replace takes the objects: a created object given whole becomes the
	// commit's own (it is not copied; the switch may fill fields in).
	Keep func(k *model.Kind, running model.Object) bool
	// Merge leaves every running object that Objects does not list as it
	// is: the objects listed are created or set, nothing else changes.
	Merge bool
}

// Replace makes one commit that turns the running configuration into r:
// the same commit path as Rollback, with the edits computed inside the
// transaction from the running objects. Objects that do not change keep
// their ObjectIds; req.DryRun reports the diff.
func (e *Engine) Replace(ctx context.Context, r Replacement, req Request) (*Outcome, error) {
	n := 0
	for _, objs := range r.Objects {
		n += len(objs)
	}
	if n >= bulkFrom {
		defer lowerGC()() // a bulk commit (see runBatch for one that turns out so)
	}
	return e.commitWith(ctx, req, func(v *view, rq *Request) error {
		rq.ownsObjects = true
		rq.stream = func(yield func(Edit) error) error { return e.replaceEdits(v, r, yield) }
		return nil
	})
}

// replaceEdits hands yield the edits that turn the running configuration
// into r, kind by kind in registry order, each resolved as it comes (the
// view then holds its change): a restore's 300,000 edits are never held
// together. A kind's running and wanted objects are read before any of its
// edits is resolved; resolving a kind's edits changes no other kind's
// objects (derived objects are of their parent's kind).
func (e *Engine) replaceEdits(v *view, r Replacement, yield func(Edit) error) error {
	for _, k := range e.reg.Kinds() {
		if k.Class != model.Config {
			continue
		}
		// Every object of the kind, running or wanted, by key: one sorted
		// list rather than a map of each (a restore's 300,000 objects).
		var all []keyedPair
		err := v.Each(k.Name, func(key string, o model.Object) bool {
			all = append(all, keyedPair{key: key, now: o})
			return true
		})
		if err != nil {
			return err
		}
		all = slices.Grow(all, len(r.Objects[k.Name]))
		for _, o := range r.Objects[k.Name] {
			all = append(all, keyedPair{key: k.Key(o), want: o})
		}
		// A parent's key is a prefix of its children's; of two wanted
		// objects with one key, the later is wanted.
		slices.SortStableFunc(all, func(a, b keyedPair) int { return strings.Compare(a.key, b.key) })
		pairs := all[:0]
		for _, p := range all {
			if n := len(pairs); n > 0 && pairs[n-1].key == p.key {
				if p.now != nil {
					pairs[n-1].now = p.now
				}
				if p.want != nil {
					pairs[n-1].want = p.want
				}
				continue
			}
			pairs = append(pairs, p)
		}
		clear(all[len(pairs):])
		// Derived objects (breakout sub-ports) come and go with their
		// parent: only their settings are edited, after the parent.
		derived := map[string]bool{}
		if k.Children != nil {
			for _, p := range pairs {
				for _, o := range []model.Object{p.now, p.want} {
					if o == nil {
						continue
					}
					for _, c := range k.Children(o) {
						derived[k.Key(c)] = true
					}
				}
			}
		}
		for i, p := range pairs {
			pairs[i] = keyedPair{} // the view holds what is resolved
			key, now, want := p.key, p.now, p.want
			var ed Edit
			switch {
			case want == nil && r.Merge:
			case want == nil && derived[key]:
			case want == nil && !k.Creatable():
				// Back to the defaults, as a replace that leaves every field
				// out: what the switch reports (a port's media, its speed) is
				// not the model's to reset, and keeps its value.
				def := k.Reset(now)
				if !sameSettings(k, now, def) {
					ed = Edit{Kind: k, Op: model.Update, Target: Target{Key: keyFields(k, now)}, Fields: settable(k, def, now)}
				}
			case want == nil:
				if r.Keep == nil || !r.Keep(k, now) {
					ed = Edit{Kind: k, Op: model.Delete, Target: Target{Key: keyFields(k, now)}}
				}
			case now == nil && k.Creatable() && !derived[key]:
				ed = Edit{Kind: k, Op: model.Create, Fields: settable(k, want, nil)}
			default: // exists, or will exist once its parent changes
				if now != nil {
					for _, f := range k.Fields {
						if f.CreateOnly && !f.Key && f.Secret == model.Public && !equalValue(now[f.Name], want[f.Name]) {
							return apierr.New(http.StatusConflict, apierr.CodeConflict, k.Name, f.Name, "cannot replace %s %s: its %s differs and can only be set by re-creating it; delete it first", k.Name, k.DescribeKey(key), f.Name)
						}
					}
					if sameSettings(k, now, want) {
						continue
					}
				}
				ed = Edit{Kind: k, Op: model.Update, Target: Target{Key: keyFields(k, want)}, Fields: settable(k, want, now)}
			}
			if ed.Kind == nil {
				continue
			}
			if err := yield(ed); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyedPair is an object of a kind by key: running (now), wanted, or both.
type keyedPair struct {
	key       string
	now, want model.Object
}

// settable is want without the fields a client cannot set (read-only,
// transient) and, against an existing object, without its create-only ones.
func settable(k *model.Kind, want, now model.Object) model.Object {
	strip := false
	for _, f := range k.Fields {
		if _, ok := want[f.Name]; ok && (f.ReadOnly || f.Secret == model.Transient || (now != nil && f.CreateOnly && !f.Key)) {
			strip = true
		}
	}
	if !strip && len(want) <= len(k.Fields) {
		return want // nothing to take out: no copy (a restore of 100,000 objects)
	}
	out := make(model.Object, len(k.Fields))
	for _, f := range k.Fields {
		if f.ReadOnly || f.Secret == model.Transient || (now != nil && f.CreateOnly && !f.Key) {
			continue
		}
		if v, ok := want[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out
}

// sameSettings reports whether applying want to now would change nothing
// (an empty secret keeps the one set, as in an update).
func sameSettings(k *model.Kind, now, want model.Object) bool {
	for _, f := range k.Fields {
		if f.ReadOnly || f.Secret == model.Transient {
			continue
		}
		if f.Secret != model.Public && want.Str(f.Name) == "" {
			continue
		}
		if !equalValue(now[f.Name], want[f.Name]) {
			return false
		}
	}
	return true
}

// LogSuccess records in the config log an action that succeeded without a
// commit of its own (SaveConfig).
func (e *Engine) LogSuccess(ctx context.Context, meta Meta, info *LogInfo) error {
	return e.logSuccess(ctx, meta, info)
}
