package linux

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/model"
)

// IPv6 on the Linux backend. An IPv6Intf turns IPv6 on for its netdev
// (sysctl net.ipv6.conf.<dev>.disable_ipv6 0, in the netdev's namespace),
// sets how the kernel makes its link-local address (addr_gen_mode: eui64
// with LinkIp, none without) and makes sure the EUI-64 link-local address
// is there (or gone), and gives it IpAddr. Every step records its inverse
// in the Tx. The interface stays in the VRF its IPv4Intf put it in (an
// IPv6Intf has no VRF, as FlexSwitch's has none). IPv6Route is the same
// driver as IPv4Route (ipv4route.go), in the IPv6 table.

// ipv6Config is an IPv6Intf in the kernel's terms.
type ipv6Config struct {
	netdev  string
	vrf     string
	addr    netip.Prefix // invalid: none
	linkIP  bool
	adminUp bool
}

func (b *Backend) ipv6Config(o model.Object) (ipv6Config, error) {
	dev, lb, err := b.netdevOf(o.Str("IntfRef"))
	if err != nil {
		return ipv6Config{}, err
	}
	c := ipv6Config{netdev: dev, vrf: b.vrfOfIntf(o.Str("IntfRef")), linkIP: o.Bool("LinkIp"), adminUp: o.Str("AdminState") != "DOWN"}
	if lb {
		c.netdev = b.k.LoopbackNetdev(LoopbackConfig{Name: dev, VRF: c.vrf})
	}
	if c.addr, err = ipv6Addr(o); err != nil {
		return ipv6Config{}, err
	}
	return c, nil
}

// ipv6Addr is an IPv6Intf's IpAddr; invalid for none.
func ipv6Addr(o model.Object) (netip.Prefix, error) {
	s := o.Str("IpAddr")
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is6() {
		return netip.Prefix{}, &Refusal{Field: "IpAddr", Msg: fmt.Sprintf("IpAddr %q is not an IPv6 address with prefix length", s)}
	}
	return p, nil
}

// vrfOfIntf is the VRF an interface is in: its IPv4Intf's or its
// IPv4Unnumbered's, else the default. Callers hold b.mu (an apply does),
// as loopbackConfig's.
func (b *Backend) vrfOfIntf(ref string) string {
	for _, kind := range []string{"IPv4Intf", "IPv4Unnumbered"} {
		for _, in := range b.applied[kind] {
			if in.Str("IntfRef") == ref {
				return in.Str("Vrf")
			}
		}
	}
	return "default"
}

// linkLocalOf is the EUI-64 link-local address of a MAC (RFC 4291 2.5.1).
func linkLocalOf(hw net.HardwareAddr) (netip.Prefix, bool) {
	if len(hw) != 6 {
		return netip.Prefix{}, false
	}
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15] = hw[0]^0x02, hw[1], hw[2], 0xff, 0xfe, hw[3], hw[4], hw[5]
	return netip.PrefixFrom(netip.AddrFrom16(b), 64), true
}

// devSysctl reads and, when value is not "", writes net.ipv6.conf.<dev>.<name>
// in the namespace of h; it returns the value before.
func (k *Kernel) devSysctl(h *netlink.Handle, dev, name, value string) (string, error) {
	ns, path := k.nsOfHandle(h), devSysctlPath(dev, name)
	have, err := k.readSysctls(ns, []string{path})
	if err != nil {
		return "", err
	}
	old, ok := have[path]
	if !ok {
		return "", fmt.Errorf("sysctl %s: %w", sysctlName(path), os.ErrNotExist)
	}
	if value != "" && value != old {
		if err := k.writeSysctl(ns, path, value); err != nil {
			return "", err
		}
	}
	return old, nil
}

func devSysctlPath(dev, name string) string { return "net/ipv6/conf/" + dev + "/" + name }

// setDevSysctl sets net.ipv6.conf.<dev>.<name> to value, with its inverse.
func (tx *Tx) setDevSysctl(h *netlink.Handle, dev, name, value string) error {
	old, err := tx.k.devSysctl(h, dev, name, "")
	if err != nil || old == value {
		return err
	}
	return tx.setSysctl(tx.k.nsOfHandle(h), devSysctlPath(dev, name), old, value)
}

// addrs6 returns the IPv6 addresses of a link.
func addrs6(h *netlink.Handle, l netlink.Link) ([]netlink.Addr, error) {
	a, err := h.AddrList(l, netlink.FAMILY_V6)
	if err != nil {
		return nil, fmt.Errorf("list IPv6 addresses of %s: %w", l.Attrs().Name, err)
	}
	return a, nil
}

// ensureAddr6 makes the address p present on l (want) or absent.
func (tx *Tx) ensureAddr6(h *netlink.Handle, l netlink.Link, p netip.Prefix, want bool) error {
	have, err := addrs6(h, l)
	if err != nil {
		return err
	}
	for _, a := range have {
		if a.IPNet.String() == ipNet(p).String() {
			if want {
				return nil
			}
			return tx.delAddr(h, l, netlink.Addr{IPNet: a.IPNet})
		}
	}
	if !want {
		return nil
	}
	return tx.addAddr(h, l, netlink.Addr{IPNet: ipNet(p)})
}

// ensureIPv6 makes an IPv6Intf real; old, if set, is what it replaces.
func (tx *Tx) ensureIPv6(c ipv6Config, old *ipv6Config) error {
	if old != nil && (old.netdev != c.netdev || old.addr != c.addr) {
		if err := tx.removeIPv6(*old, old.netdev != c.netdev); err != nil {
			return err
		}
	}
	h, l, err := tx.k.findLink(c.netdev)
	if err != nil {
		return err
	}
	if err := tx.setDevSysctl(h, c.netdev, "disable_ipv6", "0"); err != nil {
		return err
	}
	mode := "0" // IN6_ADDR_GEN_MODE_EUI64
	if !c.linkIP {
		mode = "1" // IN6_ADDR_GEN_MODE_NONE
	}
	if err := tx.setDevSysctl(h, c.netdev, "addr_gen_mode", mode); err != nil {
		return err
	}
	if ll, ok := linkLocalOf(l.Attrs().HardwareAddr); ok && l.Attrs().Flags&net.FlagLoopback == 0 {
		if err := tx.ensureAddr6(h, l, ll, c.linkIP); err != nil {
			return err
		}
	}
	if c.addr.IsValid() {
		return tx.ensureAddr6(h, l, c.addr, c.adminUp)
	}
	return nil
}

// removeIPv6 takes an IPv6Intf's address away and, with all, gives the
// netdev the namespace's default IPv6 settings back.
func (tx *Tx) removeIPv6(c ipv6Config, all bool) error {
	h, l, err := tx.k.findLink(c.netdev)
	if err != nil {
		return nil // the netdev is gone, and its addresses with it
	}
	if c.addr.IsValid() {
		if err := tx.ensureAddr6(h, l, c.addr, false); err != nil {
			return err
		}
	}
	if !all {
		return nil
	}
	// The netdev goes back to the namespace's defaults for IPv6, as a new
	// netdev has them (on most switches IPv6 on, with a link-local address).
	for _, name := range []string{"addr_gen_mode", "disable_ipv6"} {
		def, err := tx.k.devSysctl(h, "default", name, "")
		if err != nil {
			return err
		}
		if err := tx.setDevSysctl(h, c.netdev, name, def); err != nil {
			return err
		}
	}
	return nil
}

// ipv6State reads an IPv6Intf's state: up when the netdev is up and its
// address is there and past duplicate address detection.
func (b *Backend) ipv6State(c ipv6Config) (model.Object, error) {
	st := model.Object{"OperState": "DOWN", "LinkLocalIp": ""}
	h, l, err := b.k.findLink(c.netdev)
	if err != nil {
		return st, nil
	}
	st["IfIndex"] = int64(l.Attrs().Index)
	have, err := addrs6(h, l)
	if err != nil {
		return nil, err
	}
	present := !c.addr.IsValid()
	for _, a := range have {
		p, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		if p.IsLinkLocalUnicast() {
			st["LinkLocalIp"] = p.String()
		}
		if c.addr.IsValid() && a.IPNet.String() == ipNet(c.addr).String() && a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) == 0 {
			present = true
		}
	}
	up := l.Attrs().Flags&net.FlagUp != 0 && (operUp(l) || l.Attrs().Flags&net.FlagLoopback != 0 || l.Type() == "dummy" || l.Type() == "vrf")
	st["OperState"] = upDownState(up && present && c.adminUp)
	return st, nil
}

// ipv6IntfDriver is the IPv6Intf kind on the Linux backend.
var ipv6IntfDriver = &driver{
	state: func(b *Backend, o model.Object) (model.Object, error) {
		b.mu.Lock()
		c, err := b.ipv6Config(o)
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		st, err := b.ipv6State(c)
		if err != nil {
			return nil, err
		}
		st["L2IntfType"], st["L2IntfId"] = b.l2Of(o.Str("IntfRef"))
		return st, nil
	},
	// The check reads no applied object (it may run beside an apply): the
	// interface must have a netdev, the address be IPv6.
	check: func(b *Backend, c changeView) error {
		o := c.after()
		if _, _, err := b.netdevOf(o.Str("IntfRef")); err != nil {
			return err
		}
		_, err := ipv6Addr(o)
		return err
	},
	ensure: ensureWithOld((*Backend).ipv6Config, (*Tx).ensureIPv6),
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		c, err := b.ipv6Config(before)
		if err != nil {
			return err
		}
		return tx.removeIPv6(c, true)
	},
}

// Neighbors lists the kernel's neighbour table of one family
// (netlink.FAMILY_V4: ARP, FAMILY_V6: NDP) in the switch's namespace and
// every VRF's, in NDPEntryState's and ArpEntryState's form; entries
// without an address of their own (the kernel's NOARP multicast ones) are
// left out.
func (b *Backend) Neighbors(family int) ([]model.Object, error) {
	var out []model.Object
	for _, n := range b.k.namespaces() {
		links, err := n.h.LinkList()
		if err != nil {
			return nil, err
		}
		names := map[int]string{}
		for _, l := range links {
			names[l.Attrs().Index] = l.Attrs().Name
		}
		neigh, err := n.h.NeighList(0, family)
		if err != nil {
			return nil, fmt.Errorf("list neighbours: %w", err)
		}
		for _, e := range neigh {
			a, ok := netip.AddrFromSlice(e.IP)
			if !ok || e.State&netlink.NUD_NOARP != 0 || a.IsMulticast() {
				continue
			}
			intf, vlan := names[e.LinkIndex], ""
			if p := b.ports.Port(intf); p != "" {
				intf = p
			} else if strings.HasPrefix(intf, "vlan") {
				vlan = strings.TrimPrefix(intf, "vlan")
			}
			mac := ""
			if len(e.HardwareAddr) > 0 {
				mac = e.HardwareAddr.String()
			}
			out = append(out, model.Object{"IpAddr": a.Unmap().String(), "MacAddr": mac, "Vlan": vlan, "Intf": intf,
				"IfIndex": int64(e.LinkIndex), "ExpiryTimeLeft": "", "State": nudName(e.State)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Str("IpAddr") < out[j].Str("IpAddr") })
	return out, nil
}

// nudName is a neighbour state as ip-neighbour(8) names it.
func nudName(s int) string {
	for _, n := range []struct {
		bit  int
		name string
	}{{netlink.NUD_REACHABLE, "REACHABLE"}, {netlink.NUD_STALE, "STALE"}, {netlink.NUD_DELAY, "DELAY"}, {netlink.NUD_PROBE, "PROBE"},
		{netlink.NUD_FAILED, "FAILED"}, {netlink.NUD_INCOMPLETE, "INCOMPLETE"}, {netlink.NUD_PERMANENT, "PERMANENT"}, {netlink.NUD_NOARP, "NOARP"}} {
		if s&n.bit != 0 {
			return n.name
		}
	}
	return "NONE"
}

// stateLists are the Linux dataplane's state-only kinds, listed from the
// kernel.
func (b *Backend) stateLists() map[string]func(context.Context) ([]model.Object, error) {
	return map[string]func(context.Context) ([]model.Object, error){
		"IPv6RouteState":     b.RouteTableV6,
		"NDPEntryState":      func(context.Context) ([]model.Object, error) { return b.Neighbors(netlink.FAMILY_V6) },
		"ArpEntryState":      func(context.Context) ([]model.Object, error) { return b.Neighbors(netlink.FAMILY_V4) },
		"MacTableEntryState": b.MacTable,
		"AclRuleState":       b.AclRuleStates,
	}
}
