package model

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"

	"github.com/swmgr/swmgr/internal/apierr"
)

// The VXLAN and EVPN kinds. FlexSwitch's VxlanInstance (a VNI bridged with
// a VLAN) and VxlanVtepInstance (a VNI's tunnel settings and static remote
// VTEPs) keep its names, fields and defaults; what FlexSwitch has no object
// for is named after OpenConfig: the VXLAN endpoint (openconfig-vxlan's
// source interface and UDP port), the L3 VNI of a VRF (symmetric IRB), and
// BGP's L2VPN_EVPN address family (openconfig-bgp's afi-safi, for the
// instance and per neighbour or peer group).

// MaxVNI is the largest VXLAN network identifier (24 bits).
const MaxVNI = 16777215

// routeTargetRE is a route target or distinguisher: ASN:NN (2- or 4-byte
// AS) or A.B.C.D:NN.
var routeTargetRE = regexp.MustCompile(`^(?:([0-9]{1,10})|([0-9]{1,3}(?:\.[0-9]{1,3}){3})):([0-9]{1,10})$`)

// FormatRouteTarget is a BGP extended community of the route-target type,
// or a route distinguisher, which has the same forms.
var FormatRouteTarget = &Format{
	Name: "route-target", Doc: "ASN:NN or A.B.C.D:NN", Hint: "<ASN:NN>", Sample: "65000:100",
	Check: func(s string) string {
		m := routeTargetRE.FindStringSubmatch(s)
		if m == nil {
			return "a route target or distinguisher like 65000:100 or 192.0.2.1:100"
		}
		nn, err := strconv.ParseUint(m[3], 10, 32)
		if m[1] != "" {
			as, aerr := strconv.ParseUint(m[1], 10, 32)
			// A 2-byte AS leaves 32 bits to the number, a 4-byte one 16.
			if aerr != nil || as == 0 || err != nil || (as > 65535 && nn > 65535) {
				return "ASN:NN with ASN 1..4294967295 and NN 0..4294967295 (0..65535 with a 4-byte ASN)"
			}
			return ""
		}
		if a, aerr := netip.ParseAddr(m[2]); aerr != nil || !a.Is4() || err != nil || nn > 65535 {
			return "A.B.C.D:NN with NN 0..65535"
		}
		return ""
	},
}

// routeTargetFields are the RD and route targets of a VNI: empty, FRR
// derives them (RD router-id:N, RT AS:VNI).
func routeTargetFields() []*Field {
	return []*Field{
		{Name: "RouteDistinguisher", Type: String, Format: FormatRouteTarget, Doc: "\"\": automatic (router id:N); swmgr's addition"},
		{Name: "ImportRouteTargets", Type: StringList, Format: FormatRouteTarget, Doc: "empty: automatic (AS:VNI); swmgr's addition"},
		{Name: "ExportRouteTargets", Type: StringList, Format: FormatRouteTarget, Doc: "empty: automatic (AS:VNI); swmgr's addition"},
	}
}

func evpnKinds() []*Kind {
	vrfRef := func(f *Field) *Field {
		f.Ref, f.RefImplied, f.Format = "Vrf", "default", FormatObjName
		return f
	}
	vni := func(f *Field) *Field {
		f.Type, f.Range = Int, rng(1, MaxVNI)
		return f
	}
	return []*Kind{
		{
			Name: "VxlanEndpoint", Class: Config, Singleton: true,
			Doc: "The switch's VXLAN tunnel endpoint (VTEP; OpenConfig's VXLAN endpoint): the loopback whose IPv4 address every VNI's tunnels start from, and their UDP port. A VNI needs it set, on an interface with an address.",
			CLI: &CLICommand{Words: []string{"vxlan", "endpoint"}, Prompt: []string{"vxlan", ""},
				Shows: []CLIShow{{Words: []string{"vxlan", "vtep"}, Detail: true, Doc: "The switch's VTEP: its source and address"}}},
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "SourceInterface", Type: String, Format: FormatIntfRef, Ref: "Port", Doc: "the interface whose IPv4 address is the VTEP's (a loopback, Loopback1); \"\": no VTEP"},
				{Name: "UdpPort", Type: Int, Default: int64(4789), Range: rng(1, 65535), Doc: "the VXLAN UDP port (IANA's 4789)"},
			},
			StateOnly: []*Field{
				{Name: "SourceAddress", Type: String, Doc: "the VTEP's address: SourceInterface's IPv4 address"},
				{Name: "Vnis", Type: Int, Doc: "the VNIs it carries"},
			},
		},
		{
			Name: "VxlanInstance", Class: Config,
			Doc: "A VXLAN network identifier bridged with a VLAN (an L2 VNI): the VLAN's frames cross the VXLAN fabric. With BGPL2vpnEvpn AdvertiseAllVni, EVPN learns and advertises its MACs. A VNI is on one VLAN, and a VLAN has one VNI.",
			CLI: &CLICommand{Words: []string{"vxlan", "vni"}, Prompt: []string{"vxlan", "vni"}, Value: "Vni", Show: []string{"vxlan", "instance"}},
			Fields: append([]*Field{
				vni(&Field{Name: "Vni", Key: true, Doc: "VXLAN network id, 1..16777215"}),
				{Name: "VlanId", Type: Int, Required: true, Range: rng(1, 4094), Ref: "Vlan", Doc: "the VLAN the VNI is bridged with (FlexSwitch's list holds one VLAN here: a VNI bridges one VLAN)"},
				{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates},
			}, routeTargetFields()...),
			Constraints: []Constraint{oneVNIPerVLAN, vtepHasSource},
			StateOnly: []*Field{
				{Name: "OperState", Type: String, Enum: adminStates},
				{Name: "VxlanIntf", Type: String, Doc: "the VNI's VXLAN device"},
			},
		},
		{
			Name: "VxlanVtepInstance", Class: Config,
			Doc: "A VNI's tunnel settings (FlexSwitch's VTEP instance): its source where it differs from VxlanEndpoint's, TTL, TOS, MTU, UDP port, and static remote VTEPs (DstIp) that get the VNI's flooded frames beside those EVPN finds.",
			CLI: &CLICommand{Words: []string{"vxlan", "vtep"}, Prompt: []string{"vxlan", "vtep"}, Value: "Intf"},
			Fields: []*Field{
				{Name: "Intf", Type: String, Key: true, Text: TextName, MaxLen: 15, Doc: "the VTEP instance's name (vtep100)"},
				vni(&Field{Name: "Vni", Key: true, Ref: "VxlanInstance", Doc: "the VxlanInstance it sets up; one VTEP instance per VNI"}),
				{Name: "IntfRef", Type: String, Format: FormatIntfRef, Ref: "Port", Doc: "the interface whose IPv4 address is the source; \"\": SrcIp, else VxlanEndpoint's"},
				{Name: "SrcIp", Type: String, Default: "0.0.0.0", Format: FormatIPv4, Doc: "the source address when IntfRef is \"\"; 0.0.0.0: VxlanEndpoint's"},
				{Name: "DstIp", Type: StringList, Format: FormatIPv4Host, Doc: "static remote VTEPs: each gets the VNI's flooded frames (head-end replication)"},
				{Name: "VlanId", Type: Int, Range: rng(0, 4094), NotYet: "an 802.1Q tag on the tunnel's own packets: they leave untagged, routed by the underlay", Doc: "FlexSwitch's outer VLAN tag of the tunnel"},
				{Name: "TOS", Type: Int, Range: rng(0, 255)},
				{Name: "TTL", Type: Int, Default: int64(255), Range: rng(1, 255)},
				{Name: "Mtu", Type: Int, Default: int64(1550), Range: rng(68, 9216), Doc: "the VXLAN device's MTU"},
				{Name: "DstUDP", Type: Int, Default: int64(4789), Range: rng(1, 65535)},
				{Name: "InnerVlanHandlingMode", Type: Int, Range: rng(0, 1), NotYet: "keeping the inner VLAN tag (NO_DISCARD_INNER_VLAN): the VLAN-aware bridge strips it", Doc: "0 DISCARD_INNER_VLAN"},
			},
			Constraints: []Constraint{vtepHasSource},
		},
		{
			Name: "EvpnL3Vni", Class: Config,
			Doc: "The L3 VNI of a VRF (symmetric IRB): routed traffic between VTEPs of the VRF crosses the fabric in this VNI, through the VLAN VlanId whose interface is put in the VRF, and the VRF's BGP routes are advertised as EVPN type-5 routes (AdvertiseIPv4Unicast, with a BGPVrf).",
			CLI: &CLICommand{Words: []string{"vrf", "vni"}, Prompt: []string{"vrf", "l3vni"}, Value: "Vrf"},
			Fields: append([]*Field{
				vrfRef(&Field{Name: "Vrf", Type: String, Key: true, Doc: "the tenant VRF; not default"}),
				vni(&Field{Name: "Vni", Required: true, Doc: "the L3 VNI, 1..16777215; not a VxlanInstance's"}),
				{Name: "VlanId", Type: Int, Required: true, Range: rng(1, 4094), Ref: "Vlan", Doc: "the VLAN that carries the L3 VNI; its interface (vlan<N>) is put in the VRF"},
				{Name: "AdvertiseIPv4Unicast", Type: Bool, Default: true, Doc: "advertise the VRF's IPv4 BGP routes as EVPN type-5 routes (needs a BGPVrf of the VRF)"},
			}, routeTargetFields()...),
			Check: func(o Object) error {
				if o.Str("Vrf") == "default" {
					return apierr.BadRequest(apierr.CodeInvalidValue, "EvpnL3Vni", "Vrf", "Vrf: an L3 VNI is a tenant VRF's; the default VRF carries the underlay")
				}
				return nil
			},
			Constraints: []Constraint{oneVNIPerVLAN, vtepHasSource},
		},
		{
			Name: "BGPL2vpnEvpn", Class: Config, Singleton: true,
			Doc: "BGP's L2VPN EVPN address family in the default VRF (OpenConfig's L2VPN_EVPN afi-safi): AdvertiseAllVni advertises every VNI's MACs and hosts (type-2) and VTEP (type-3), learning the remote ones; the neighbours that exchange EVPN routes are BGPL2vpnEvpnNeighbor.",
			CLI: &CLICommand{Words: []string{"address-family", "l2vpn", "evpn"}, Prompt: []string{"af", "", "evpn"}, Parents: []string{"BGPGlobal"}, Show: []string{"bgp", "l2vpn", "evpn", "global"}},
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "AdvertiseAllVni", Type: Bool, CLI: "advertise_all_vni", Doc: "advertise every VNI of the switch (FRR's advertise-all-vni)"},
				{Name: "AdvertiseDefaultGw", Type: Bool, CLI: "advertise_default_gw", Doc: "advertise the VLAN interfaces' addresses as default gateways (asymmetric IRB's distributed gateway)"},
			},
		},
		{
			Name: "BGPL2vpnEvpnNeighbor", Class: Config,
			Doc: "A BGP neighbour or peer group that exchanges EVPN routes (the L2VPN EVPN address family activated for it): Neighbor names a BGPv4Neighbor of the default VRF by address, an unnumbered one by its interface, or a BGPv4PeerGroup.",
			CLI: &CLICommand{Words: []string{"neighbor", "evpn"}, Prompt: []string{"evpn-nbr", ""}, Value: "Neighbor", Parents: []string{"BGPGlobal"},
				Brief: []string{"Neighbor", "SessionState:State", "PrefixesReceived:PfxRcd", "RouteReflectorClient:RR-client"},
				Shows: []CLIShow{{Words: []string{"bgp", "l2vpn", "evpn", "summary"}, Doc: "Every EVPN session: state, EVPN routes received",
					Columns: []string{"Neighbor", "PeerAS:AS", "SessionStateDuration:Up/Down", "SessionState:State", "PrefixesReceived:PfxRcd"}}}},
			Fields: []*Field{
				{Name: "Neighbor", Type: String, Key: true, Text: TextName, MaxLen: 63, Doc: "a BGPv4Neighbor's NeighborAddress, an unnumbered one's IntfRef, or a BGPv4PeerGroup's Name"},
				{Name: "RouteReflectorClient", Type: Bool, CLI: "route_reflector_client", Doc: "reflect EVPN routes to it (an iBGP route reflector)"},
			},
			Constraints: []Constraint{evpnNeighborExists},
			StateOnly: []*Field{
				{Name: "PeerAS", Type: String},
				{Name: "SessionState", Type: Int, Doc: "RFC 4271 FSM state: 1 Idle .. 6 Established; 0 for a peer group", Names: sessionStates},
				{Name: "SessionStateDuration", Type: String, Doc: "how long the session has been in SessionState"},
				{Name: "PrefixesReceived", Type: Int, Doc: "EVPN routes received"},
			},
		},
		{
			Name: "EvpnVniState", Class: State, Source: SourceBackend,
			Doc: "A VNI as EVPN runs it: L2 (a VxlanInstance) or L3 (an EvpnL3Vni), its VXLAN device, the remote VTEPs that share it, and the MACs and hosts known in it. The Linux backend reads it from FRR (show evpn vni); the simulated switch shows the configured VNIs with no remote VTEP.",
			CLI: &CLICommand{Words: []string{"evpn", "vni"}, Brief: []string{"Vni:VNI", "Type", "VxlanIntf:VxLAN IF", "NumMacs:# MACs", "NumArpNd:# ARPs", "NumRemoteVteps:# Remote VTEPs", "Vrf:Tenant VRF"}},
			Fields: []*Field{
				{Name: "Vni", Type: Int, Key: true},
				{Name: "Type", Type: String, Enum: []string{"L2", "L3"}},
				{Name: "VxlanIntf", Type: String, Doc: "the VXLAN device"},
				{Name: "Vrf", Type: String, Doc: "the tenant VRF"},
				{Name: "LocalVtep", Type: String, Doc: "the switch's VTEP address"},
				{Name: "RemoteVteps", Type: StringList, Doc: "the remote VTEPs that carry the VNI"},
				{Name: "NumRemoteVteps", Type: Int, Metric: &Metric{Name: "remote_vteps"}},
				{Name: "NumMacs", Type: Int, Doc: "MACs known in the VNI, local and remote", Metric: &Metric{Name: "macs"}},
				{Name: "NumArpNd", Type: Int, Doc: "IP-to-MAC bindings known in the VNI", Metric: &Metric{Name: "arp_nd"}},
			},
			Metrics: &Metrics{Subsystem: "evpn_vni", Doc: "EVPN VNI", Labels: []MetricLabel{{Field: "Vni", Label: "vni"}, {Field: "Type", Label: "type"}}},
		},
		{
			Name: "EvpnMacState", Class: State, Source: SourceBackend,
			Doc: "A MAC address EVPN knows in a VNI: local (learned on a port of the switch) or remote (an EVPN type-2 route from a remote VTEP). The Linux backend reads it from FRR (show evpn mac vni all); the simulated switch knows none.",
			CLI: &CLICommand{Words: []string{"evpn", "mac"}, Brief: []string{"Vni:VNI", "MacAddr:MAC", "Type", "Intf:Intf/Remote VTEP", "RemoteVtep", "Sequence:Seq"}},
			Fields: []*Field{
				{Name: "Vni", Type: Int, Key: true},
				{Name: "MacAddr", Type: String, Key: true},
				{Name: "Type", Type: String, Enum: []string{"local", "remote"}},
				{Name: "Intf", Type: String, Doc: "a local MAC's interface"},
				{Name: "VlanId", Type: Int, Doc: "a local MAC's VLAN"},
				{Name: "RemoteVtep", Type: String, Doc: "a remote MAC's VTEP"},
				{Name: "Sequence", Type: Int, Doc: "the MAC mobility sequence number (RFC 7432)"},
			},
		},
		{
			Name: "EvpnRouteState", Class: State, Source: SourceBackend,
			Doc: "A route of BGP's EVPN table: type 2 (a MAC, with its IP), 3 (a VTEP's flooding), 5 (an IP prefix of a tenant VRF), by route distinguisher. The Linux backend reads it from FRR (show bgp l2vpn evpn); the simulated switch has none.",
			CLI: &CLICommand{Words: []string{"bgp", "l2vpn", "evpn"}, Brief: []string{"RouteDistinguisher:RD", "RouteType:Type", "Mac", "IpAddr:IP/Prefix", "NextHop", "Best"}},
			Fields: []*Field{
				{Name: "RouteDistinguisher", Type: String, Key: true},
				{Name: "Prefix", Type: String, Key: true, Doc: "FRR's form: [2]:[0]:[48]:[mac], [3]:[0]:[32]:[vtep], [5]:[0]:[24]:[prefix]"},
				{Name: "RouteType", Type: Int, Doc: "2 MAC/IP, 3 inclusive multicast (a VTEP), 5 IP prefix"},
				{Name: "Mac", Type: String, Doc: "type 2: the MAC"},
				{Name: "IpAddr", Type: String, Doc: "type 2: the host's address, if any; type 3: the VTEP; type 5: the prefix"},
				{Name: "NextHop", Type: String, Doc: "the VTEP the route leads to"},
				{Name: "Vni", Type: Int, Doc: "the VNI the route carries (its label)"},
				{Name: "Best", Type: Bool, Doc: "BGP's best path among those of the prefix"},
				{Name: "Local", Type: Bool, Doc: "originated by the switch"},
			},
		},
	}
}

// oneVNIPerVLAN: a VNI is bridged with one VLAN and a VLAN with one VNI,
// whether an L2 VNI (VxlanInstance) or a VRF's L3 VNI (EvpnL3Vni).
var oneVNIPerVLAN = Constraint{
	Name:  "a VNI is on one VLAN, a VLAN carries one VNI",
	Kinds: []string{"VxlanInstance", "EvpnL3Vni"},
	Check: func(cfg View, changes []Change) error {
		byVNI, byVLAN := map[int64][]string{}, map[int64][]string{}
		type entry struct {
			vni, vlan int64
			what      string
		}
		var all []entry
		if err := cfg.Each("VxlanInstance", func(_ string, o Object) bool {
			all = append(all, entry{o.Int("Vni"), o.Int("VlanId"), fmt.Sprintf("VNI %d (VxlanInstance, VLAN %d)", o.Int("Vni"), o.Int("VlanId"))})
			return true
		}); err != nil {
			return err
		}
		if err := cfg.Each("EvpnL3Vni", func(_ string, o Object) bool {
			all = append(all, entry{o.Int("Vni"), o.Int("VlanId"), fmt.Sprintf("VNI %d (the L3 VNI of VRF %s, VLAN %d)", o.Int("Vni"), o.Str("Vrf"), o.Int("VlanId"))})
			return true
		}); err != nil {
			return err
		}
		// The same order whatever the store's: the message names the same pair.
		sort.Slice(all, func(i, j int) bool { return all[i].what < all[j].what })
		for _, e := range all {
			byVNI[e.vni] = append(byVNI[e.vni], e.what)
			byVLAN[e.vlan] = append(byVLAN[e.vlan], e.what)
			if u := byVNI[e.vni]; len(u) > 1 {
				return apierr.Conflict(apierr.CodeConflict, "VxlanInstance", "VNI %d would be used twice: %s and %s; a VNI is on one VLAN", e.vni, u[0], u[1])
			}
			if u := byVLAN[e.vlan]; len(u) > 1 {
				return apierr.Conflict(apierr.CodeConflict, "VxlanInstance", "VLAN %d would carry two VNIs: %s and %s; a VLAN carries one VNI", e.vlan, u[0], u[1])
			}
		}
		return nil
	},
}

// vtepHasSource: every VNI has a tunnel source with an IPv4 address: its
// VxlanVtepInstance's (IntfRef, or SrcIp), else VxlanEndpoint's
// SourceInterface; an interface given as a source carries an IPv4Intf.
var vtepHasSource = Constraint{
	Name:  "a VNI's VTEP source has an address",
	Kinds: []string{"VxlanEndpoint", "VxlanInstance", "VxlanVtepInstance", "EvpnL3Vni", "IPv4Intf"},
	Check: func(cfg View, changes []Change) error {
		addressed := map[string]bool{}
		if err := cfg.Each("IPv4Intf", func(_ string, o Object) bool {
			addressed[o.Str("IntfRef")] = true
			return true
		}); err != nil {
			return err
		}
		own := map[int64]bool{} // VNIs whose VTEP instance gives a source
		var clash error
		if err := cfg.Each("VxlanVtepInstance", func(_ string, o Object) bool {
			switch src := o.Str("IntfRef"); {
			case src != "" && !addressed[src]:
				clash = apierr.Conflict(apierr.CodeConflict, "VxlanVtepInstance", "IntfRef: %s, the source of VTEP %s (VNI %d), has no IPv4 address; give it an IPv4Intf first", src, o.Str("Intf"), o.Int("Vni"))
				return false
			case src != "" || (o.Str("SrcIp") != "" && o.Str("SrcIp") != "0.0.0.0"):
				own[o.Int("Vni")] = true
			}
			return true
		}); err != nil || clash != nil {
			return firstErr(err, clash)
		}
		var src string
		if ep := cfg.Get("VxlanEndpoint", "default"); ep != nil {
			src = ep.Str("SourceInterface")
		}
		if src != "" && !addressed[src] {
			return apierr.Conflict(apierr.CodeConflict, "VxlanEndpoint", "SourceInterface: %s has no IPv4 address: the VTEP's address is its address; give it an IPv4Intf first", src)
		}
		if src != "" {
			return nil
		}
		for _, kind := range []string{"VxlanInstance", "EvpnL3Vni"} {
			if err := cfg.Each(kind, func(_ string, o Object) bool {
				if !own[o.Int("Vni")] {
					clash = apierr.Conflict(apierr.CodeConflict, kind, "VNI %d has no VTEP source: set VxlanEndpoint's SourceInterface to a loopback with an IPv4 address", o.Int("Vni"))
					return false
				}
				return true
			}); err != nil || clash != nil {
				return firstErr(err, clash)
			}
		}
		return nil
	},
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// evpnNeighborExists: an EVPN neighbour names a BGP neighbour of the
// default VRF (by address or, unnumbered, by interface) or a peer group.
var evpnNeighborExists = Constraint{
	Name:  "an EVPN neighbour is a BGP neighbour or peer group",
	Kinds: []string{"BGPL2vpnEvpnNeighbor", "BGPv4Neighbor", "BGPv4PeerGroup"},
	Check: func(cfg View, changes []Change) error {
		known := map[string]bool{}
		if err := cfg.Each("BGPv4Neighbor", func(_ string, o Object) bool {
			if o.Str("Vrf") == "default" || o.Str("Vrf") == "" {
				if a := o.Str("NeighborAddress"); a != "" {
					known[a] = true
				} else {
					known[o.Str("IntfRef")] = true
				}
			}
			return true
		}); err != nil {
			return err
		}
		if err := cfg.Each("BGPv4PeerGroup", func(_ string, o Object) bool {
			known[o.Str("Name")] = true
			return true
		}); err != nil {
			return err
		}
		var clash error
		err := cfg.Each("BGPL2vpnEvpnNeighbor", func(_ string, o Object) bool {
			if !known[o.Str("Neighbor")] {
				clash = apierr.Conflict(apierr.CodeConflict, "BGPL2vpnEvpnNeighbor", "Neighbor: %q is no BGPv4Neighbor of the default VRF (by address or interface) and no BGPv4PeerGroup; create it first (or delete its EVPN neighbour before it)", o.Str("Neighbor"))
				return false
			}
			return true
		})
		return firstErr(err, clash)
	},
}
