package linux

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
)

// FlexSwitch's ARP and NDP actions on the kernel's neighbour tables of the
// switch's namespace and every VRF's: a delete removes the entries (the
// next packet to the address resolves it again); a refresh puts an entry
// with a link-layer address in PROBE, so that the kernel confirms it now
// with unicast solicitations (and fails it if nothing answers), and
// removes one that has none yet. Permanent entries (configured, not
// learned) are left alone by both.

// neighborOp is what an action does to one entry.
type neighborOp func(h *netlink.Handle, e netlink.Neigh) error

func deleteNeighbor(h *netlink.Handle, e netlink.Neigh) error { return h.NeighDel(&e) }

func refreshNeighbor(h *netlink.Handle, e netlink.Neigh) error {
	if len(e.HardwareAddr) == 0 {
		return h.NeighDel(&e)
	}
	e.State, e.Flags = netlink.NUD_PROBE, 0
	return h.NeighSet(&e)
}

// neighborsDo runs op on the learned entries of family that match: by
// address (addr valid) or on the netdev named dev.
func (b *Backend) neighborsDo(family int, addr netip.Addr, dev string, op neighborOp) (int, error) {
	done := 0
	for _, n := range b.k.namespaces() {
		index := 0
		if dev != "" {
			l, err := n.h.LinkByName(dev)
			if err != nil {
				continue // not in this namespace
			}
			index = l.Attrs().Index
		}
		entries, err := n.h.NeighList(index, family)
		if err != nil {
			return done, fmt.Errorf("list neighbours: %w", err)
		}
		for _, e := range entries {
			a, ok := netip.AddrFromSlice(e.IP)
			if !ok || e.State&(netlink.NUD_NOARP|netlink.NUD_PERMANENT) != 0 || a.IsMulticast() {
				continue
			}
			if addr.IsValid() && a.Unmap() != addr {
				continue
			}
			if err := op(n.h, e); err != nil {
				return done, fmt.Errorf("neighbour %s on %d: %w", a, e.LinkIndex, err)
			}
			done++
		}
	}
	return done, nil
}

// DataplaneActions are the kernel's actions: the ARP and NDP ones and
// ClearMacTable (macclear.go).
func (b *Backend) DataplaneActions() map[string]*bind.Action {
	byAddr := func(family int, op neighborOp) *bind.Action {
		return &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
			a, err := netip.ParseAddr(c.Fields.Str("IpAddr"))
			if err != nil {
				return bind.Result{}, apierr.BadRequest(apierr.CodeInvalidValue, c.Kind.Name, "IpAddr", "IpAddr: %v", err)
			}
			return b.neighborAction(c, family, a, "", "address "+a.String(), op)
		}}
	}
	byIntf := func(family int, op neighborOp) *bind.Action {
		return &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
			ref := c.Fields.Str("IfName")
			dev, lb, err := b.netdevOf(ref)
			if err != nil {
				return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "IfName: %s: %v", ref, err)
			}
			if lb {
				return bind.Result{}, apierr.BadRequest(apierr.CodeInvalidValue, c.Kind.Name, "IfName", "IfName: %s is a loopback: it has no neighbours", ref)
			}
			return b.neighborAction(c, family, netip.Addr{}, dev, "interface "+ref, op)
		}}
	}
	return map[string]*bind.Action{
		"ArpDeleteByIPv4Addr":  byAddr(netlink.FAMILY_V4, deleteNeighbor),
		"ArpDeleteByIfName":    byIntf(netlink.FAMILY_V4, deleteNeighbor),
		"ArpRefreshByIPv4Addr": byAddr(netlink.FAMILY_V4, refreshNeighbor),
		"ArpRefreshByIfName":   byIntf(netlink.FAMILY_V4, refreshNeighbor),
		"NdpDeleteByIPv6Addr":  byAddr(netlink.FAMILY_V6, deleteNeighbor),
		"NdpDeleteByIfName":    byIntf(netlink.FAMILY_V6, deleteNeighbor),
		"NdpRefreshByIPv6Addr": byAddr(netlink.FAMILY_V6, refreshNeighbor),
		"NdpRefreshByIfName":   byIntf(netlink.FAMILY_V6, refreshNeighbor),
		"ClearMacTable":        {Run: b.clearMacTable},
	}
}

// neighborAction runs op on the matching entries; by address, an address
// with no entry is a 404 (by interface, none is a success: nothing to do).
func (b *Backend) neighborAction(c bind.Call, family int, addr netip.Addr, dev, what string, op neighborOp) (bind.Result, error) {
	if c.DryRun {
		op = func(*netlink.Handle, netlink.Neigh) error { return nil }
	}
	n, err := b.neighborsDo(family, addr, dev, op)
	if err != nil {
		return bind.Result{}, fmt.Errorf("%s: %w", c.Kind.Name, err)
	}
	if n == 0 && addr.IsValid() {
		return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "%s: the neighbour table has no learned entry for %s", c.Kind.Name, what)
	}
	return bind.Result{DryRun: c.DryRun}, nil
}
