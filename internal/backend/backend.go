// Package backend defines how swmgr makes configuration real on a switch.
//
// The engine hands a backend an ordered list of changes, all of which must
// take effect or none (Apply undoes its own partial work before returning an
// error). Reads of operational state go through State. Implementations live
// in sub-packages: sim (a simulated switch, the default) and, later, linux.
package backend

import (
	"context"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/model"
)

// Op is what a change does to an object.
type Op int

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

// Change is one object's change. Before is nil on create, After on delete.
// Objects carry write-only fields in clear: a backend may need them.
type Change struct {
	Kind   *model.Kind
	Op     Op
	Key    string
	Before model.Object
	After  model.Object
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

// Backend is a switch that configuration is applied to.
type Backend interface {
	// Name is "sim" or "linux".
	Name() string
	// Discover returns what the switch has by itself, by kind name: its
	// front-panel ports, and the read-only fields of singletons (SwVersion,
	// SwitchMac).
	Discover(ctx context.Context) (map[string][]model.Object, error)
	// Replays reports whether the backend needs the stored objects of a
	// kind handed to it again at every start, because it keeps no state of
	// its own for them (the simulated switch forgets everything).
	Replays(kind *model.Kind) bool
	// Apply makes the changes real, in order, all or nothing. It may fill
	// the read-only fields of created objects (a new sub-port's IfIndex).
	// An *apierr.Error return tells the client what the switch refused.
	Apply(ctx context.Context, changes []Change) error
	// State returns the operational fields of the state form of obj.
	State(ctx context.Context, kind *model.Kind, obj model.Object) (model.Object, error)
	// Close releases what the backend holds.
	Close() error
}

// AccountKeeper is a backend that keeps the switch's user accounts: it
// applies User objects to them, and the UserPassword action and the
// authentication of REST requests use them.
type AccountKeeper interface {
	// Accounts returns the accounts, or nil if the backend has none.
	Accounts() accounts.Accounts
}
