package backend

import (
	"context"
	"fmt"

	"github.com/swmgr/swmgr/internal/model"
)

// Transactional is a provider that applies its own kinds' changes in a
// transaction of its own, which it can still undo after all of them are
// made (the Linux dataplane: one kernel Tx, with its daemons'
// configurations). A Router applies a commit's changes of its kinds first,
// in that transaction, and the other providers' changes of the same
// commit before the transaction commits.
type Transactional interface {
	// Owns says whether the provider applies the kind's changes.
	Owns(kind string) bool
	// ApplyTransactions applies commits, which hold only changes of the
	// kinds it owns, as Batcher.ApplyBatch does: in order, each all or
	// nothing, stopping at the first that fails; it returns how many it
	// applied and that one's error. It may take several commits in one
	// transaction. Before a transaction commits, it calls then with the
	// commits that transaction holds, commits[first:end]; should then
	// fail, it undoes the transaction and that is the transaction's error.
	ApplyTransactions(ctx context.Context, commits []*Commit, then func(ctx context.Context, first, end int) error) (int, error)
}

// Router is the backend the engine applies configuration to: every
// provider's composed drivers (a binding table's), and the order in which a
// commit's changes reach the providers. With a Transactional provider its
// changes go first, in its transaction; then, before that commits, the
// other providers' changes of the same commits, in order, through their
// drivers; a failure there undoes those newest first, and then the
// transaction. Without one, each commit is applied through the drivers
// (ApplyCommit).
type Router struct {
	name    string
	drivers map[string]*Driver
	tx      Transactional
	release func() error
}

// NewRouter is the router named name (the dataplane's) over the composed
// drivers ds, with tx the transactional provider (nil: none); release,
// if set, is what Close releases (the dataplane).
func NewRouter(name string, ds map[string]*Driver, tx Transactional, release func() error) *Router {
	return &Router{name: name, drivers: ds, tx: tx, release: release}
}

// Name implements Backend: the dataplane's name.
func (r *Router) Name() string { return r.name }

// Drivers implements Backend: the composed drivers.
func (r *Router) Drivers() map[string]*Driver { return r.drivers }

// Close implements Backend.
func (r *Router) Close() error {
	if r.release == nil {
		return nil
	}
	return r.release()
}

// ApplyBatch implements Batcher.
func (r *Router) ApplyBatch(ctx context.Context, commits []*Commit) (int, error) {
	if r.tx == nil {
		for i, c := range commits {
			if err := ApplyCommit(ctx, r.drivers, c); err != nil {
				return i, err
			}
		}
		return len(commits), nil
	}
	own, other := make([]*Commit, len(commits)), make([]*Commit, len(commits))
	owned := make([][]bool, len(commits))
	for i, c := range commits {
		own[i], other[i], owned[i] = &Commit{}, &Commit{}, make([]bool, len(c.Changes))
		for j, ch := range c.Changes {
			if owned[i][j] = r.tx.Owns(ch.Kind.Name); owned[i][j] {
				own[i].Changes = append(own[i].Changes, ch)
			} else {
				other[i].Changes = append(other[i].Changes, ch)
			}
		}
	}
	then := func(ctx context.Context, first, end int) error {
		for i := first; i < end; i++ {
			if err := ApplyCommit(ctx, r.drivers, other[i]); err != nil {
				for j := i - 1; j >= first; j-- {
					if rerr := RevertCommit(ctx, r.drivers, other[j]); rerr != nil {
						return fmt.Errorf("%w (and undoing the changes before it failed: %v)", err, rerr)
					}
				}
				return err
			}
		}
		return nil
	}
	n, err := r.tx.ApplyTransactions(ctx, own, then)
	for i := range n {
		commits[i].Filled = merged(owned[i], own[i].Filled, other[i].Filled)
	}
	return n, err
}

// merged is a commit's Filled from its two parts': owned says, per
// change, which part applied it.
func merged(owned []bool, own, other []model.Object) []model.Object {
	out := make([]model.Object, len(owned))
	var o, x int
	for i, mine := range owned {
		if mine {
			if o < len(own) {
				out[i] = own[o]
			}
			o++
		} else {
			if x < len(other) {
				out[i] = other[x]
			}
			x++
		}
	}
	return out
}

// RevertCommit undoes an applied commit's changes through their drivers,
// newest first.
func RevertCommit(ctx context.Context, ds map[string]*Driver, c *Commit) error {
	for i := len(c.Changes) - 1; i >= 0; i-- {
		if err := Revert(ctx, ds, c.Changes[i]); err != nil {
			return err
		}
	}
	return nil
}

// Without returns the drivers (or actions) of ds whose kinds taken has
// none of: what one provider leaves to another (the simulated dataplane's
// kinds the Linux dataplane has no part in).
func Without[V comparable](ds, taken map[string]V) map[string]V {
	out := map[string]V{}
	var none V
	for kind, d := range ds {
		if taken[kind] == none {
			out[kind] = d
		}
	}
	return out
}
