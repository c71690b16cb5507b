package gnmi

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// memberState is what the change feed's follower knows of the objects
// that membership leaves gather (the kinds of OpenConfig Member rows: all
// the Vlans, for a port's switched-vlan): read once, when the first group
// of subscriptions starts, and kept by applying each commit's changes in
// commit order. So the leaves a commit changes are made of the objects
// exactly as they were before and after it, for every group at once, with
// no read per commit: a read made when a group builds its notification
// may hold later commits too, and a leaf made of those, then compared at
// the next commit with what the objects were before it, was never deleted
// (TestNewSubscribersMissNoCommit). The join that starts the first group
// reads it; from then on only the follower's goroutine uses it. The
// fanout drops it when its last group ends, or when the feed's commits
// were lost.
type memberState struct {
	rev   uint64 // the revision read: the commits up to it are in objs
	kinds map[string]*memberKind
}

// memberKind is one kind's objects by key.
type memberKind struct {
	k     *model.Kind
	lists []string // the Member lists of its rows
	objs  map[string]*memberObj
}

// memberObj is an object decoded into its fields, and the members its
// Member lists hold; never modified once made (a change replaces it).
type memberObj struct {
	fields  map[string]json.RawMessage
	members map[string]bool
}

func (mk *memberKind) obj(fields map[string]json.RawMessage) *memberObj {
	o := &memberObj{fields: fields, members: map[string]bool{}}
	mk.addMembers(o.members, fields)
	return o
}

// addMembers adds to set the members an object's Member lists hold.
func (mk *memberKind) addMembers(set map[string]bool, fields map[string]json.RawMessage) {
	for _, l := range mk.lists {
		var members []string
		_ = json.Unmarshal(fields[l], &members)
		for _, m := range members {
			set[m] = true
		}
	}
}

// memberChange is what one commit did to the objects of a kind that
// hold the members it moved: the objects that hold any of them (only),
// before and after it, in key order. Shared by every group.
type memberChange struct {
	only    map[string]bool
	was, is []map[string]json.RawMessage
}

// memberLists are the Member lists of each kind's configuration rows.
func (t *ocTree) memberLists() map[*model.Kind][]string {
	out := map[*model.Kind][]string{}
	for _, e := range t.entries {
		if !e.member() || e.row.State {
			continue
		}
		for _, l := range e.row.Member {
			if !slices.Contains(out[e.kind], l) {
				out[e.kind] = append(out[e.kind], l)
			}
		}
	}
	return out
}

// readMembers reads the objects of the kinds with Member rows, and the
// revision they are at, in one view of the store; nil when there are none.
func (s *Server) readMembers(ctx context.Context) (*memberState, error) {
	lists := s.oc.memberLists()
	if len(lists) == 0 {
		return nil, nil
	}
	ms := &memberState{kinds: map[string]*memberKind{}}
	s.memberReads.Add(1)
	err := s.o.Engine.Store().View(func(tx store.Txn) error {
		v := s.o.Engine.NewView(tx)
		ms.rev = v.Revision()
		for k, l := range lists {
			mk := &memberKind{k: k, lists: l, objs: map[string]*memberObj{}}
			ms.kinds[k.Name] = mk
			var err error
			werr := v.Each(k.Name, func(_ string, o model.Object) bool {
				if ctx.Err() != nil {
					err = ctx.Err()
					return false
				}
				var fields map[string]json.RawMessage
				if err = json.Unmarshal(k.AppendJSON(nil, o, false), &fields); err != nil {
					return false
				}
				mk.objs[mk.key(fields)] = mk.obj(fields)
				return true
			})
			if werr != nil {
				return werr
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ms, nil
}

func (mk *memberKind) key(o map[string]json.RawMessage) string {
	var b strings.Builder
	for i, f := range mk.k.Keys() {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(rawText(o[f.Name]))
	}
	return b.String()
}

// apply takes one commit, in commit order: its changes of the kinds kept
// change the objects, and the first of them of each kind carries what
// the commit did to them (change.members). A commit the read already
// holds changes nothing.
func (ms *memberState) apply(rev uint64, e *decodedEvent) {
	if ms == nil || rev <= ms.rev {
		return
	}
	ms.rev = rev
	var first map[string]*change // kind -> its first change in the commit
	only := map[string]map[string]bool{}
	for _, c := range e.changes {
		mk := ms.kinds[c.Kind]
		if mk == nil {
			continue
		}
		if first == nil {
			first = map[string]*change{}
		}
		if first[c.Kind] == nil {
			first[c.Kind] = c
			only[c.Kind] = map[string]bool{}
		}
		after, before := c.maps()
		mk.addMembers(only[c.Kind], before)
		mk.addMembers(only[c.Kind], after)
	}
	for kind, c := range first {
		mk := ms.kinds[kind]
		mc := &memberChange{only: only[kind], was: mk.holding(only[kind])}
		for _, ch := range e.changes {
			if ch.Kind != kind {
				continue
			}
			after, before := ch.maps()
			if ch.Op == "delete" {
				delete(mk.objs, mk.key(before))
			} else if after != nil {
				mk.objs[mk.key(after)] = mk.obj(after)
			}
		}
		mc.is = mk.holding(only[kind])
		c.members = mc
	}
}

// holding are the objects whose Member lists hold any of only, in key
// order.
func (mk *memberKind) holding(only map[string]bool) []map[string]json.RawMessage {
	var keys []string
	for k, o := range mk.objs {
		for m := range only {
			if o.members[m] {
				keys = append(keys, k)
				break
			}
		}
	}
	sort.Strings(keys)
	out := make([]map[string]json.RawMessage, len(keys))
	for i, k := range keys {
		out[i] = mk.objs[k].fields
	}
	return out
}
