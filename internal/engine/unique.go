package engine

import (
	"fmt"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// checkUnique enforces the model's UniqueWithin fields on the configuration
// the changes produce: no two objects of a kind may have the same value of
// such a field (an interface address, compared without its prefix length)
// while agreeing on the scoping fields (the VRF). Only kinds a change
// touches are walked.
func (v *view) checkUnique() error {
	touched := map[*model.Kind]bool{}
	for _, c := range v.changes {
		if c.After != nil && hasUnique(c.Kind) {
			touched[c.Kind] = true
		}
	}
	for k := range touched {
		if err := v.checkUniqueKind(k); err != nil {
			return err
		}
	}
	return nil
}

func hasUnique(k *model.Kind) bool {
	for _, f := range k.Fields {
		if f.UniqueWithin != nil {
			return true
		}
	}
	return false
}

func (v *view) checkUniqueKind(k *model.Kind) error {
	// The objects as the commit leaves them: stored ones not changed by
	// it, then the changes' results.
	type entry struct {
		key string
		obj model.Object
	}
	var objs []entry
	_, _, err := v.tx.List(k.Name, 0, int(^uint(0)>>1), func(rec store.Record) error {
		if v.pending[k.Name+"\x00"+rec.Key] != nil {
			return nil
		}
		obj, err := v.e.decode(k, rec)
		if err != nil {
			return err
		}
		objs = append(objs, entry{rec.Key, obj})
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range v.changes {
		if c.Kind == k && c.After != nil && v.pending[k.Name+"\x00"+c.Key] == c {
			objs = append(objs, entry{c.Key, c.After})
		}
	}
	for _, f := range k.Fields {
		if f.UniqueWithin == nil {
			continue
		}
		seen := map[string]string{} // scope NUL value -> key of the object holding it
		// Changed objects come last, so the message names the one already
		// holding the value.
		for _, o := range objs {
			val, ok := o.obj[f.Name]
			if !ok || val == "" {
				continue
			}
			var scope strings.Builder
			for _, n := range f.UniqueWithin {
				fmt.Fprintf(&scope, "%v\x00", o.obj[n])
			}
			id := scope.String() + f.UniqueValue(val)
			if other, dup := seen[id]; dup {
				e := apierr.Conflict(apierr.CodeConflict, k.Name, "%s: %s is already used by %s %s %s; it may be used once per %s",
					f.Name, f.UniqueValue(val), k.Name, k.DescribeKey(other), describeScope(f, o.obj), strings.Join(f.UniqueWithin, ", "))
				e.Field = f.Name
				return e
			}
			seen[id] = o.key
		}
	}
	return nil
}

func describeScope(f *model.Field, o model.Object) string {
	var parts []string
	for _, n := range f.UniqueWithin {
		parts = append(parts, fmt.Sprintf("%s %v", n, o[n]))
	}
	return "in " + strings.Join(parts, ", ")
}
