package model

import (
	"net/http"
	"net/netip"
	"slices"

	"github.com/swmgr/swmgr/internal/apierr"
)

// BGP over IPv6 and route aggregation, FlexSwitch's BGPv6Neighbor,
// BGPv6PeerGroup, BGPv4Aggregate and BGPv6Aggregate (bgpObjects.go of its
// models): a BGPv6Neighbor is BGPv4Neighbor's declaration with an IPv6
// address, naming a BGPv6PeerGroup, without AuthPassword (FlexSwitch's
// BGPv6Neighbor has none); its session exchanges IPv6 unicast routes only.
// The BGP route tables (BGPv4RouteState, BGPv6RouteState) are what the
// routing daemon learned, every path of every prefix; the actions reset a
// session or clear and refresh the kernel's neighbour tables.

// bgpv6NeighborFields are BGPv4Neighbor's fields in their IPv6 form.
func bgpv6NeighborFields(vrfRef func(*Field) *Field) []*Field {
	var out []*Field
	for _, f := range bgpNeighborFields(vrfRef) {
		switch f.Name {
		case "AuthPassword":
			continue
		case "NeighborAddress":
			f.Format = FormatIPv6Host
			f.Doc = "a global or link-local IPv6 address (a link-local one names its interface in IntfRef); \"\" for a neighbor by interface (IntfRef)"
		case "IntfRef":
			f.Doc = "the interface of a link-local NeighborAddress; with NeighborAddress \"\", a session with whatever router answers on that interface (its link-local address, found by neighbour discovery); \"\" (the default) for a neighbor by global address. The interface needs an IPv6Intf"
		case "PeerGroup":
			f.Ref = "BGPv6PeerGroup"
			f.Doc = "the BGPv6PeerGroup whose settings the neighbor takes where it sets none"
		case "UpdateSource":
			f.MaxLen = 39
			f.Doc = "source of the session: an IPv6 address or an interface name (Loopback1); \"\" lets the switch choose"
		}
		out = append(out, f)
	}
	return out
}

// bgpv6PeerGroupFields are FlexSwitch's BGPv6PeerGroup: BGPv4PeerGroup's
// fields but AuthPassword, in their IPv6 form.
func bgpv6PeerGroupFields(vrfRef func(*Field) *Field) []*Field {
	fields := []*Field{{Name: "Name", Type: String, Key: true, Format: FormatRoutingName, Doc: "the group's name; not also a BGPv4PeerGroup's"}}
	for _, f := range bgpv6NeighborFields(vrfRef) {
		if peerGroupFields[f.Name] {
			fields = append(fields, f)
		}
	}
	return fields
}

// checkBGPv6Neighbor: by address or by interface, a link-local address
// with its interface, a peer AS of its own or its group's.
func checkBGPv6Neighbor(o Object) error {
	const kind = "BGPv6Neighbor"
	addr, intf := o.Str("NeighborAddress"), o.Str("IntfRef")
	if addr == "" && intf == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NeighborAddress", "NeighborAddress: give the neighbor's IPv6 address, or IntfRef for a session on that interface")
	}
	if a, err := netip.ParseAddr(addr); err == nil && a.IsLinkLocalUnicast() && intf == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "IntfRef", "IntfRef: %s is link-local: name its interface in IntfRef", a)
	}
	if o.Str("PeerAS") == "" && o.Str("PeerGroup") == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "PeerAS", "PeerAS: give the peer's AS (or external, internal), or a PeerGroup that gives it")
	}
	return checkBGPPeer(kind, o)
}

// aggregateKind declares FlexSwitch's aggregate of one family.
func aggregateKind(name, family, example string, words, show []string) *Kind {
	return &Kind{
		Name: name, Class: Config,
		Doc: "An " + family + " aggregate of BGP: while BGP has a route inside IpPrefix, it announces IpPrefix too (and only it with SendSummaryOnly).",
		CLI: &CLICommand{Words: words, Value: "IpPrefix", Parents: []string{"BGPGlobal"}, Show: show},
		Fields: []*Field{
			{Name: "IpPrefix", Type: String, Key: true, Doc: "the aggregate, like " + example + " (host bits zero)"},
			{Name: "SendSummaryOnly", Type: Bool, CLI: "summary_only", Doc: "announce the aggregate and not the routes inside it"},
			{Name: "GenerateASSet", Type: Bool, CLI: "as_set", Doc: "the aggregate's AS path carries the AS set of the routes inside it"},
		},
		Check: checkAggregate(name, family == "IPv6"),
	}
}

// checkAggregate keeps an aggregate's prefix as the network it names
// (the host bits zero), refusing one with host bits set.
func checkAggregate(kind string, v6 bool) func(Object) error {
	return func(o Object) error {
		s := o.Str("IpPrefix")
		var p netip.Prefix
		if v6 {
			var why string
			if p, why = parseIPv6Prefix(s); why != "" {
				return apierr.BadRequest(apierr.CodeInvalidValue, kind, "IpPrefix", "IpPrefix: %q is not %s", s, why)
			}
		} else {
			var err error
			if p, err = netip.ParsePrefix(s); err != nil || !p.Addr().Is4() {
				return apierr.BadRequest(apierr.CodeInvalidValue, kind, "IpPrefix", "IpPrefix: %q is not an IPv4 prefix like 10.1.0.0/16", s)
			}
		}
		if p.Bits() == 0 {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "IpPrefix", "IpPrefix: %s aggregates every route: give a prefix length of 1 or more", p)
		}
		if p.Masked() != p {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "IpPrefix", "IpPrefix: %s has host bits set: the network is %s", s, p.Masked())
		}
		o["IpPrefix"] = p.String()
		return nil
	}
}

// bgpIntfNeedsIPv6: a BGP session on an interface (an unnumbered neighbor,
// or a BGPv6Neighbor's link-local address) runs over the interface's
// IPv6 link-local address, which only an IPv6Intf on it gives.
var bgpIntfNeedsIPv6 = Constraint{
	Name:  "a BGP neighbor on an interface needs IPv6 on it",
	Kinds: []string{"BGPv4Neighbor", "BGPv6Neighbor", "IPv6Intf"},
	Check: func(cfg View, changes []Change) error {
		v6 := map[string]bool{}
		if err := cfg.Each("IPv6Intf", func(_ string, o Object) bool {
			v6[o.Str("IntfRef")] = true
			return true
		}); err != nil {
			return err
		}
		var bad error
		for _, kind := range []string{"BGPv4Neighbor", "BGPv6Neighbor"} {
			err := cfg.Each(kind, func(_ string, o Object) bool {
				intf := o.Str("IntfRef")
				if intf == "" || v6[intf] || (kind == "BGPv4Neighbor" && o.Str("NeighborAddress") != "") {
					return true
				}
				culprit := kind
				if i := slices.IndexFunc(changes, func(c Change) bool { return c.Kind.Name == "IPv6Intf" && c.Op == Delete }); i >= 0 {
					culprit = "IPv6Intf"
				}
				bad = apierr.New(http.StatusConflict, apierr.CodeConflict, culprit, "IntfRef",
					"IntfRef: %s neighbor %s on %s needs IPv6 on %s (an IPv6Intf, its link-local address at least): BGP on an interface runs over it", kind, o.Str("NeighborAddress"), intf, intf)
				return false
			})
			if err != nil {
				return err
			}
			if bad != nil {
				return bad
			}
		}
		return nil
	},
}

// bgpRouteFields are a BGP route table's entry: a prefix and its paths.
func bgpRouteFields(family string) []*Field {
	return []*Field{
		{Name: "Vrf", Type: String, Key: true, Default: "default", Doc: "the VRF's BGP table (swmgr's addition to FlexSwitch's keys)"},
		{Name: "Network", Type: String, Key: true, Doc: "the destination's network address (" + family + ")"},
		{Name: "CIDRLen", Type: Int, Key: true, Doc: "its prefix length"},
		{Name: "Paths", Type: RecordList, Doc: "every path BGP has to the destination; Best marks the one it chose", Sub: []*Field{
			{Name: "NextHop", Type: String, Doc: "the next hop (of an IPv6 next hop, its global address, else its link-local one); \"\" for a route the switch originates"},
			{Name: "NextHopIntf", Type: String, Doc: "the interface of a link-local next hop, where the routing daemon says it (a neighbor by interface's); else \"\" (swmgr's addition)"},
			{Name: "Peer", Type: String, Doc: "the neighbor it was learned from: its address, or for a neighbor by interface the interface; \"\" for a route the switch originates"},
			{Name: "Path", Type: String, Doc: "the AS path, as BGP prints it (65002 65010 {65020})"},
			{Name: "LocalPref", Type: Int},
			{Name: "MED", Type: Int},
			{Name: "Origin", Type: String, Doc: "IGP, EGP or incomplete"},
			{Name: "Best", Type: Bool, Doc: "the path BGP chose (swmgr's addition)"},
			{Name: "Multipath", Type: Bool, Doc: "installed beside the best one (ECMP)"},
		}},
	}
}

// resetAction is one of FlexSwitch's BGP reset actions: its one field.
func resetAction(name, field, doc string, format *Format) *Kind {
	return &Kind{Name: name, Class: Action, Doc: doc, Fields: []*Field{
		{Name: field, Type: String, Required: true, Format: format},
	}}
}

// neighborTableAction is one of FlexSwitch's ARP and NDP actions: by
// address (IpAddr) or by interface (IfName).
func neighborTableAction(name, doc string, byAddr *Format) *Kind {
	f := &Field{Name: "IfName", Type: String, Required: true, Format: FormatIntfRef, Ref: "Port", Doc: "a port, a VLAN interface (vlan10) or the netdev's name"}
	if byAddr != nil {
		f = &Field{Name: "IpAddr", Type: String, Required: true, Format: byAddr}
	}
	return &Kind{Name: name, Class: Action, Doc: doc, Fields: []*Field{f}}
}

// bgp6Kinds are BGP over IPv6, the aggregates, the BGP route tables,
// NDPGlobal and the neighbour table and reset actions.
func bgp6Kinds(vrfRef func(*Field) *Field) []*Kind {
	return []*Kind{
		{
			Name: "BGPv6PeerGroup", Class: Config,
			Doc:    "A BGP peer group of IPv6 sessions: settings its neighbors (BGPv6Neighbor PeerGroup) take where they set none; the group exchanges IPv6 unicast routes. A group in use cannot be deleted; a group cannot name another group.",
			CLI:    &CLICommand{Words: []string{"peer-group", "ipv6"}, Prompt: []string{"peer-group"}, Parents: []string{"BGPGlobal"}, Show: []string{"bgp", "ipv6", "peer-group"}},
			Fields: bgpv6PeerGroupFields(vrfRef),
			Check:  func(o Object) error { return checkBGPPeer("BGPv6PeerGroup", o) },
		},
		{
			Name: "BGPv6Neighbor", Class: Config,
			Doc: "A BGP peer over IPv6, keyed by VRF, address and IntfRef: by a global address (IntfRef \"\"), by a link-local address and its interface, or by interface alone (NeighborAddress \"\"). The session exchanges IPv6 unicast routes.",
			CLI: &CLICommand{Words: []string{"neighbor", "ipv6"}, Value: "NeighborAddress", Prompt: []string{"neighbor"}, Parents: []string{"BGPGlobal", "BGPVrf"}, Inherit: "Vrf", Show: []string{"bgp", "ipv6", "neighbor"},
				Brief: []string{"NeighborAddress:Neighbor", "IntfRef:Interface", "Vrf:VRF", "PeerAS", "SessionState:State", "SessionStateDuration:Up/Down", "PrefixesAccepted:PfxAcc", "PrefixesAdvertised:PfxSnt"},
				Shows: []CLIShow{{Words: []string{"bgp", "ipv6", "summary"}, Doc: "Every IPv6 BGP session: AS, state, time in state, prefixes received and sent",
					Columns: []string{"NeighborAddress:Neighbor", "IntfRef:Interface", "Vrf:VRF", "PeerAS:AS", "Messages.Received.Update:UpdRcvd", "Messages.Sent.Update:UpdSent", "SessionStateDuration:Up/Down", "SessionState:State", "PrefixesReceived:PfxRcd", "PrefixesAdvertised:PfxSnt"}}}},
			Metrics:     &Metrics{Subsystem: "bgp6_peer", Doc: "BGP session over IPv6", Labels: []MetricLabel{{Field: "Vrf", Label: "vrf"}, {Field: "NeighborAddress", Label: "peer"}, {Field: "IntfRef", Label: "interface"}, {Field: "PeerAS", Label: "peer_as"}}},
			Fields:      bgpv6NeighborFields(vrfRef),
			Check:       checkBGPv6Neighbor,
			Constraints: []Constraint{bgpIntfNeedsIPv6},
			StateOnly:   bgpNeighborStateFields(),
		},
		aggregateKind("BGPv4Aggregate", "IPv4", "10.1.0.0/16", []string{"aggregate-address"}, []string{"ip", "bgp", "aggregate"}),
		aggregateKind("BGPv6Aggregate", "IPv6", "2001:db8::/32", []string{"aggregate-address", "ipv6"}, []string{"bgp", "ipv6", "aggregate"}),
		{
			Name: "BGPv4RouteState", Class: State,
			Doc:    "One IPv4 destination of BGP's table (what BGP learned and originates, before the routing table's choice between protocols), with every path.",
			CLI:    &CLICommand{Words: []string{"bgp", "ipv4", "unicast"}, Brief: []string{"Network", "CIDRLen:Len", "Vrf:VRF", "Paths"}},
			Fields: bgpRouteFields("IPv4"),
		},
		{
			Name: "BGPv6RouteState", Class: State,
			Doc:    "One IPv6 destination of BGP's table (what BGP learned and originates, before the routing table's choice between protocols), with every path.",
			CLI:    &CLICommand{Words: []string{"bgp", "ipv6", "unicast"}, Brief: []string{"Network", "CIDRLen:Len", "Vrf:VRF", "Paths"}},
			Fields: bgpRouteFields("IPv6"),
		},
		ndpGlobalKind(), // ndp.go
		resetAction("ResetBGPv4NeighborByIPAddr", "IPAddr", "Resets the BGP session with an IPv4 neighbor (of any VRF): the session is torn down and established again, and its routes are learned again.", FormatIPv4Host),
		resetAction("ResetBGPv4NeighborByInterface", "IntfRef", "Resets the unnumbered BGP session on an interface (a BGPv4Neighbor by IntfRef).", FormatIntfRef),
		resetAction("ResetBGPv6NeighborByIPAddr", "IPAddr", "Resets the BGP session with an IPv6 neighbor (of any VRF).", FormatIPv6Host),
		resetAction("ResetBGPv6NeighborByInterface", "IntfRef", "Resets the BGP session on an interface (a BGPv6Neighbor by IntfRef).", FormatIntfRef),
		neighborTableAction("ArpDeleteByIPv4Addr", "Deletes the ARP entry of an IPv4 address (every VRF's); a permanent one is kept.", FormatIPv4Host),
		neighborTableAction("ArpDeleteByIfName", "Deletes every ARP entry learned on an interface; permanent ones are kept.", nil),
		neighborTableAction("ArpRefreshByIPv4Addr", "Makes the ARP entry of an IPv4 address be confirmed again now (it is probed).", FormatIPv4Host),
		neighborTableAction("ArpRefreshByIfName", "Makes every ARP entry learned on an interface be confirmed again now.", nil),
		neighborTableAction("NdpDeleteByIPv6Addr", "Deletes the neighbour discovery entry of an IPv6 address (every VRF's); a permanent one is kept.", FormatIPv6Host),
		neighborTableAction("NdpDeleteByIfName", "Deletes every neighbour discovery entry learned on an interface; permanent ones are kept.", nil),
		neighborTableAction("NdpRefreshByIPv6Addr", "Makes the neighbour discovery entry of an IPv6 address be confirmed again now (it is probed).", FormatIPv6Host),
		neighborTableAction("NdpRefreshByIfName", "Makes every neighbour discovery entry learned on an interface be confirmed again now.", nil),
	}
}

// prefixCounterFields are a session's prefix counts for its address
// family (IPv4 unicast for a BGPv4Neighbor, IPv6 unicast for a
// BGPv6Neighbor).
func prefixCounterFields() []*Field {
	return []*Field{
		{Name: "PrefixesReceived", Type: Int, Doc: "prefixes the neighbor announced, before inbound policy (its AdjRIBInFilter); without an inbound filter nothing is dropped by policy and this is PrefixesAccepted", Metric: &Metric{Name: "prefixes_received_pre_policy"}},
		{Name: "PrefixesAccepted", Type: Int, Doc: "prefixes taken from the neighbor into BGP's table, after inbound policy", Metric: &Metric{Name: "prefixes_accepted"}},
		{Name: "PrefixesInstalled", Type: Int, Doc: "accepted prefixes whose path from the neighbor is BGP's best", Metric: &Metric{Name: "prefixes_installed"}},
		{Name: "PrefixesAdvertised", Type: Int, Doc: "prefixes announced to the neighbor", Metric: &Metric{Name: "prefixes_advertised"}},
	}
}

// unnumberedIPv6CounterFields are the IPv6 unicast prefix counts of a
// BGPv4Neighbor by interface (unnumbered), which carries both families; 0
// for one by address (IPv4 unicast only).
func unnumberedIPv6CounterFields() []*Field {
	var out []*Field
	for _, f := range prefixCounterFields() {
		out = append(out, &Field{Name: "IPv6" + f.Name, Type: f.Type, Doc: "IPv6 unicast (an unnumbered neighbor's): " + f.Doc})
	}
	return out
}

// parseIPv6Why is what is wrong with s as an IPv6 address, "" if nothing.
func parseIPv6Why(s string) string {
	_, why := parseIPv6(s)
	return why
}
