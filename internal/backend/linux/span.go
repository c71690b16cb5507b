package linux

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// SpanConfig is a mirror session: traffic of the source ports is copied to
// the destination port by tc: a clsact qdisc on each source, and on its
// ingress (RX), egress (TX) or both hooks a classifier that matches every
// packet (matchall, or u32 where the kernel lacks matchall) with a mirred
// "egress mirror" action to the destination. The session's filters carry a
// priority derived from its name and a handle swmgr gives only its own
// filters (spanHandle): swmgr changes and deletes a filter only when it
// has both, so another tool's filter that happens to sit at a session's
// priority is never touched (a session that would need its hook is
// refused instead).
type SpanConfig struct {
	Name    string
	Dst     string
	Src     []string
	Dir     string // RX, TX or BOTH
	AdminUp bool
}

// SpanPriority is the tc priority of a session's filters (1000..30999).
func SpanPriority(name string) uint16 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return uint16(1000 + h.Sum32()%30000)
}

// spanMark is the handle swmgr gives its mirror filter on a hook, its mark
// of ownership: for matchall the whole handle; for u32 the node id (the
// kernel puts the node in the priority's root hash table, whose id it
// chooses, and numbers other nodes from 0x800). Ingress and egress have
// different marks: clsact's two hooks share u32's hash tables, and the
// kernel lists the nodes of both hooks' tables of a priority under either
// hook.
func spanMark(hook uint32, matchall bool) uint32 {
	node := uint32(0x5a5)
	if hook == parentEgress {
		node = 0x5a6
	}
	if matchall {
		return 0x53570000 | node
	}
	return node
}

// spanOwner says whose a filter at a session's priority is.
type spanOwner int

const (
	spanForeign spanOwner = iota // another tool's: never changed or deleted
	spanOwn                      // swmgr's, on this hook
	spanSkip                     // a u32 hash table, or swmgr's node of the other hook
)

// ownerOf classifies a filter listed at a session's priority on hook. dst
// (0: unknown) is the session's destination: a filter made before swmgr
// marked its filters (matchall handle 1, or a u32 node the kernel
// numbered) is swmgr's only if it mirrors to exactly that port.
func ownerOf(f netlink.Filter, hook uint32, dst int) spanOwner {
	acts := actionsOf(f)
	h := f.Attrs().Handle
	_, u32 := f.(*netlink.U32)
	if u32 && len(acts) == 0 && h&0xfff == 0 {
		return spanSkip
	}
	mirror := false
	if len(acts) == 1 {
		m, ok := acts[0].(*netlink.MirredAction)
		mirror = ok && m.MirredAction == netlink.TCA_EGRESS_MIRROR
	}
	if !mirror {
		return spanForeign
	}
	other := uint32(parentIngress)
	if hook == parentIngress {
		other = parentEgress
	}
	switch f.(type) {
	case *netlink.MatchAll:
		if h == spanMark(hook, true) || h == 1 && dst != 0 && mirrorTarget(f) == dst {
			return spanOwn
		}
	case *netlink.U32:
		switch node := h & 0xfff; {
		case node == spanMark(hook, false):
			return spanOwn
		case node == spanMark(other, false):
			return spanSkip
		case node >= 0x800 && dst != 0 && mirrorTarget(f) == dst:
			return spanOwn
		}
	}
	return spanForeign
}

func (c SpanConfig) hooks() []uint32 {
	switch c.Dir {
	case "RX":
		return []uint32{parentIngress}
	case "TX":
		return []uint32{parentEgress}
	}
	return []uint32{parentIngress, parentEgress}
}

// CheckSpan is the pure capability check of a mirror session; others are
// the other sessions (for priority clashes).
func (k *Kernel) CheckSpan(c SpanConfig, others []SpanConfig) error {
	if !k.feat.Mirred {
		return refuse("Span", "session %s: this kernel has no tc mirred action or classifier to mirror with", c.Name)
	}
	for _, o := range others {
		if o.Name != c.Name && SpanPriority(o.Name) == SpanPriority(c.Name) {
			return refuse("SpanSessionName", "session %s: its tc priority clashes with session %s; choose another name", c.Name, o.Name)
		}
	}
	dh, _, err := k.findLink(c.Dst)
	if err != nil {
		return refuse("DstIntfRef", "session %s: destination %s does not exist", c.Name, c.Dst)
	}
	for _, s := range c.Src {
		sh, sl, err := k.findLink(s)
		if err != nil {
			return refuse("SrcIntfRefList", "session %s: source %s does not exist", c.Name, s)
		}
		if sh != dh {
			return refuse("SrcIntfRefList", "session %s: source %s and destination %s are in different VRF namespaces; tc cannot mirror across namespaces (this kernel has no VRF devices)", c.Name, s, c.Dst)
		}
		if !c.AdminUp {
			continue
		}
		for _, hook := range c.hooks() {
			_, foreign, err := spanFilter(sh, sl, hook, SpanPriority(c.Name), k.indexOf(c.Dst))
			if err != nil {
				return err
			}
			if foreign {
				return refuse("SpanSessionName", "session %s: tc priority %d on the %s hook of %s holds a filter swmgr did not make, which it leaves alone; choose another SpanSessionName (the priority is a hash of the name)", c.Name, SpanPriority(c.Name), hookName(hook), s)
			}
		}
	}
	return nil
}

// EnsureSpan installs (AdminUp) or removes (down) the session's filters;
// old, if set, is the configuration it replaces.
func (tx *Tx) EnsureSpan(c SpanConfig, old *SpanConfig) error {
	if old != nil {
		// Filters of sources or directions the session no longer has go.
		for _, s := range old.Src {
			for _, hook := range old.hooks() {
				if c.AdminUp && slices.Contains(c.Src, s) && slices.Contains(c.hooks(), hook) {
					continue
				}
				if err := tx.delSpanFilter(s, hook, SpanPriority(old.Name), old.Dst); err != nil {
					return err
				}
			}
		}
	}
	if !c.AdminUp {
		return tx.RemoveSpan(c)
	}
	dh, dst, err := tx.k.findLink(c.Dst)
	if err != nil {
		return fmt.Errorf("session %s: %w", c.Name, err)
	}
	prio := SpanPriority(c.Name)
	for _, s := range c.Src {
		h, src, err := tx.k.findLink(s)
		if err != nil {
			return fmt.Errorf("session %s: %w", c.Name, err)
		}
		if h != dh {
			return fmt.Errorf("session %s: %s and %s are in different namespaces", c.Name, s, c.Dst)
		}
		if err := tx.ensureClsact(h, src); err != nil {
			return err
		}
		for _, hook := range c.hooks() {
			own, foreign, err := spanFilter(h, src, hook, prio, dst.Attrs().Index)
			if err != nil {
				return err
			}
			if foreign {
				return fmt.Errorf("session %s: tc priority %d on the %s hook of %s holds a filter swmgr did not make; choose another SpanSessionName", c.Name, prio, hookName(hook), s)
			}
			if len(own) == 1 && own[0].Attrs().Handle&0xfff == spanMark(hook, false)&0xfff && mirrorTarget(own[0]) == dst.Attrs().Index {
				continue
			}
			for _, f := range own {
				if err := tx.delFilter(h, s, hook, f); err != nil {
					return err
				}
			}
			f := tx.k.mirrorFilter(src.Attrs().Index, hook, prio, dst.Attrs().Index)
			if err := tx.change(fmt.Sprintf("mirror %s %s to %s (%s)", s, hookName(hook), c.Dst, f.Type()),
				func() error { return h.FilterAdd(f) },
				func() error { return delMarked(h, src, hook, prio) }); err != nil {
				return err
			}
		}
	}
	return nil
}

func hookName(hook uint32) string {
	if hook == parentIngress {
		return "ingress"
	}
	return "egress"
}

func (k *Kernel) mirrorFilter(src int, hook uint32, prio uint16, dst int) netlink.Filter {
	act := []netlink.Action{&netlink.MirredAction{ActionAttrs: netlink.ActionAttrs{Action: netlink.TC_ACT_PIPE}, MirredAction: netlink.TCA_EGRESS_MIRROR, Ifindex: dst}}
	attrs := filterAttrs(src, hook, prio)
	attrs.Handle = spanMark(hook, k.feat.MatchAll)
	if k.feat.MatchAll {
		return &netlink.MatchAll{FilterAttrs: attrs, Actions: act}
	}
	return &netlink.U32{FilterAttrs: attrs, Sel: matchAnySel(), Actions: act}
}

// spanFilter lists swmgr's filters (ownerOf) among those at a session's
// priority on one hook of a source; foreign reports a filter there that
// swmgr did not make.
func spanFilter(h *netlink.Handle, l netlink.Link, hook uint32, prio uint16, dst int) (own []netlink.Filter, foreign bool, err error) {
	fs, err := h.FilterList(l, hook)
	if err != nil {
		return nil, false, fmt.Errorf("list filters of %s: %w", l.Attrs().Name, err)
	}
	for _, f := range fs {
		if f.Attrs().Priority != prio {
			continue
		}
		switch ownerOf(f, hook, dst) {
		case spanOwn:
			own = append(own, f)
		case spanForeign:
			foreign = true
		}
	}
	return own, foreign, nil
}

// delMarked deletes the filter with swmgr's mark at prio on hook: a u32
// node is deleted by the handle the kernel completed (its hash table's).
func delMarked(h *netlink.Handle, l netlink.Link, hook uint32, prio uint16) error {
	own, _, err := spanFilter(h, l, hook, prio, 0)
	if err != nil {
		return err
	}
	for _, f := range own {
		if err := h.FilterDel(f); err != nil {
			return err
		}
	}
	return nil
}

// indexOf is a netdev's ifindex, 0 if it does not exist.
func (k *Kernel) indexOf(netdev string) int {
	if _, l, err := k.findLink(netdev); err == nil {
		return l.Attrs().Index
	}
	return 0
}

func actionsOf(f netlink.Filter) []netlink.Action {
	switch v := f.(type) {
	case *netlink.MatchAll:
		return v.Actions
	case *netlink.U32:
		return v.Actions
	}
	return nil
}

func mirrorTarget(f netlink.Filter) int {
	for _, a := range actionsOf(f) {
		if m, ok := a.(*netlink.MirredAction); ok {
			return m.Ifindex
		}
	}
	return 0
}

func (tx *Tx) ensureClsact(h *netlink.Handle, l netlink.Link) error {
	qs, err := h.QdiscList(l)
	if err != nil {
		return fmt.Errorf("list qdiscs of %s: %w", l.Attrs().Name, err)
	}
	for _, q := range qs {
		if q.Type() == "clsact" {
			return nil
		}
	}
	q := clsact(l.Attrs().Index)
	return tx.change("add clsact qdisc to "+l.Attrs().Name,
		func() error { return h.QdiscAdd(q) },
		func() error { return h.QdiscDel(q) })
}

// delSpanFilter removes swmgr's filters of a session (whose destination
// is dst) from one hook of a source; another tool's stay.
func (tx *Tx) delSpanFilter(src string, hook uint32, prio uint16, dst string) error {
	h, l, err := tx.k.findLink(src)
	if err != nil {
		return nil
	}
	own, _, err := spanFilter(h, l, hook, prio, tx.k.indexOf(dst))
	if err != nil {
		return err
	}
	for _, f := range own {
		if err := tx.delFilter(h, src, hook, f); err != nil {
			return err
		}
	}
	return nil
}

// delFilter removes one of swmgr's mirror filters; the inverse adds it back
// (with swmgr's mark).
func (tx *Tx) delFilter(h *netlink.Handle, src string, hook uint32, f netlink.Filter) error {
	again := tx.k.mirrorFilter(f.Attrs().LinkIndex, hook, f.Attrs().Priority, mirrorTarget(f))
	return tx.change(fmt.Sprintf("stop mirroring %s %s", src, hookName(hook)),
		func() error { return h.FilterDel(f) },
		func() error { return h.FilterAdd(again) })
}

// RemoveSpan removes the session's filters, and a source's clsact qdisc
// when no filter is left on it.
func (tx *Tx) RemoveSpan(c SpanConfig) error {
	prio := SpanPriority(c.Name)
	for _, s := range c.Src {
		for _, hook := range []uint32{parentIngress, parentEgress} {
			if err := tx.delSpanFilter(s, hook, prio, c.Dst); err != nil {
				return err
			}
		}
		h, l, err := tx.k.findLink(s)
		if err != nil {
			continue
		}
		in, err1 := h.FilterList(l, parentIngress)
		out, err2 := h.FilterList(l, parentEgress)
		if err1 != nil || err2 != nil || len(in)+len(out) > 0 {
			continue
		}
		qs, err := h.QdiscList(l)
		if err != nil {
			return err
		}
		for _, q := range qs {
			if q.Type() == "clsact" {
				q := clsact(l.Attrs().Index)
				if err := tx.change("delete clsact qdisc of "+s,
					func() error { return h.QdiscDel(q) },
					func() error { return h.QdiscAdd(q) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SpanState counts what a session's filters matched.
type SpanState struct {
	Filters int    // installed filters
	Packets uint64 // mirrored packets, all filters
}

// SpanStateOf reads a session's filters and their action counters.
func (k *Kernel) SpanStateOf(c SpanConfig) (SpanState, error) {
	var st SpanState
	prio := SpanPriority(c.Name)
	for _, s := range c.Src {
		h, l, err := k.findLink(s)
		if err != nil {
			continue
		}
		for _, hook := range []uint32{parentIngress, parentEgress} {
			own, _, err := spanFilter(h, l, hook, prio, k.indexOf(c.Dst))
			if err != nil {
				return st, err
			}
			for _, f := range own {
				st.Filters++
				for _, a := range actionsOf(f) {
					if m, ok := a.(*netlink.MirredAction); ok && m.Statistics != nil {
						st.Packets += uint64(m.Statistics.Basic.Packets)
					}
				}
			}
		}
	}
	return st, nil
}

// spanDriver is the Span kind on the Linux backend.
var spanDriver = &driver{
	check: func(b *Backend, c changeView) error {
		s, err := b.spanConfig(c.after())
		if err != nil {
			return err
		}
		var others []SpanConfig
		for _, o := range b.appliedOf("Span") {
			if oc, err := b.spanConfig(o); err == nil {
				others = append(others, oc)
			}
		}
		return b.k.CheckSpan(s, others)
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		s, err := b.spanConfig(after)
		if err != nil {
			return err
		}
		var old *SpanConfig
		if before != nil {
			if o, err := b.spanConfig(before); err == nil {
				old = &o
			}
		}
		return tx.EnsureSpan(s, old)
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		s, err := b.spanConfig(before)
		if err != nil {
			return err
		}
		return tx.RemoveSpan(s)
	},
}

func (b *Backend) spanConfig(o model.Object) (SpanConfig, error) {
	dst, _, err := b.netdevOf(o.Str("DstIntfRef"))
	if err != nil {
		return SpanConfig{}, err
	}
	c := SpanConfig{Name: o.Str("SpanSessionName"), Dst: dst, Dir: o.Str("MirrorDir"), AdminUp: o.Str("AdminState") != "DOWN"}
	for _, s := range o.List("SrcIntfRefList") {
		d, _, err := b.netdevOf(s)
		if err != nil {
			return SpanConfig{}, err
		}
		c.Src = append(c.Src, d)
	}
	return c, nil
}
