package model

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// IPv6 text. Every IPv6 field is read by one parser (parseIPv6) and
// written in one form, RFC 5952's (lower case, no leading zeros, the
// longest run of zero groups as "::", the first of equal runs; net/netip's
// String), so that 2001:DB8:0:0::1 and 2001:db8::1 are one key. What a
// switch's address field has no use for is refused rather than guessed
// at: a zone (fe80::1%eth0: the interface is a field of its own), an
// IPv4-mapped address (::ffff:192.0.2.1 is an IPv4 address: give it to an
// IPv4 field), a dotted IPv4 tail (::192.0.2.1, the deprecated
// IPv4-compatible form), brackets, blanks.

// parseIPv6 reads an IPv6 address; why says what s should have been.
func parseIPv6(s string) (a netip.Addr, why string) {
	const want = "an IPv6 address like 2001:db8::1"
	if s == "" || strings.ContainsAny(s, "[] \t") {
		return netip.Addr{}, want
	}
	if strings.Contains(s, "%") {
		return netip.Addr{}, want + " without a zone (%" + "ifname): the interface is a field of its own"
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return netip.Addr{}, want
	case a.Is4():
		return netip.Addr{}, want + " (this is an IPv4 address)"
	case a.Is4In6():
		return netip.Addr{}, want + " (not an IPv4-mapped address ::ffff:a.b.c.d: give the IPv4 address to an IPv4 field)"
	case strings.Contains(s, "."):
		return netip.Addr{}, want + " with the last 32 bits in hex, not dotted (2001:db8::c000:201, not 2001:db8::192.0.2.1)"
	}
	return a, ""
}

// parseIP reads an address of a field that takes either family: an IPv4
// address, an IPv4-mapped IPv6 address (which canonicalIP makes the IPv4
// address it is), or an IPv6 address as parseIPv6 reads it.
func parseIP(s string) (netip.Addr, string) {
	a, err := netip.ParseAddr(s)
	if err == nil && (a.Is4() || a.Is4In6()) {
		return a, ""
	}
	return parseIPv6(s)
}

// canonicalIPv6 is RFC 5952's form of an IPv6 address, or s unchanged
// when it is none.
func canonicalIPv6(s string) string {
	if a, why := parseIPv6(s); why == "" {
		return a.String()
	}
	return s
}

// parseIPv6Prefix reads address/length; why says what s should have been.
func parseIPv6Prefix(s string) (p netip.Prefix, why string) {
	const want = "an IPv6 address with prefix length, like 2001:db8::1/64"
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return netip.Prefix{}, want
	}
	a, why := parseIPv6(addr)
	if why != "" {
		return netip.Prefix{}, want + ": " + why
	}
	n, err := strconv.Atoi(bits)
	if err != nil || n < 0 || n > 128 || bits != strconv.Itoa(n) {
		return netip.Prefix{}, want + " (prefix length 0..128)"
	}
	return netip.PrefixFrom(a, n), ""
}

// checkIPv6Interface accepts an address an interface can be given: a
// unicast address that is not link-local (LinkIp makes that one), with its
// prefix length; not the subnet's all-zero host (the subnet-router anycast
// address, RFC 4291 2.6.1) below /127.
func checkIPv6Interface(s string) string {
	p, why := parseIPv6Prefix(s)
	if why != "" {
		return why
	}
	a := p.Addr()
	const want = "an IPv6 interface address with prefix length, like 2001:db8::1/64"
	switch {
	case p.Bits() == 0:
		return want + " (prefix length 1..128)"
	case a.IsUnspecified() || a.IsMulticast() || a.IsLoopback():
		return want + " (not unspecified, loopback or multicast)"
	case a.IsLinkLocalUnicast():
		return want + " (not link-local fe80::/10: LinkIp gives the interface its link-local address)"
	case p.Bits() < 127 && a == p.Masked().Addr():
		return want + " (this is the subnet's all-zero address, its routers' anycast address)"
	}
	return ""
}

// parseIPv6Mask reads an IPv6 route's NetworkMask: a contiguous mask in
// address form (ffff:ffff:ffff:ffff::) or a prefix length (64 or /64).
func parseIPv6Mask(s string) (bits int, why string) {
	const want = "an IPv6 network mask: a prefix length 0..128 (64 or /64) or a contiguous mask like ffff:ffff:ffff:ffff::"
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "/")); err == nil {
		if n < 0 || n > 128 || strings.TrimPrefix(s, "/") != strconv.Itoa(n) {
			return 0, want
		}
		return n, ""
	}
	a, why := parseIPv6(s)
	if why != "" {
		return 0, want
	}
	b := a.As16()
	n, seenZero := 0, false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			switch {
			case x&(1<<i) == 0:
				seenZero = true
			case seenZero:
				return 0, want + " (this one is not contiguous)"
			default:
				n++
			}
		}
	}
	return n, ""
}

// ipv6Mask is the mask of a prefix length in RFC 5952's form.
func ipv6Mask(bits int) string {
	var b [16]byte
	for i := 0; i < bits; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom16(b).String()
}

// ipv6Kinds are FlexSwitch's IPv6 interface and static route, the IPv6
// routing table, and the kernel's neighbour tables (NDP for IPv6, ARP for
// IPv4).
func ipv6Kinds() []*Kind {
	neighbor := func(name, doc string, addr *Format, show []string) *Kind {
		return &Kind{
			Name: name, Class: State,
			Doc: doc,
			CLI: &CLICommand{Words: show, Brief: []string{"IpAddr:Address", "MacAddr:MAC", "Intf:Interface", "Vlan:VLAN", "State"}},
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Key: true, Format: addr, Doc: "the neighbour's address"},
				{Name: "MacAddr", Type: String, Doc: "its MAC address; \"\" while unresolved"},
				{Name: "Vlan", Type: String, Doc: "the VLAN of the interface (vlan10's 10), else \"\""},
				{Name: "Intf", Type: String, Doc: "the interface it was learned on (a port, vlan<N>, or the netdev's name)"},
				{Name: "IfIndex", Type: Int},
				{Name: "ExpiryTimeLeft", Type: String, Doc: "FlexSwitch's field; \"\" on swmgr: the kernel ages its entries itself (State says where an entry is)"},
				{Name: "State", Type: String, Doc: "the kernel's neighbour state: REACHABLE, STALE, DELAY, PROBE, FAILED, INCOMPLETE, PERMANENT, NOARP (swmgr's addition)"},
			},
		}
	}
	return []*Kind{
		{
			Name: "IPv6Intf", Class: Config,
			Doc: "IPv6 on an interface: its global address (IpAddr, optional) and its link-local address (LinkIp). The interface is in the VRF its IPv4Intf puts it in, else the default VRF.",
			CLI: &CLICommand{Words: []string{"ipv6", "address"}, Prompt: []string{"ipv6"}, Value: "IpAddr", Parents: []string{"Port", "LogicalIntf"}, Inherit: "IntfRef", Show: []string{"ipv6", "interface"},
				Brief: []string{"IntfRef:Interface", "IpAddr:IPv6 Address", "LinkLocalIp:Link-local", "AdminState:Admin", "OperState:Oper"}},
			Fields: []*Field{
				{Name: "IntfRef", Type: String, Key: true, Format: FormatIntfRef, Ref: "Port", Doc: "the port, the VLAN interface (vlan10) or the LogicalIntf (Loopback1)"},
				{Name: "IpAddr", Type: String, Format: FormatIPv6CIDR, Doc: "<ipv6>/<prefix length>; \"\" for the link-local address only"},
				{Name: "LinkIp", Type: Bool, Default: true, Doc: "give the interface its link-local address (fe80::/64, from its MAC): what BGP unnumbered and neighbour discovery use", CLI: "link_local"},
				{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates, CLI: "shutdown", CLISwitch: "DOWN"},
			},
			Check: func(o Object) error {
				if o.Str("IpAddr") == "" && !o.Bool("LinkIp") {
					return apierr.BadRequest(apierr.CodeInvalidValue, "IPv6Intf", "IpAddr", "IpAddr: give an address, or LinkIp true: an IPv6Intf with neither has no IPv6")
				}
				return nil
			},
			StateDoc: "OperState is UP when the interface is up and has its addresses (a new address is usable once duplicate address detection passed).",
			StateOnly: []*Field{
				{Name: "OperState", Type: String, Enum: adminStates},
				{Name: "IfIndex", Type: Int},
				{Name: "LinkLocalIp", Type: String, Doc: "the link-local address in use (swmgr's addition)"},
				{Name: "L2IntfType", Type: String},
				{Name: "L2IntfId", Type: Int},
			},
		},
		staticRoute(routeForm{kind: "IPv6Route", words: []string{"ipv6", "route"}, addr: FormatIPv6, mask: FormatIPv6Mask, hop: FormatIPv6Host,
			doc:     "A static IPv6 route: to DestinationNw/NetworkMask through its NextHop list (ECMP when several), or dropped with NullRoute. A link-local next hop (fe80::/10) names its interface (NextHopIntRef). state/IPv6Routes lists the switch's IPv6 routing table.",
			maskDoc: "prefix length or mask; stored as the mask",
			costDoc: "the route's metric (as IPv4Route's)",
			intfDoc: "\"\": the interface whose subnet holds NextHopIp; required for a link-local NextHopIp"}),
		{
			Name: "IPv6RouteState", Class: State,
			CLI: &CLICommand{Words: []string{"ipv6", "route"},
				Brief: []string{"DestinationNw:Destination", "Protocol", "NextHopList:Next hops", "IsNetworkReachable:Reachable"}},
			Doc: "One route of the switch's IPv6 routing table: connected, static and learned (BGP) routes; not the link-local, multicast or local ones.",
			Fields: routeStateFields(
				&Field{Name: "DestinationNw", Type: String, Doc: "prefix, like 2001:db8::/64"},
				&Field{Name: "Protocol", Type: String, Doc: "CONNECTED, STATIC, or the routing daemon's (BGP)"},
				&Field{Name: "IsNetworkReachable", Type: Bool}),
		},
		neighbor("NDPEntryState", "An IPv6 neighbour of the switch (neighbour discovery), as the kernel's neighbour table has it.", FormatIPv6, []string{"ipv6", "neighbors"}),
		neighbor("ArpEntryState", "An IPv4 neighbour of the switch (ARP), as the kernel's neighbour table has it.", FormatIPv4, []string{"ip", "arp"}),
	}
}

// RoutePrefix is the prefix of an IPv4Route's or IPv6Route's key fields
// (DestinationNw and NetworkMask, a dotted mask or an IPv6 mask).
func RoutePrefix(o Object) (netip.Prefix, bool) {
	nw, err := netip.ParseAddr(o.Str("DestinationNw"))
	if err != nil {
		return netip.Prefix{}, false
	}
	if nw.Is6() {
		bits, why := parseIPv6Mask(o.Str("NetworkMask"))
		if why != "" {
			return netip.Prefix{}, false
		}
		return netip.PrefixFrom(nw, bits), true
	}
	mask, err := netip.ParseAddr(o.Str("NetworkMask"))
	if err != nil || !mask.Is4() {
		return netip.Prefix{}, false
	}
	m := mask.As4()
	bits, v := 0, uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3])
	for v&0x80000000 != 0 {
		bits++
		v <<= 1
	}
	if v != 0 {
		return netip.Prefix{}, false // not contiguous
	}
	return netip.PrefixFrom(nw, bits), true
}

// routeKindOf names the route kind of an object for messages.
func routeKindOf(o Object) string {
	if a, err := netip.ParseAddr(o.Str("DestinationNw")); err == nil && a.Is6() {
		return "IPv6Route"
	}
	return "IPv4Route"
}

// checkHopFamily refuses a link-local IPv6 next hop without its interface.
func checkHopFamily(kind string, h Object) error {
	a, err := netip.ParseAddr(h.Str("NextHopIp"))
	if err == nil && a.Is6() && a.IsLinkLocalUnicast() && h.Str("NextHopIntRef") == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NextHop", "NextHop: %s is link-local: name its interface in NextHopIntRef", a)
	}
	return nil
}
