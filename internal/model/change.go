package model

import (
	"github.com/google/uuid"
)

// Op is what a change does to an object.
type Op int

// The three operations on a config object.
const (
	Create Op = iota + 1
	Update
	Delete
)

func (o Op) String() string {
	switch o {
	case Create:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "none"
}

// Change is one object's resolved change. Before is nil on create, After on
// delete. Objects carry write-only fields in clear: a backend may need them.
// Prepared is what a driver computed for the change before it entered the
// writer (a password's hash), nil for most changes.
type Change struct {
	Kind     *Kind
	Op       Op
	Key      string
	Before   Object
	After    Object
	Prepared any
}

// Inverse returns the change that undoes c.
func (c Change) Inverse() Change {
	inv := Change{Kind: c.Kind, Key: c.Key, Before: c.After, After: c.Before}
	switch c.Op {
	case Create:
		inv.Op = Delete
	case Delete:
		inv.Op = Create
	default:
		inv.Op = Update
	}
	return inv
}

// Target picks an existing object: by ObjectId, or by its key fields.
type Target struct {
	ID  *uuid.UUID
	Key Object
}

// Edit is one requested change, before it is resolved against the running
// configuration.
type Edit struct {
	Kind    *Kind
	Op      Op
	Target  Target // update and delete
	Fields  Object // create and update: the fields given
	IfMatch string // update and delete: the ETag the client holds, if any
	ID      *uuid.UUID
	// System marks an edit made by the switch itself (discovery, a
	// rollback restoring an object): it may create or delete any kind,
	// and set read-only fields (what discovery found).
	System bool
	// Prepared is set before the edit enters the writer by the kind's
	// driver (see backend.Driver.Prepare) and handed on in its Change.
	Prepared any
	// Patch, when set on an update staged in a candidate, computes Fields
	// from the object as the candidate has it (the SDK's add/remove of list
	// elements), under the candidate's lock, so that it edits the list the
	// candidate holds at that moment.
	Patch func(cur Object) (Object, error)
}

// View is a configuration as a check sees it: the running configuration
// with a commit's changes applied. Checks read it and never change what it
// returns.
type View interface {
	// Get returns the object of kind with store key key, or nil.
	Get(kind, key string) Object
	// Each calls fn for every object of kind until fn returns false.
	Each(kind string, fn func(key string, o Object) bool) error
}

// Constraint is a rule over several objects of the resulting configuration
// (the last admin, one untagged VLAN per port). The check phase runs it on
// every path that changes configuration — direct writes, candidate staging,
// dry runs, commits, rollbacks, restores — whenever a change touches one of
// its Kinds.
type Constraint struct {
	Name  string
	Kinds []string
	// Check returns an *apierr.Error (409 or 400) when cfg breaks the rule;
	// changes are the commit's, for naming the culprit.
	Check func(cfg View, changes []Change) error
}
