package linux

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// Tx is one all-or-nothing set of kernel changes: each change is recorded
// with its exact inverse as it is made, and Rollback undoes them in reverse
// order, leaving the kernel as it was before the Tx.
type Tx struct {
	k     *Kernel
	steps []step
	n     int
	addrs map[*netlink.Handle]map[int][]netlink.Addr // per namespace, by ifindex: one dump per Tx
	// Changed lists what was done, for logs and the config log of a
	// reconciliation.
	Changed []string
	// stages hold what daemon-backed drivers batch per Tx (the BGP
	// configuration FRR is to run): each kind's change edits the stage,
	// and flush sends each stage to its daemon once, after every change.
	stages []*stage
}

type stage struct {
	name  string
	kind  string // the kind of the last change staged, for error messages
	value any
	flush func(tx *Tx, value any) error
}

type step struct {
	what string
	undo func() error
}

// Begin starts a Tx.
func (k *Kernel) Begin() *Tx { return &Tx{k: k, addrs: map[*netlink.Handle]map[int][]netlink.Addr{}} }

// Changes is how many kernel changes the Tx made.
func (tx *Tx) Changes() int { return tx.n }

// change makes one kernel change: do, and if it succeeds, remember undo.
func (tx *Tx) change(what string, do, undo func() error) error {
	tx.n++
	if tx.k.FailAt != nil {
		if err := tx.k.FailAt(tx.n, what); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := do(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	tx.steps = append(tx.steps, step{what: what, undo: undo})
	tx.Changed = append(tx.Changed, what)
	return nil
}

// Rollback undoes every change of the Tx, newest first. It goes on past
// an undo that fails, and reports all failures.
func (tx *Tx) Rollback() error {
	var errs []error
	for i := len(tx.steps) - 1; i >= 0; i-- {
		if err := tx.steps[i].undo(); err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", tx.steps[i].what, err))
		}
	}
	tx.steps = nil
	tx.addrs = map[*netlink.Handle]map[int][]netlink.Addr{}
	return errors.Join(errs...)
}

// staged returns the Tx's stage called name, made by init (with the flush
// that sends it) on first use.
func (tx *Tx) staged(name, kind string, init func() any, flush func(tx *Tx, value any) error) any {
	for _, s := range tx.stages {
		if s.name == name {
			s.kind = kind
			return s.value
		}
	}
	s := &stage{name: name, kind: kind, value: init(), flush: flush}
	tx.stages = append(tx.stages, s)
	return s.value
}

// flush sends every stage to its daemon, in the order they were first
// used; each flush records its own undo with change. On failure it names
// the kind whose change the daemon refused.
func (tx *Tx) flush() (kind string, err error) {
	for _, s := range tx.stages {
		if err := s.flush(tx, s.value); err != nil {
			return s.kind, err
		}
	}
	tx.stages = nil
	return "", nil
}

// Commit forgets the undo steps: the changes stay.
func (tx *Tx) Commit() { tx.steps = nil }

// addrsOf returns the IPv4 addresses of a link, from one dump of the
// namespace per Tx.
func (tx *Tx) addrsOf(h *netlink.Handle, ifindex int) ([]netlink.Addr, error) {
	byLink := tx.addrs[h]
	if byLink == nil {
		all, err := h.AddrList(nil, netlink.FAMILY_V4)
		if err != nil {
			return nil, fmt.Errorf("list addresses: %w", err)
		}
		byLink = map[int][]netlink.Addr{}
		for _, a := range all {
			byLink[a.LinkIndex] = append(byLink[a.LinkIndex], a)
		}
		tx.addrs[h] = byLink
	}
	return byLink[ifindex], nil
}

// forgetAddrs drops the cached addresses of a namespace (after a change
// that moves or deletes links).
func (tx *Tx) forgetAddrs(h *netlink.Handle) { delete(tx.addrs, h) }

func (tx *Tx) noteAddr(h *netlink.Handle, a netlink.Addr, add bool) {
	byLink := tx.addrs[h]
	if byLink == nil {
		return
	}
	if add {
		byLink[a.LinkIndex] = append(byLink[a.LinkIndex], a)
		return
	}
	list := byLink[a.LinkIndex]
	for i := range list {
		if list[i].IPNet.String() == a.IPNet.String() {
			byLink[a.LinkIndex] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}
