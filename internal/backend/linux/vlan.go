package linux

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/swmgr/swmgr/internal/model"
)

// BridgeName is the VLAN-aware bridge every Vlan's members join.
const BridgeName = "bridge"

// VlanConfig is a VLAN: its tagged and untagged member ports (netdevs) on
// the VLAN-aware bridge, and its SVI vlan<ID> (an 802.1Q link on the
// bridge) that IPv4 interfaces use.
type VlanConfig struct {
	ID       int
	Tagged   []string
	Untagged []string
}

// SVIName is the netdev of a VLAN's SVI.
func SVIName(id int) string { return fmt.Sprintf("vlan%d", id) }

// CheckVlan is the pure capability check of a VLAN.
func (k *Kernel) CheckVlan(c VlanConfig) error {
	if !k.feat.BridgeVLAN {
		return refuse("VlanId", "VLAN %d: this kernel has no VLAN-filtering bridges (CONFIG_BRIDGE_VLAN_FILTERING)", c.ID)
	}
	if !k.feat.VLAN {
		return refuse("VlanId", "VLAN %d: this kernel has no 802.1Q interfaces for the SVI %s (CONFIG_VLAN_8021Q)", c.ID, SVIName(c.ID))
	}
	if c.ID < 1 || c.ID > 4094 {
		return refuse("VlanId", "VLAN %d: use 1..4094", c.ID)
	}
	for _, t := range c.Tagged {
		if slices.Contains(c.Untagged, t) {
			return refuse("UntagIntfList", "VLAN %d: %s is both tagged and untagged", c.ID, t)
		}
	}
	if !k.feat.VRFDevice {
		for _, p := range append(slices.Clone(c.Tagged), c.Untagged...) {
			if h, _, err := k.findLink(p); err == nil && h != k.h {
				return refuse("IntfList", "VLAN %d: %s is in a VRF's namespace and cannot join the bridge", c.ID, p)
			}
		}
	}
	return nil
}

// bridgeVlans returns the VLANs of each bridge port and of the bridge, by
// ifindex.
func (k *Kernel) bridgeVlans() (map[int32][]*nl.BridgeVlanInfo, error) {
	v, err := k.h.BridgeVlanList()
	if err != nil {
		return nil, fmt.Errorf("list bridge VLANs: %w", err)
	}
	return v, nil
}

// EnsureVlan makes the VLAN match c; old, if set, is the configuration it
// replaces (members no longer listed leave the VLAN).
func (tx *Tx) EnsureVlan(c VlanConfig, old *VlanConfig) error {
	k := tx.k
	br, err := tx.ensureBridge()
	if err != nil {
		return err
	}
	vid := uint16(c.ID)
	if err := tx.bridgeVlan(br, vid, false, true); err != nil {
		return err
	}
	for _, p := range c.Tagged {
		if err := tx.vlanMember(br, p, vid, false); err != nil {
			return err
		}
	}
	for _, p := range c.Untagged {
		if err := tx.vlanMember(br, p, vid, true); err != nil {
			return err
		}
	}
	if old != nil {
		for _, p := range append(slices.Clone(old.Tagged), old.Untagged...) {
			if !slices.Contains(c.Tagged, p) && !slices.Contains(c.Untagged, p) {
				if err := tx.leaveVlan(br, p, vid); err != nil {
					return err
				}
			}
		}
	}
	if _, err := k.h.LinkByName(SVIName(c.ID)); err != nil {
		svi := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: SVIName(c.ID), ParentIndex: br.Attrs().Index}, VlanId: c.ID}
		return tx.addLink(k.h, svi, "SVI")
	}
	return nil
}

// RemoveVlan deletes the SVI and takes the VLAN off its members and the
// bridge; ports left in no VLAN leave the bridge, and the bridge goes when
// it has no ports.
func (tx *Tx) RemoveVlan(c VlanConfig) error {
	k := tx.k
	if svi, err := k.h.LinkByName(SVIName(c.ID)); err == nil {
		if err := tx.delLink(k.h, svi, "SVI"); err != nil {
			return err
		}
	}
	brLink, err := k.h.LinkByName(BridgeName)
	if err != nil {
		return nil
	}
	vid := uint16(c.ID)
	for _, p := range append(slices.Clone(c.Tagged), c.Untagged...) {
		if err := tx.leaveVlan(brLink, p, vid); err != nil {
			return err
		}
	}
	if err := tx.bridgeVlan(brLink, vid, false, false); err != nil {
		return err
	}
	links, err := k.h.LinkList()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Attrs().MasterIndex == brLink.Attrs().Index {
			return nil
		}
		if v, ok := l.(*netlink.Vlan); ok && v.ParentIndex == brLink.Attrs().Index {
			return nil
		}
	}
	return tx.delLink(k.h, brLink, "bridge")
}

func (tx *Tx) ensureBridge() (netlink.Link, error) {
	k := tx.k
	if l, err := k.h.LinkByName(BridgeName); err == nil {
		if br, ok := l.(*netlink.Bridge); !ok || br.VlanFiltering == nil || !*br.VlanFiltering {
			return nil, fmt.Errorf("a link %s that is not a VLAN-filtering bridge is in the way", BridgeName)
		}
		return l, tx.setUp(k.h, l, true)
	}
	on, pvid := true, uint16(0) // no default VLAN 1 on new members
	if err := tx.addLink(k.h, &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: BridgeName}, VlanFiltering: &on, VlanDefaultPVID: &pvid}, "bridge"); err != nil {
		return nil, err
	}
	return k.h.LinkByName(BridgeName)
}

// bridgeVlan adds (or removes) a VLAN on the bridge itself, which the SVI
// needs to see the VLAN's traffic.
func (tx *Tx) bridgeVlan(br netlink.Link, vid uint16, untagged, add bool) error {
	return tx.portVlan(br, vid, false, untagged, add, true)
}

// portVlan sets or removes one VLAN on a bridge port (self: on the bridge),
// restoring the flags it had in the inverse.
func (tx *Tx) portVlan(l netlink.Link, vid uint16, pvid, untagged, add, self bool) error {
	k := tx.k
	all, err := k.bridgeVlans()
	if err != nil {
		return err
	}
	var cur *nl.BridgeVlanInfo
	for _, v := range all[int32(l.Attrs().Index)] {
		if v.Vid == vid {
			cur = v
		}
	}
	name := l.Attrs().Name
	restore := func() error {
		if cur == nil {
			return k.h.BridgeVlanDel(l, vid, false, false, self, false)
		}
		return k.h.BridgeVlanAdd(l, vid, cur.PortVID(), cur.EngressUntag(), self, false)
	}
	if !add {
		if cur == nil {
			return nil
		}
		return tx.change(fmt.Sprintf("remove VLAN %d from %s", vid, name),
			func() error { return k.h.BridgeVlanDel(l, vid, cur.PortVID(), cur.EngressUntag(), self, false) }, restore)
	}
	if cur != nil && cur.PortVID() == pvid && cur.EngressUntag() == untagged {
		return nil
	}
	return tx.change(fmt.Sprintf("add VLAN %d to %s (untagged %v)", vid, name, untagged),
		func() error { return k.h.BridgeVlanAdd(l, vid, pvid, untagged, self, false) }, restore)
}

func (tx *Tx) vlanMember(br netlink.Link, port string, vid uint16, untagged bool) error {
	k := tx.k
	l, err := k.h.LinkByName(port)
	if err != nil {
		return fmt.Errorf("VLAN %d member %s: %w", vid, port, err)
	}
	if err := tx.setMaster(k.h, l, br.Attrs().Index); err != nil {
		return err
	}
	if l, err = k.h.LinkByName(port); err != nil {
		return err
	}
	return tx.portVlan(l, vid, untagged, untagged, true, false)
}

func (tx *Tx) leaveVlan(br netlink.Link, port string, vid uint16) error {
	k := tx.k
	l, err := k.h.LinkByName(port)
	if err != nil || l.Attrs().MasterIndex != br.Attrs().Index {
		return nil
	}
	if err := tx.portVlan(l, vid, false, false, false, false); err != nil {
		return err
	}
	all, err := k.bridgeVlans()
	if err != nil {
		return err
	}
	if len(all[int32(l.Attrs().Index)]) == 0 {
		return tx.setMaster(k.h, l, 0)
	}
	return nil
}

// VlanState is what the kernel has of a VLAN.
type VlanState struct {
	Tagged, Untagged []string
	SVIUp            bool
	SVIIfIndex       int
}

// VlanStateOf reads a VLAN from the bridge.
func (k *Kernel) VlanStateOf(id int) (VlanState, error) {
	var st VlanState
	all, err := k.bridgeVlans()
	if err != nil {
		return st, err
	}
	br, err := k.h.LinkByName(BridgeName)
	if err != nil {
		return st, nil
	}
	for idx, infos := range all {
		if int(idx) == br.Attrs().Index {
			continue
		}
		l, err := k.h.LinkByIndex(int(idx))
		if err != nil {
			continue
		}
		for _, v := range infos {
			if int(v.Vid) == id {
				if v.EngressUntag() {
					st.Untagged = append(st.Untagged, l.Attrs().Name)
				} else {
					st.Tagged = append(st.Tagged, l.Attrs().Name)
				}
			}
		}
	}
	slices.Sort(st.Tagged)
	slices.Sort(st.Untagged)
	if svi, err := k.h.LinkByName(SVIName(id)); err == nil {
		st.SVIIfIndex = svi.Attrs().Index
		st.SVIUp = operUp(svi)
	}
	return st, nil
}

// vlanConfig maps a Vlan object (FlexSwitch's: VlanId, IntfList tagged,
// UntagIntfList untagged) onto the kernel layer.
func (b *Backend) vlanConfig(o model.Object) (VlanConfig, error) {
	c := VlanConfig{ID: int(o.Int("VlanId"))}
	for _, field := range []struct {
		name string
		dst  *[]string
	}{{"IntfList", &c.Tagged}, {"UntagIntfList", &c.Untagged}} {
		for _, p := range o.List(field.name) {
			dev, _, err := b.netdevOf(p)
			if err != nil {
				var r *Refusal
				if errors.As(err, &r) {
					return c, &Refusal{Field: field.name, Msg: r.Msg}
				}
				return c, err
			}
			*field.dst = append(*field.dst, dev)
		}
	}
	return c, nil
}

// vlanDriver is the Vlan kind on the Linux backend.
var vlanDriver = &driver{
	check: func(b *Backend, c changeView) error {
		v, err := b.vlanConfig(c.after())
		if err != nil {
			return err
		}
		return b.k.CheckVlan(v)
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		v, err := b.vlanConfig(after)
		if err != nil {
			return err
		}
		var old *VlanConfig
		if before != nil {
			if o, err := b.vlanConfig(before); err == nil {
				old = &o
			}
		}
		if err := tx.EnsureVlan(v, old); err != nil {
			return err
		}
		svi, err := tx.k.h.LinkByName(SVIName(v.ID))
		if err != nil {
			return err
		}
		return tx.setUp(tx.k.h, svi, after.Str("AdminState") != "DOWN")
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		v, err := b.vlanConfig(before)
		if err != nil {
			return err
		}
		return tx.RemoveVlan(v)
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		st, err := b.k.VlanStateOf(int(o.Int("VlanId")))
		if err != nil {
			return nil, err
		}
		return model.Object{"OperState": upDownState(st.SVIUp), "IfIndex": int64(st.SVIIfIndex)}, nil
	},
}
