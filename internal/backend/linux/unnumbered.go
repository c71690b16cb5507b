package linux

import (
	"fmt"
	"net/netip"

	"github.com/swmgr/swmgr/internal/model"
)

// ipv4UnnumberedDriver is the IPv4Unnumbered kind on the Linux backend:
// the loopback's IPv4 address, as a /32, on the borrowing interface (what
// Cumulus Linux does for an unnumbered swp: `address 10.0.0.1/32` on lo
// and on each uplink), scope global as any address swmgr puts, in the
// interface's VRF. The kernel then has an IPv4 address on the interface:
// zebra lists it as the interface's connected address, dhcrelay takes
// answers arriving there, and no subnet route comes with it (a /32).
//
// The address lent is the loopback's IPv4Intf in the changes being
// applied (the loopback's address made in the same commit, applied
// earlier in it), else as applied before.
var ipv4UnnumberedDriver = &driver{
	check: func(b *Backend, c changeView) error {
		_, lb, err := b.netdevOf(c.after().Str("IntfRef"))
		if err == nil && lb {
			return &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("%s is a loopback: it lends its address, it does not borrow one", c.after().Str("IntfRef"))}
		}
		return err
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		c, err := b.unnumberedConfig(after, b.lentAddress(after.Str("Interface"), true))
		if err != nil {
			return err
		}
		var old *AddrConfig
		if before != nil {
			if o, err := b.unnumberedConfig(before, b.lentAddress(before.Str("Interface"), false)); err == nil {
				old = &o
			}
		}
		return tx.EnsureAddr(c, old)
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		// The address it had: as applied, or made earlier in this batch.
		seen := map[netip.Prefix]bool{}
		for _, applying := range []bool{false, true} {
			c, err := b.unnumberedConfig(before, b.lentAddress(before.Str("Interface"), applying))
			if err != nil || seen[c.Prefix] {
				continue
			}
			seen[c.Prefix] = true
			if err := tx.RemoveAddr(c); err != nil {
				return err
			}
		}
		return nil
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		b.mu.Lock()
		lent := b.lentAddress(o.Str("Interface"), false)
		b.mu.Unlock()
		c, err := b.unnumberedConfig(o, lent)
		if err != nil {
			return model.Object{"OperState": "DOWN"}, nil
		}
		st, err := b.k.AddrStateOf(c)
		if err != nil {
			return nil, err
		}
		return model.Object{"IpAddr": lent, "OperState": upDownState(st.OperUp), "IfIndex": int64(st.IfIndex)}, nil
	},
}

// lentAddress is the IpAddr of loopback lb's IPv4Intf: in the changes
// apply is making when applying and they change it, else as applied; ""
// when it has none. Callers hold b.mu.
func (b *Backend) lentAddress(lb string, applying bool) string {
	if o, ok := b.applyingAddrs[lb]; applying && ok {
		return o.Str("IpAddr") // "" when the commit deletes it
	}
	for _, o := range b.applied["IPv4Intf"] {
		if o.Str("IntfRef") == lb {
			return o.Str("IpAddr")
		}
	}
	return ""
}

// unnumberedConfig is an IPv4Unnumbered in the kernel layer's terms: the
// address lent (an address/prefix), as a /32 on the borrowing interface.
func (b *Backend) unnumberedConfig(o model.Object, lent string) (AddrConfig, error) {
	dev, _, err := b.netdevOf(o.Str("IntfRef"))
	if err != nil {
		return AddrConfig{}, err
	}
	p, err := netip.ParsePrefix(lent)
	if err != nil || !p.Addr().Is4() {
		return AddrConfig{}, &Refusal{Field: "Interface", Msg: fmt.Sprintf("%s has no IPv4 address to lend %s", o.Str("Interface"), o.Str("IntfRef"))}
	}
	return AddrConfig{Netdev: dev, Prefix: netip.PrefixFrom(p.Addr(), 32), VRF: o.Str("Vrf"), AdminUp: true}, nil
}
