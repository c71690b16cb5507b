package engine

import (
	"sort"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// refsOf lists the objects o names through reference fields.
func refsOf(k *model.Kind, o model.Object) []store.Ref {
	var refs []store.Ref
	for _, f := range k.Fields {
		if o == nil {
			continue
		}
		for _, fr := range refValues(f, o) {
			for _, r := range fr.targets() {
				if !containsRef(refs, r) {
					refs = append(refs, r)
				}
			}
		}
	}
	return refs
}

// targets are the objects the values name.
func (fr fieldRefs) targets() []store.Ref {
	var refs []store.Ref
	for _, val := range fr.values {
		if val == "" || val == fr.field.RefImplied {
			continue
		}
		r := store.Ref{}
		r.Kind, r.Key = fr.field.RefTarget(val)
		refs = append(refs, r)
	}
	return refs
}

// fieldRefs are the values one reference field (or sub-field) of an
// object holds.
type fieldRefs struct {
	field  *model.Field
	path   string // Field or Field.Sub, for messages
	values []string
}

// refValues lists the values of f that name objects: f's own when it is a
// reference, and those of its reference sub-fields in every element of a
// RecordList (a policy's statements, a redistribution's policy).
func refValues(f *model.Field, o model.Object) []fieldRefs {
	if f.Type == model.RecordList {
		var out []fieldRefs
		for _, s := range f.Sub {
			if s.Ref == "" {
				continue
			}
			fr := fieldRefs{field: s, path: f.Name + "." + s.Name}
			for _, e := range o.Records(f.Name) {
				fr.values = append(fr.values, e.Str(s.Name))
			}
			out = append(out, fr)
		}
		return out
	}
	if f.Ref == "" {
		return nil
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
	return []fieldRefs{{field: f, path: f.Name, values: vals}}
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
			for _, fr := range refValues(f, c.After) {
				name := fr.path
				for _, r := range fr.targets() {
					target := v.e.reg.Lookup(model.Config, r.Kind)
					cur, err := v.lookup(target, r.Key)
					if err != nil {
						return err
					}
					if cur == nil {
						return apierr.BadRequest(apierr.CodeDanglingReference, c.Kind.Name, f.Name, "%s: %s %q does not exist", name, r.Kind, r.Key)
					}
					if target.Referable != nil {
						if err := target.Referable(cur.obj); err != nil {
							e := apierr.From(err)
							return apierr.BadRequest(apierr.CodeInvalidValue, c.Kind.Name, f.Name, "%s: %s", name, e.Message)
						}
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
