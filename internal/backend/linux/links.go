package linux

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The kernel changes every kind is made of, each with its exact inverse.
// Changes that make the kernel drop state on its own (enslaving a link
// flushes its routes, moving it to another namespace flushes its addresses
// and brings it down, deleting a link drops both) capture that state first
// and put it back in the inverse.

func (tx *Tx) setUp(h *netlink.Handle, l netlink.Link, up bool) error {
	name := l.Attrs().Name
	isUp := l.Attrs().Flags&net.FlagUp != 0
	if isUp == up {
		return nil
	}
	set := func(u bool) func() error {
		return func() error {
			if u {
				return h.LinkSetUp(l)
			}
			return h.LinkSetDown(l)
		}
	}
	saved := tx.savedRoutes(h, l.Attrs().Index)
	return tx.change(fmt.Sprintf("set %s %s", name, upDown(up)), set(up), func() error {
		if err := set(!up)(); err != nil {
			return err
		}
		return restoreRoutes(h, saved)
	})
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

func (tx *Tx) setMTU(h *netlink.Handle, l netlink.Link, mtu int) error {
	old := l.Attrs().MTU
	if mtu == 0 || old == mtu {
		return nil
	}
	return tx.change(fmt.Sprintf("set %s mtu %d", l.Attrs().Name, mtu),
		func() error { return h.LinkSetMTU(l, mtu) },
		func() error { return h.LinkSetMTU(l, old) })
}

func (tx *Tx) setAlias(h *netlink.Handle, l netlink.Link, alias string) error {
	old := l.Attrs().Alias
	if old == alias {
		return nil
	}
	return tx.change(fmt.Sprintf("set %s alias %q", l.Attrs().Name, alias),
		func() error { return h.LinkSetAlias(l, alias) },
		func() error { return h.LinkSetAlias(l, old) })
}

// setMaster enslaves l to the link with index master (0: release it).
func (tx *Tx) setMaster(h *netlink.Handle, l netlink.Link, master int) error {
	old := l.Attrs().MasterIndex
	if old == master {
		return nil
	}
	saved := tx.savedRoutes(h, l.Attrs().Index)
	set := func(m int) error {
		if m == 0 {
			return h.LinkSetNoMaster(l)
		}
		return h.LinkSetMasterByIndex(l, m)
	}
	return tx.change(fmt.Sprintf("set %s master %d (was %d)", l.Attrs().Name, master, old),
		func() error { return set(master) },
		func() error {
			if err := set(old); err != nil {
				return err
			}
			return restoreRoutes(h, saved)
		})
}

// moveLink moves l from the namespace of from to that of to (whose
// namespace handle is toNS).
func (tx *Tx) moveLink(from *netlink.Handle, l netlink.Link, to *netlink.Handle, toNS, fromNS netns.NsHandle) error {
	name := l.Attrs().Name
	wasUp := l.Attrs().Flags&net.FlagUp != 0
	addrs, err := tx.addrsOf(from, l.Attrs().Index)
	if err != nil {
		return err
	}
	addrs = append([]netlink.Addr(nil), addrs...)
	saved := tx.savedRoutes(from, l.Attrs().Index)
	tx.forgetAddrs(from)
	tx.forgetAddrs(to)
	return tx.change(fmt.Sprintf("move %s to another namespace", name),
		func() error {
			if err := from.LinkSetNsFd(l, int(toNS)); err != nil {
				return err
			}
			if !wasUp {
				return nil
			}
			// Moving brings a link down; its admin state is the Port's.
			moved, err := to.LinkByName(name)
			if err != nil {
				return err
			}
			return to.LinkSetUp(moved)
		},
		func() error {
			moved, err := to.LinkByName(name)
			if err != nil {
				return err
			}
			if err := to.LinkSetNsFd(moved, int(fromNS)); err != nil {
				return err
			}
			back, err := from.LinkByName(name)
			if err != nil {
				return err
			}
			if wasUp {
				if err := from.LinkSetUp(back); err != nil {
					return err
				}
			}
			for _, a := range addrs {
				a := a
				a.LinkIndex = back.Attrs().Index
				if err := from.AddrReplace(back, &a); err != nil {
					return fmt.Errorf("restore address %s: %w", a.IPNet, err)
				}
			}
			return restoreRoutes(from, relink(saved, l.Attrs().Index, back.Attrs().Index))
		})
}

// addLink creates a link and brings it up; the inverse deletes it.
func (tx *Tx) addLink(h *netlink.Handle, l netlink.Link, what string) error {
	name := l.Attrs().Name
	err := tx.change("create "+what+" "+name, func() error { return h.LinkAdd(l) }, func() error {
		cur, err := h.LinkByName(name)
		if err != nil {
			return err
		}
		return h.LinkDel(cur)
	})
	if err != nil {
		return err
	}
	cur, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	return tx.setUp(h, cur, true)
}

// delLink deletes a link swmgr made; the inverse makes it again as it was
// (type, table, master, up, addresses, routes through it).
func (tx *Tx) delLink(h *netlink.Handle, l netlink.Link, what string) error {
	a := l.Attrs()
	addrs, err := tx.addrsOf(h, a.Index)
	if err != nil {
		return err
	}
	addrs = append([]netlink.Addr(nil), addrs...)
	saved := tx.savedRoutes(h, a.Index)
	tx.forgetAddrs(h)
	return tx.change("delete "+what+" "+a.Name, func() error { return h.LinkDel(l) }, func() error {
		fresh := recreatable(l)
		if fresh == nil {
			return fmt.Errorf("cannot recreate a %s link", l.Type())
		}
		if err := h.LinkAdd(fresh); err != nil {
			return err
		}
		cur, err := h.LinkByName(a.Name)
		if err != nil {
			return err
		}
		if a.MTU != 0 && cur.Attrs().MTU != a.MTU {
			if err := h.LinkSetMTU(cur, a.MTU); err != nil {
				return err
			}
		}
		if a.Alias != "" {
			if err := h.LinkSetAlias(cur, a.Alias); err != nil {
				return err
			}
		}
		if a.MasterIndex != 0 {
			if err := h.LinkSetMasterByIndex(cur, a.MasterIndex); err != nil {
				return err
			}
		}
		if a.Flags&net.FlagUp != 0 {
			if err := h.LinkSetUp(cur); err != nil {
				return err
			}
		}
		for _, ad := range addrs {
			ad := ad
			ad.LinkIndex = cur.Attrs().Index
			if err := h.AddrReplace(cur, &ad); err != nil {
				return err
			}
		}
		return restoreRoutes(h, relink(saved, a.Index, cur.Attrs().Index))
	})
}

// recreatable returns a link to LinkAdd that makes l again.
func recreatable(l netlink.Link) netlink.Link {
	attrs := netlink.LinkAttrs{Name: l.Attrs().Name, HardwareAddr: l.Attrs().HardwareAddr}
	switch v := l.(type) {
	case *netlink.Vrf:
		return &netlink.Vrf{LinkAttrs: attrs, Table: v.Table}
	case *netlink.Dummy:
		return &netlink.Dummy{LinkAttrs: attrs}
	case *netlink.Bond:
		b := netlink.NewLinkBond(attrs)
		b.Mode, b.Miimon, b.MinLinks, b.XmitHashPolicy = v.Mode, v.Miimon, v.MinLinks, v.XmitHashPolicy
		if v.Mode == netlink.BOND_MODE_802_3AD {
			b.LacpRate, b.AdActorSysPrio = v.LacpRate, v.AdActorSysPrio
			if v.AdActorSystem.String() != "00:00:00:00:00:00" {
				b.AdActorSystem = v.AdActorSystem
			}
		}
		return b
	case *netlink.Bridge:
		return &netlink.Bridge{LinkAttrs: attrs, VlanFiltering: v.VlanFiltering}
	case *netlink.Vxlan:
		return &netlink.Vxlan{LinkAttrs: attrs, VxlanId: v.VxlanId, SrcAddr: v.SrcAddr, Port: v.Port, TTL: v.TTL, TOS: v.TOS, Learning: v.Learning}
	case *netlink.Vlan:
		attrs.ParentIndex = v.ParentIndex
		return &netlink.Vlan{LinkAttrs: attrs, VlanId: v.VlanId, VlanProtocol: v.VlanProtocol}
	}
	return nil
}

func (tx *Tx) addAddr(h *netlink.Handle, l netlink.Link, a netlink.Addr) error {
	a.LinkIndex = l.Attrs().Index
	err := tx.change(fmt.Sprintf("add address %s to %s", a.IPNet, l.Attrs().Name),
		func() error { return h.AddrAdd(l, &a) },
		func() error { return h.AddrDel(l, &a) })
	if err == nil {
		tx.noteAddr(h, a, true)
	}
	return err
}

func (tx *Tx) delAddr(h *netlink.Handle, l netlink.Link, a netlink.Addr) error {
	// Deleting the primary address of a subnet deletes its secondaries
	// unless promotion is on; swmgr keeps one address per interface, so
	// a secondary here is someone else's and is put back by the inverse.
	saved := tx.savedRoutes(h, l.Attrs().Index)
	err := tx.change(fmt.Sprintf("delete address %s from %s", a.IPNet, l.Attrs().Name),
		func() error { return h.AddrDel(l, &a) },
		func() error {
			if err := h.AddrAdd(l, &a); err != nil {
				return err
			}
			return restoreRoutes(h, saved)
		})
	if err == nil {
		tx.noteAddr(h, a, false)
	}
	return err
}

// savedRoutes returns the routes through a link that are not the kernel's
// own (connected and local routes come back with their address), in every
// table.
func (tx *Tx) savedRoutes(h *netlink.Handle, ifindex int) []netlink.Route {
	routes, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil
	}
	var out []netlink.Route
	for _, r := range routes {
		if r.Protocol == unix.RTPROT_KERNEL || r.Type == unix.RTN_LOCAL || r.Type == unix.RTN_BROADCAST {
			continue
		}
		via := r.LinkIndex == ifindex
		for _, nh := range r.MultiPath {
			via = via || nh.LinkIndex == ifindex
		}
		if via {
			out = append(out, r)
		}
	}
	return out
}

// restoreRoutes puts routes back (those still there are left as they are).
func restoreRoutes(h *netlink.Handle, routes []netlink.Route) error {
	var errs []error
	for _, r := range routes {
		r := r
		if err := h.RouteAdd(&r); err != nil && !errors.Is(err, unix.EEXIST) {
			errs = append(errs, fmt.Errorf("restore route %s: %w", r.Dst, err))
		}
	}
	return errors.Join(errs...)
}

func relink(routes []netlink.Route, from, to int) []netlink.Route {
	out := make([]netlink.Route, len(routes))
	for i, r := range routes {
		if r.LinkIndex == from {
			r.LinkIndex = to
		}
		if len(r.MultiPath) > 0 {
			mp := make([]*netlink.NexthopInfo, len(r.MultiPath))
			for j, nh := range r.MultiPath {
				c := *nh
				if c.LinkIndex == from {
					c.LinkIndex = to
				}
				mp[j] = &c
			}
			r.MultiPath = mp
		}
		out[i] = r
	}
	return out
}
