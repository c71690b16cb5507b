package linux

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Features is what the running kernel can do, found by trying each thing in
// a throwaway network namespace (kernel config and loadable modules differ
// between switches; trying is the only reliable test).
type Features struct {
	VRFDevice      bool // "vrf" links: VRFs are devices with their own table, else a netns per VRF
	Dummy          bool // "dummy" links: loopbacks are dummies, else addresses on lo
	VLAN           bool // 802.1Q links: SVIs vlan<N>
	BridgeVLAN     bool // VLAN-filtering bridges: Vlan objects
	MatchAll       bool // the matchall classifier: mirroring uses it, else u32
	U32            bool // the u32 classifier
	Mirred         bool // the mirred action (mirroring at all)
	EthtoolNetlink bool // ethtool's generic netlink family (speed, duplex, autoneg, FEC)
	Bond           bool // bonding: LAGs (LaPortChannel)
	BondPassive    bool // the bond's lacp_active (Linux 5.15): a passive LACP LAG
}

// String is the one-line summary swmgr logs and reports.
func (f Features) String() string {
	var on, off []string
	for _, x := range []struct {
		name string
		ok   bool
	}{{"vrf-device", f.VRFDevice}, {"dummy", f.Dummy}, {"8021q", f.VLAN}, {"bridge-vlan-filtering", f.BridgeVLAN},
		{"matchall", f.MatchAll}, {"u32", f.U32}, {"mirred", f.Mirred}, {"ethtool-netlink", f.EthtoolNetlink}, {"bonding", f.Bond}, {"lacp-passive", f.BondPassive}} {
		if x.ok {
			on = append(on, x.name)
		} else {
			off = append(off, x.name)
		}
	}
	return fmt.Sprintf("has [%s] lacks [%s]; VRFs as %s", strings.Join(on, " "), strings.Join(off, " "), f.VRFMode())
}

// VRFMode says how VRFs are made: "vrf-device" or "netns".
func (f Features) VRFMode() string {
	if f.VRFDevice {
		return "vrf-device"
	}
	return "netns"
}

// LoopbackMode says how loopbacks are made: "dummy" or "lo".
func (f Features) LoopbackMode() string {
	if f.Dummy {
		return "dummy"
	}
	return "lo"
}

// ClassifierName is the tc classifier mirroring uses.
func (f Features) ClassifierName() string {
	if f.MatchAll {
		return "matchall"
	}
	return "u32"
}

// ProbeFeatures tries each feature in a private, unnamed network namespace
// that disappears afterwards.
func ProbeFeatures() (Features, error) {
	var f Features
	ns, err := newUnnamedNetns()
	if err != nil {
		return f, fmt.Errorf("probe kernel features: %w", err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return f, fmt.Errorf("probe kernel features: %w", err)
	}
	defer h.Close()

	f.VRFDevice = h.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "probevrf"}, Table: 4242}) == nil
	f.Dummy = h.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "probedummy"}}) == nil
	f.Bond = h.LinkAdd(netlink.NewLinkBond(netlink.LinkAttrs{Name: "probebond"})) == nil
	// An older kernel ignores IFLA_BOND_AD_LACP_ACTIVE rather than refuse
	// it: its version is the test.
	f.BondPassive = f.Bond && kernelAtLeast(5, 15)
	on := true
	if h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "probebr"}, VlanFiltering: &on}) == nil {
		if l, err := h.LinkByName("probebr"); err == nil {
			if br, ok := l.(*netlink.Bridge); ok && br.VlanFiltering != nil && *br.VlanFiltering {
				f.BridgeVLAN = true
			}
		}
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "probea"}, PeerName: "probeb"}
	if err := h.LinkAdd(veth); err != nil {
		return f, fmt.Errorf("probe kernel features: veth: %w", err)
	}
	a, err := h.LinkByName("probea")
	if err != nil {
		return f, fmt.Errorf("probe kernel features: %w", err)
	}
	b, err := h.LinkByName("probeb")
	if err != nil {
		return f, fmt.Errorf("probe kernel features: %w", err)
	}
	f.VLAN = h.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "probea.10", ParentIndex: a.Attrs().Index}, VlanId: 10}) == nil
	if h.QdiscAdd(clsact(a.Attrs().Index)) == nil {
		mirror := func() []netlink.Action {
			return []netlink.Action{&netlink.MirredAction{ActionAttrs: netlink.ActionAttrs{Action: netlink.TC_ACT_PIPE}, MirredAction: netlink.TCA_EGRESS_MIRROR, Ifindex: b.Attrs().Index}}
		}
		f.MatchAll = h.FilterAdd(&netlink.MatchAll{FilterAttrs: filterAttrs(a.Attrs().Index, parentIngress, 1), Actions: mirror()}) == nil
		f.U32 = h.FilterAdd(&netlink.U32{FilterAttrs: filterAttrs(a.Attrs().Index, parentIngress, 2), Sel: matchAnySel(), Actions: mirror()}) == nil
		f.Mirred = f.MatchAll || f.U32
	}
	if _, err := h.GenlFamilyGet("ethtool"); err == nil {
		f.EthtoolNetlink = true
	}
	return f, nil
}

// newUnnamedNetns makes a network namespace without a name: it lives as
// long as the returned handle.
func newUnnamedNetns() (netns.NsHandle, error) {
	type res struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			c <- res{err: err}
			return
		}
		defer orig.Close()
		ns, err := netns.New() // also moves this thread into it
		if err != nil {
			c <- res{err: err}
			return
		}
		if err := netns.Set(orig); err != nil {
			ns.Close()
			c <- res{err: err} // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		c <- res{ns: ns}
	}()
	r := <-c
	return r.ns, r.err
}

const (
	parentIngress = netlink.HANDLE_MIN_INGRESS // clsact ingress hook ffff:fff2
	parentEgress  = netlink.HANDLE_MIN_EGRESS  // clsact egress hook ffff:fff3
)

func clsact(ifindex int) *netlink.Clsact {
	return &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}
}

func filterAttrs(ifindex int, parent uint32, prio uint16) netlink.FilterAttrs {
	return netlink.FilterAttrs{LinkIndex: ifindex, Parent: parent, Priority: prio, Protocol: unix.ETH_P_ALL}
}

// matchAnySel is a u32 selector that matches every packet (offset 0, mask 0).
func matchAnySel() *netlink.TcU32Sel {
	return &netlink.TcU32Sel{Flags: netlink.TC_U32_TERMINAL, Nkeys: 1, Keys: []netlink.TcU32Key{{Mask: 0, Val: 0, Off: 0}}}
}

// kernelAtLeast says whether the running kernel's release is major.minor
// or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var haveMajor, haveMinor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &haveMajor, &haveMinor); err != nil {
		return false
	}
	return haveMajor > major || haveMajor == major && haveMinor >= minor
}
