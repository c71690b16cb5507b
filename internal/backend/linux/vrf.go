package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/model"
)

// VRFConfig is a VRF. Where the kernel has VRF devices it is a "vrf" link
// named after the VRF with a routing table of its own (the lowest free
// from firstVRFTable); elsewhere it is a network namespace
// <prefix><name> that its interfaces move into.
type VRFConfig struct {
	Name string
}

const firstVRFTable = 1001

// CheckVRF is the pure capability check of a VRF.
func (k *Kernel) CheckVRF(c VRFConfig) error {
	if isDefaultVRF(c.Name) {
		return refuse("Vrf", "the default VRF always exists")
	}
	if k.feat.VRFDevice && len(c.Name) > 15 {
		return refuse("Vrf", "VRF %q: a Linux VRF device name has at most 15 characters", c.Name)
	}
	if !k.feat.VRFDevice && len(k.vrfNSPrefix+c.Name) > 200 {
		return refuse("Vrf", "VRF %q: the name is too long for a network namespace", c.Name)
	}
	return nil
}

// adoptVRFs finds the VRFs made before a restart.
func (k *Kernel) adoptVRFs() error {
	if k.feat.VRFDevice {
		links, err := k.h.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if v, ok := l.(*netlink.Vrf); ok {
				k.tables[v.Name] = v.Table
			}
		}
		return nil
	}
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if vrf, ok := strings.CutPrefix(e.Name(), k.vrfNSPrefix); ok && vrf != "" {
			if err := k.openVRFNS(vrf); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *Kernel) openVRFNS(vrf string) error {
	name := k.vrfNSPrefix + vrf
	ns, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("VRF %s: namespace %s: %w", vrf, name, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return fmt.Errorf("VRF %s: %w", vrf, err)
	}
	k.mu.Lock()
	k.vrfNS[vrf] = &nsHandle{name: name, ns: ns, h: h}
	k.mu.Unlock()
	return nil
}

func (k *Kernel) closeVRFNS(vrf string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v := k.vrfNS[vrf]; v != nil {
		v.h.Close()
		v.ns.Close()
		delete(k.vrfNS, vrf)
	}
}

// VRFTable is the routing table of a VRF device (main for the default VRF
// and in netns mode, where each VRF namespace has its own main table).
func (k *Kernel) VRFTable(vrf string) int {
	if isDefaultVRF(vrf) || !k.feat.VRFDevice {
		return unix.RT_TABLE_MAIN
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return int(k.tables[vrf])
}

// EnsureVRF makes the VRF exist.
func (tx *Tx) EnsureVRF(c VRFConfig) error {
	k := tx.k
	if k.feat.VRFDevice {
		l, err := k.h.LinkByName(c.Name)
		if err == nil {
			v, ok := l.(*netlink.Vrf)
			if !ok {
				return fmt.Errorf("VRF %s: a %s link of that name is in the way", c.Name, l.Type())
			}
			k.mu.Lock()
			k.tables[c.Name] = v.Table
			k.mu.Unlock()
			return tx.setUp(k.h, l, true)
		}
		table := k.freeTable()
		// The first VRF device of a namespace makes the kernel add its
		// l3mdev rules (pref 1000), once in the namespace's life: they are
		// left alone, also when that VRF is undone or deleted, since the
		// kernel would not add them again for the next VRF.
		if err := tx.addLink(k.h, &netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: c.Name}, Table: table}, "VRF"); err != nil {
			return err
		}
		k.mu.Lock()
		k.tables[c.Name] = table
		k.mu.Unlock()
		return nil
	}
	if _, err := k.handleOf(c.Name); err == nil {
		return nil
	}
	name := k.vrfNSPrefix + c.Name
	return tx.change("create namespace "+name+" for VRF "+c.Name, func() error {
		if err := newNamedNetns(name); err != nil {
			return err
		}
		if err := k.openVRFNS(c.Name); err != nil {
			netns.DeleteNamed(name)
			return err
		}
		h, _ := k.handleOf(c.Name)
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetUp(lo)
		}
		return err
	}, func() error {
		k.closeVRFNS(c.Name)
		return netns.DeleteNamed(name)
	})
}

func (k *Kernel) freeTable() uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	used := map[uint32]bool{}
	for _, t := range k.tables {
		used[t] = true
	}
	t := uint32(firstVRFTable)
	for used[t] {
		t++
	}
	return t
}

// RemoveVRF deletes the VRF. Its interfaces are released to the default
// VRF first (swmgr's own are gone by then: the engine deletes what refers
// to a VRF before the VRF).
func (tx *Tx) RemoveVRF(c VRFConfig) error {
	k := tx.k
	if k.feat.VRFDevice {
		l, err := k.h.LinkByName(c.Name)
		if err != nil {
			return nil
		}
		links, err := k.h.LinkList()
		if err != nil {
			return err
		}
		for _, m := range links {
			if m.Attrs().MasterIndex == l.Attrs().Index {
				if err := tx.setMaster(k.h, m, 0); err != nil {
					return err
				}
			}
		}
		if err := tx.delLink(k.h, l, "VRF"); err != nil {
			return err
		}
		table := k.tables[c.Name]
		k.mu.Lock()
		delete(k.tables, c.Name)
		k.mu.Unlock()
		tx.steps = append(tx.steps, step{what: "forget table of " + c.Name, undo: func() error {
			k.mu.Lock()
			k.tables[c.Name] = table
			k.mu.Unlock()
			return nil
		}})
		return nil
	}
	k.mu.Lock()
	v := k.vrfNS[c.Name]
	k.mu.Unlock()
	if v == nil {
		return nil
	}
	links, err := v.h.LinkList()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Attrs().Name == "lo" {
			continue
		}
		if err := tx.moveLink(v.h, l, k.h, k.ns, v.ns); err != nil {
			return err
		}
	}
	name := v.name
	return tx.change("delete namespace "+name+" of VRF "+c.Name, func() error {
		k.closeVRFNS(c.Name)
		return netns.DeleteNamed(name)
	}, func() error {
		if err := newNamedNetns(name); err != nil {
			return err
		}
		if err := k.openVRFNS(c.Name); err != nil {
			return err
		}
		h, _ := k.handleOf(c.Name)
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetUp(lo)
		}
		return err
	})
}

// AttachToVRF puts an interface into a VRF (the default VRF releases it):
// enslaved to the VRF device, or moved into the VRF's namespace.
func (tx *Tx) AttachToVRF(dev, vrf string) error {
	k := tx.k
	h, l, err := k.findLink(dev)
	if err != nil {
		return err
	}
	if k.feat.VRFDevice {
		master := 0
		if !isDefaultVRF(vrf) {
			v, err := k.h.LinkByName(vrf)
			if err != nil {
				return fmt.Errorf("VRF %s has no device: %w", vrf, err)
			}
			master = v.Attrs().Index
		} else if l.Attrs().MasterIndex != 0 {
			// A port enslaved to a bridge or something else not swmgr's
			// VRF is left where it is.
			if m, err := k.h.LinkByIndex(l.Attrs().MasterIndex); err != nil || m.Type() != "vrf" {
				return nil
			}
		}
		return tx.setMaster(k.h, l, master)
	}
	to, err := k.handleOf(vrf)
	if err != nil {
		return err
	}
	if to == h {
		return nil
	}
	toNS, fromNS := k.nsOf(vrf), k.nsOfHandle(h)
	if err := tx.moveLink(h, l, to, toNS, fromNS); err != nil {
		return err
	}
	return nil
}

func (k *Kernel) nsOf(vrf string) netns.NsHandle {
	if isDefaultVRF(vrf) {
		return k.ns
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.vrfNS[vrf].ns
}

func (k *Kernel) nsOfHandle(h *netlink.Handle) netns.NsHandle {
	for _, n := range k.namespaces() {
		if n.h == h {
			return n.ns
		}
	}
	return k.ns
}

// newNamedNetns makes a network namespace with a name, as `ip netns add`.
func newNamedNetns(name string) error {
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join("/run/netns", name)); err == nil {
		return fmt.Errorf("namespace %s exists already", name)
	}
	return withNetns(func() error {
		ns, err := netns.NewNamed(name) // and moves the thread into it
		if err != nil {
			return err
		}
		defer ns.Close()
		return enableForwarding()
	})
}

// enableForwarding turns IPv4 and IPv6 forwarding on in the namespace the
// calling thread is in (/proc/sys/net is the current namespace's): a
// switch routes between its interfaces, as Cumulus and SONiC set it,
// whereas a new namespace starts with both off.
func enableForwarding() error {
	for _, p := range []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding"} {
		if err := os.WriteFile(p, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("turn forwarding on: %w", err)
		}
	}
	return nil
}

// EnableForwarding turns IPv4 and IPv6 forwarding on in the switch's
// namespace.
func (k *Kernel) EnableForwarding() error {
	return withNetns(func() error {
		if err := netns.Set(k.ns); err != nil {
			return err
		}
		return enableForwarding()
	})
}

// vrfDriver is the Vrf kind on the Linux backend.
var vrfDriver = &driver{
	check: func(b *Backend, c changeView) error {
		return b.k.CheckVRF(VRFConfig{Name: c.after().Str("Vrf")})
	},
	ensure: func(b *Backend, tx *Tx, after, _ model.Object) error {
		return tx.EnsureVRF(VRFConfig{Name: after.Str("Vrf")})
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		return tx.RemoveVRF(VRFConfig{Name: before.Str("Vrf")})
	},
}
