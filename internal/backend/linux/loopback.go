package linux

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// LoopbackConfig is a loopback interface (FlexSwitch's LogicalIntf of type
// Loopback): a dummy device in its VRF where the kernel has dummies; else
// its addresses go on lo (of the VRF's namespace, or on the VRF device,
// which is the loopback of its VRF).
type LoopbackConfig struct {
	Name string
	VRF  string
}

// CheckLoopback is the pure check of a loopback.
func (k *Kernel) CheckLoopback(c LoopbackConfig) error {
	if k.feat.Dummy && len(c.Name) > 15 {
		return refuse("Name", "loopback %q: a Linux device name has at most 15 characters", c.Name)
	}
	if c.Name == "lo" {
		return refuse("Name", "loopback \"lo\" is the kernel's own; choose another name")
	}
	return nil
}

// LoopbackNetdev is the netdev that carries a loopback's addresses.
func (k *Kernel) LoopbackNetdev(c LoopbackConfig) string {
	switch {
	case k.feat.Dummy:
		return c.Name
	case k.feat.VRFDevice && !isDefaultVRF(c.VRF):
		return c.VRF
	}
	return "lo"
}

// EnsureLoopback makes the loopback exist in its VRF.
func (tx *Tx) EnsureLoopback(c LoopbackConfig) error {
	k := tx.k
	if !k.feat.Dummy {
		// The addresses go on lo (or the VRF device): it must be up, which a
		// fresh namespace's lo is not.
		h, err := k.handleOf(c.VRF)
		if err != nil {
			return err
		}
		if k.feat.VRFDevice && !isDefaultVRF(c.VRF) {
			return nil // the VRF device is up with its VRF
		}
		lo, err := h.LinkByName("lo")
		if err != nil {
			return fmt.Errorf("loopback %s: %w", c.Name, err)
		}
		return tx.setUp(h, lo, true)
	}
	if _, _, err := k.findLink(c.Name); err != nil {
		h, err := k.handleOf(c.VRF)
		if err != nil {
			return err
		}
		if k.feat.VRFDevice {
			h = k.h
		}
		if err := tx.addLink(h, &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: c.Name}}, "loopback"); err != nil {
			return err
		}
	}
	return tx.AttachToVRF(c.Name, c.VRF)
}

// RemoveLoopback deletes the loopback (with its addresses).
func (tx *Tx) RemoveLoopback(c LoopbackConfig) error {
	if !tx.k.feat.Dummy {
		return nil
	}
	h, l, err := tx.k.findLink(c.Name)
	if err != nil {
		return nil
	}
	if l.Type() != "dummy" {
		return fmt.Errorf("loopback %s: the link of that name is a %s, not swmgr's", c.Name, l.Type())
	}
	return tx.delLink(h, l, "loopback")
}
