package linux

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// AddrConfig is an IPv4 interface: one address on a port, an SVI or a
// loopback, in a VRF. With AdminUp false the interface is in its VRF but
// carries no address.
type AddrConfig struct {
	Netdev  string
	Prefix  netip.Prefix // the address and its prefix length
	VRF     string
	AdminUp bool
	// Loopback says Netdev is a loopback that stays where it is (lo of a
	// namespace, or a VRF device carrying the VRF's loopback addresses).
	Loopback bool
}

func toAddr(p netip.Prefix) netlink.Addr {
	return netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}}
}

// CheckAddr is the pure check of an IPv4 interface.
func (k *Kernel) CheckAddr(c AddrConfig) error {
	if !c.Prefix.Addr().Is4() {
		return refuse("IpAddr", "%s is not an IPv4 address", c.Prefix)
	}
	return nil
}

// EnsureAddr puts the interface into its VRF and gives it its address;
// old, if set, is the configuration it replaces (its address is removed).
// Other addresses on the interface are not swmgr's and stay.
func (tx *Tx) EnsureAddr(c AddrConfig, old *AddrConfig) error {
	if old != nil && old.Netdev != c.Netdev {
		if err := tx.RemoveAddr(*old); err != nil {
			return err
		}
		old = nil
	}
	if !c.Loopback {
		if err := tx.AttachToVRF(c.Netdev, c.VRF); err != nil {
			return err
		}
	}
	h, l, err := tx.addrLink(c)
	if err != nil {
		return err
	}
	have, err := tx.addrsOf(h, l.Attrs().Index)
	if err != nil {
		return err
	}
	want := toAddr(c.Prefix)
	present := false
	for _, a := range have {
		if a.IPNet.String() == want.IPNet.String() {
			present = true
		} else if old != nil && old.Prefix.IsValid() && a.IPNet.String() == toAddr(old.Prefix).IPNet.String() {
			if err := tx.delAddr(h, l, a); err != nil {
				return err
			}
		}
	}
	switch {
	case c.AdminUp && !present:
		return tx.addAddr(h, l, want)
	case !c.AdminUp && present:
		for _, a := range have {
			if a.IPNet.String() == want.IPNet.String() {
				return tx.delAddr(h, l, a)
			}
		}
	}
	return nil
}

func (tx *Tx) addrLink(c AddrConfig) (*netlink.Handle, netlink.Link, error) {
	if c.Loopback {
		h, err := tx.k.handleOf(c.VRF)
		if err != nil {
			return nil, nil, err
		}
		l, err := h.LinkByName(c.Netdev)
		if err != nil {
			return nil, nil, fmt.Errorf("loopback %s: %w", c.Netdev, err)
		}
		return h, l, nil
	}
	return tx.k.findLink(c.Netdev)
}

// RemoveAddr removes the interface's address and releases it from its VRF.
func (tx *Tx) RemoveAddr(c AddrConfig) error {
	h, l, err := tx.addrLink(c)
	if err != nil {
		return nil // the netdev is gone, and its address with it
	}
	have, err := tx.addrsOf(h, l.Attrs().Index)
	if err != nil {
		return err
	}
	want := toAddr(c.Prefix).IPNet.String()
	for _, a := range have {
		if a.IPNet.String() == want {
			if err := tx.delAddr(h, l, a); err != nil {
				return err
			}
			break
		}
	}
	if c.Loopback || isDefaultVRF(c.VRF) {
		return nil
	}
	return tx.AttachToVRF(c.Netdev, "default")
}

// AddrState is an IPv4 interface's operational state.
type AddrState struct {
	IfIndex int
	OperUp  bool
	Present bool // the address is on the interface
}

// AddrStateOf reads an interface's state.
func (k *Kernel) AddrStateOf(c AddrConfig) (AddrState, error) {
	tx := k.Begin()
	h, l, err := tx.addrLink(c)
	if err != nil {
		return AddrState{}, nil
	}
	st := AddrState{IfIndex: l.Attrs().Index, OperUp: operUp(l) || l.Attrs().Flags&net.FlagLoopback != 0 || l.Type() == "dummy" || l.Type() == "vrf"}
	addrs, err := h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return st, err
	}
	for _, a := range addrs {
		if a.IPNet.String() == toAddr(c.Prefix).IPNet.String() {
			st.Present = true
		}
	}
	st.OperUp = st.OperUp && st.Present && l.Attrs().Flags&net.FlagUp != 0
	return st, nil
}

// ipv4IntfDriver is the IPv4Intf kind on the Linux backend.
var ipv4IntfDriver = &driver{
	state: func(b *Backend, o model.Object) (model.Object, error) {
		c, err := b.addrConfig(o)
		if err != nil {
			return nil, err
		}
		st, err := b.k.AddrStateOf(c)
		if err != nil {
			return nil, err
		}
		l2, id := b.l2Of(o.Str("IntfRef"))
		return model.Object{"OperState": upDownState(st.OperUp), "IfIndex": int64(st.IfIndex), "L2IntfType": l2, "L2IntfId": id}, nil
	},
	check: func(b *Backend, c changeView) error {
		a, err := b.addrConfig(c.after())
		if err != nil {
			return err
		}
		return b.k.CheckAddr(a)
	},
	ensure: ensureWithOld((*Backend).addrConfig, (*Tx).EnsureAddr),
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		a, err := b.addrConfig(before)
		if err != nil {
			return err
		}
		return tx.RemoveAddr(a)
	},
}

// l2Of is an interface's L2IntfType (Port or Loopback) and L2IntfId (a
// port's number), as an IP interface's state says them.
func (b *Backend) l2Of(ref string) (string, int64) {
	n, _ := portNumbers(ref)
	if _, lb, _ := b.netdevOf(ref); lb {
		return "Loopback", int64(n)
	}
	return "Port", int64(n)
}

func (b *Backend) addrConfig(o model.Object) (AddrConfig, error) {
	dev, lb, err := b.netdevOf(o.Str("IntfRef"))
	if err != nil {
		return AddrConfig{}, err
	}
	pfx, err := netip.ParsePrefix(o.Str("IpAddr"))
	if err != nil {
		return AddrConfig{}, &Refusal{Field: "IpAddr", Msg: fmt.Sprintf("IpAddr %q: %v", o.Str("IpAddr"), err)}
	}
	c := AddrConfig{Netdev: dev, Prefix: pfx, VRF: o.Str("Vrf"), AdminUp: o.Str("AdminState") != "DOWN", Loopback: lb}
	if lb {
		c.Netdev = b.k.LoopbackNetdev(LoopbackConfig{Name: dev, VRF: c.VRF})
		// A dummy loopback is put in its VRF like a port; lo and a VRF
		// device stay where they are.
		c.Loopback = !b.k.feat.Dummy
	}
	return c, nil
}
