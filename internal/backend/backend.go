// Package backend defines how swmgr makes configuration real on a switch.
//
// A backend registers one Driver per kind it handles (Drivers). The engine
// refuses to start when a config kind has no driver, naming the kind, so a
// new kind cannot be forgotten by a backend. A driver has:
//
//   - Check: a pure check of what the switch can do (supported speeds,
//     lanes, mirror sessions), run on the resulting configuration by the
//     engine's check phase on every path (writes, dry runs, staging,
//     commits, rollbacks, restores); it does no I/O;
//   - Prepare: slow work done before a change enters the single writer (a
//     password's hash);
//   - Apply and Revert: the I/O only, one change at a time; Apply returns the
//     read-only fields the switch filled in (a sub-port's IfIndex) as values;
//   - State, List, Discover, Replay: operational state, the objects of a
//     state-only kind, what the switch has by itself, and whether stored
//     objects must be handed over again at start;
//   - Reconcile, Settle and Sync: for a kind whose I/O is written behind
//     (the simulated switch's account files), the repair at start, which
//     applied changes the store has (only those may be written), and the
//     durability a commit's answer waits for.
//
// A backend that can apply several commits at once (one netlink batch, one
// routing-daemon reload) implements Batcher; the engine hands it the commits
// it group-commits together, each still all-or-nothing.
//
// The engine applies through the service's Router (router.go): every
// provider's composed drivers, and the order of a commit's changes across
// providers: a Transactional provider's (the Linux dataplane's kernel
// transaction) first, the others' before that transaction commits, undone
// newest first should one fail.
package backend

import (
	"context"
	"fmt"

	"github.com/swmgr/swmgr/internal/model"
)

// Op, Change and their constants live with the model; these names keep
// backends short.
type (
	Op     = model.Op
	Change = model.Change
)

// The operations on an object.
const (
	Create = model.Create
	Update = model.Update
	Delete = model.Delete
)

// Driver is what a backend does for one kind. Every function may be nil.
type Driver struct {
	// Check refuses (*apierr.Error) a change the switch cannot carry out,
	// looking at the resulting configuration cfg only. It must be pure.
	Check func(cfg model.View, c Change) error
	// Prepare does slow work for an edit before it enters the writer; what
	// it returns reaches Apply as Change.Prepared.
	Prepare func(ctx context.Context, ed *model.Edit) (any, error)
	// Apply makes one change real. It returns the read-only fields the
	// switch set (nil for none); the engine stores them with the object.
	Apply func(ctx context.Context, c Change) (model.Object, error)
	// Revert undoes an applied change; nil means Apply(c.Inverse()).
	Revert func(ctx context.Context, c Change) error
	// State returns the operational fields of obj's state form.
	State func(ctx context.Context, obj model.Object) (model.Object, error)
	// List returns the objects of a state-only kind, in a stable order.
	List func(ctx context.Context) ([]model.Object, error)
	// Discover returns the objects of the kind the switch has by itself
	// (its ports; the read-only fields of a singleton).
	Discover func(ctx context.Context) ([]model.Object, error)
	// Replay asks for the stored objects of the kind at every start, for a
	// backend that keeps no state of its own for them.
	Replay bool
	// Reconcile, at every start after the replay, is given the stored
	// objects of the kind and makes the switch's own copy of them match
	// (the simulated switch's account files); it returns what it repaired,
	// for the log. It is for kinds whose stored objects cannot simply be
	// replayed through Apply (a User's password is not stored).
	Reconcile func(ctx context.Context, stored []model.Object) (repaired []string, err error)
	// Settle, if set, is told after every batch of commits that applied
	// changes of the kind whether the store took them (committed true) or
	// they were undone (false: the store write failed, and Revert has run).
	// A driver that writes behind must make durable (Sync, and any write of
	// its own) only changes settled as committed: Apply runs before the
	// store write, and Sync may run at any time from another commit's
	// answer, so writing what Apply left in memory could put on disk a
	// change the store never gets; after a crash Reconcile could only
	// "repair" it by losing what the store does not hold (a deleted
	// account's password hash). The engine calls it in the single writer,
	// before any commit of the batch is answered; it must be quick.
	Settle func(committed bool)
	// Sync, if set, makes durable what Apply did to the kind and Settle
	// declared committed: Apply may leave it in memory (the simulated
	// switch's account files are written behind). The engine calls it
	// outside the single writer once a commit that changed the kind is in
	// the store, and answers that commit only after it returns; the other
	// commits of the batch do not wait for it. A crash before it returns
	// loses only what was not answered, and Reconcile at the next start
	// brings the switch back to the store.
	Sync func(ctx context.Context) error
}

// Backend is a switch that configuration is applied to.
type Backend interface {
	// Name is "sim" or "linux".
	Name() string
	// Drivers returns the driver of each kind the backend handles, by kind
	// name.
	Drivers() map[string]*Driver
	// Close releases what the backend holds.
	Close() error
}

// Commit is one commit's changes as handed to a Batcher. Filled receives,
// per change, the read-only fields the switch set.
type Commit struct {
	Changes []Change
	Filled  []model.Object
}

// Batcher is a backend that applies several commits in one go. It applies
// them in order, each all or nothing, and stops at the first that fails:
// it returns how many it applied and that one's error. Commits after it are
// not attempted (the engine resolves them again).
type Batcher interface {
	ApplyBatch(ctx context.Context, commits []*Commit) (applied int, err error)
}

// CheckDrivers reports the first config kind of reg that b has no driver
// for, and any driver for a kind reg does not know.
func CheckDrivers(reg *model.Registry, b Backend) error {
	ds := b.Drivers()
	for _, k := range reg.Kinds() {
		if k.Class == model.Config && ds[k.Name] == nil {
			return fmt.Errorf("the %s backend has no driver for config kind %s", b.Name(), k.Name)
		}
	}
	for name := range ds {
		if k := reg.Named(name); k == nil || k.Class == model.Action {
			return fmt.Errorf("the %s backend has a driver for %s, which is not a kind", b.Name(), name)
		}
	}
	return nil
}

// ApplyBatch applies commits through b's own batch when b is a Batcher,
// else one by one through the drivers ds (b's): how many it applied, and
// the error of the one that failed. The engine applies each batch through
// it, so that it need not know whether its backend batches.
func ApplyBatch(ctx context.Context, b Backend, ds map[string]*Driver, commits []*Commit) (int, error) {
	if bb, ok := b.(Batcher); ok {
		return bb.ApplyBatch(ctx, commits)
	}
	for i, c := range commits {
		if err := ApplyCommit(ctx, ds, c); err != nil {
			return i, err
		}
	}
	return len(commits), nil
}

// ApplyCommit applies one commit's changes through their drivers, in order,
// all or nothing: after a failure it reverts what it applied, newest first.
func ApplyCommit(ctx context.Context, ds map[string]*Driver, c *Commit) error {
	c.Filled = make([]model.Object, len(c.Changes))
	for i, ch := range c.Changes {
		d := ds[ch.Kind.Name]
		if d == nil || d.Apply == nil {
			continue
		}
		filled, err := d.Apply(ctx, ch)
		if err != nil {
			for j := i - 1; j >= 0; j-- {
				if rerr := Revert(ctx, ds, c.Changes[j]); rerr != nil {
					return fmt.Errorf("%w (and undoing the changes before it failed: %v)", err, rerr)
				}
			}
			return err
		}
		c.Filled[i] = filled
	}
	return nil
}

// Revert undoes one applied change through its driver.
func Revert(ctx context.Context, ds map[string]*Driver, c Change) error {
	d := ds[c.Kind.Name]
	switch {
	case d == nil:
		return nil
	case d.Revert != nil:
		return d.Revert(ctx, c)
	case d.Apply != nil:
		_, err := d.Apply(ctx, c.Inverse())
		return err
	}
	return nil
}
