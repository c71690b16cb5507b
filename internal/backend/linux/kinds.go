package linux

import (
	"github.com/swmgr/swmgr/internal/model"
)

// driver is one kind's behaviour on the Linux backend, made a
// backend.Driver by Backend.Dataplane. check is pure (no kernel change);
// ensure is create and update (before is nil on create) and must be
// idempotent: reconciliation calls it with the stored object; remove is
// delete.
type driver struct {
	check  func(b *Backend, c changeView) error
	ensure func(b *Backend, tx *Tx, after, before model.Object) error
	remove func(b *Backend, tx *Tx, before model.Object) error
	// state reads the operational fields of the state form (nil: none).
	state func(b *Backend, o model.Object) (model.Object, error)
}

// changeView is what a check sees of a change.
type changeView interface {
	before() model.Object
	after() model.Object
}

// drivers are the dataplane kinds: a new kind of the kernel's is its
// declaration in package model and one entry here (with its file).
var drivers = map[string]*driver{
	"Port": portDriver,
	// LaPortChannel is a bond (lag.go).
	"LaPortChannel": lagDriver,
	"Vrf":           vrfDriver,
	"IPv4Intf":      ipv4IntfDriver,
	// An unnumbered interface: its loopback's address as a /32 (unnumbered.go).
	"IPv4Unnumbered": ipv4UnnumberedDriver,
	"Vlan":           vlanDriver,
	"Span":           spanDriver,
	// LogicalIntf is a loopback: a dummy device, or addresses on lo.
	"LogicalIntf": logicalIntfDriver,
	// IPv4Route is a static route: proto static in the VRF's table.
	"IPv4Route": ipv4RouteDriver,
	// IPv6 on an interface (ipv6.go), and static IPv6 routes: IPv4Route's
	// driver, in the IPv6 table.
	"IPv6Intf":  ipv6IntfDriver,
	"IPv6Route": ipv4RouteDriver,
	// Neighbour discovery's timers: sysctls, and FRR's advertisements (ndp.go).
	"NDPGlobal": ndpDriver,
	// A VNI is a VXLAN device in its VLAN (vxlan.go).
	"VxlanEndpoint":     vxlanDriver("VxlanEndpoint"),
	"VxlanInstance":     vxlanDriver("VxlanInstance"),
	"VxlanVtepInstance": vxlanDriver("VxlanVtepInstance"),
	"EvpnL3Vni":         vxlanDriver("EvpnL3Vni"),
	// ACLs and the control-plane ACL are nftables rules (acl.go).
	"AclRule":             aclRuleDriver,
	"Acl":                 aclDriverOf,
	"ControlPlaneAclRule": cpAclDriver,
}

func (b *Backend) appliedOf(kind string) []model.Object {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]model.Object, 0, len(b.applied[kind]))
	for _, o := range b.applied[kind] {
		out = append(out, o)
	}
	return out
}

// ensureWithOld is the ensure of a kind whose change is made from its
// configuration in the kernel's terms (config) and the one it replaces
// (nil on create).
func ensureWithOld[C any](config func(*Backend, model.Object) (C, error), ensure func(*Tx, C, *C) error) func(*Backend, *Tx, model.Object, model.Object) error {
	return func(b *Backend, tx *Tx, after, before model.Object) error {
		c, err := config(b, after)
		if err != nil {
			return err
		}
		var old *C
		if before != nil {
			o, err := config(b, before)
			if err != nil {
				return err
			}
			old = &o
		}
		return ensure(tx, c, old)
	}
}
