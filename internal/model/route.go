package model

import (
	"github.com/swmgr/swmgr/internal/apierr"
)

// routeKinds are FlexSwitch's static routes (IPv4Route, which TORC and the
// labs POST and DELETE) and the routing table (state/IPv4Routes: every
// route the switch has, connected ones included).
func routeKinds() []*Kind {
	return []*Kind{
		// `ip route 10.2.0.0 255.255.0.0` then `nexthop 10.1.1.2`, or on one line.
		staticRoute(routeForm{kind: "IPv4Route", words: []string{"ip", "route"}, addr: FormatIPv4, mask: FormatIPv4, hop: FormatIPv4Host,
			doc:     "A static IPv4 route: to DestinationNw/NetworkMask through its NextHop list (ECMP when several), or dropped with NullRoute. state/IPv4Routes lists the switch's routing table, not these objects.",
			maskDoc: "dotted mask, like 255.255.255.0",
			costDoc: "administrative distance; 0 is the static default (1)",
			intfDoc: "\"\": the interface whose subnet holds NextHopIp"}),
		{
			Name: "IPv4RouteState", Class: State, Source: SourceService,
			CLI: &CLICommand{Words: []string{"ip", "route"}, Also: []string{"IPv6RouteState"},
				Brief: []string{"DestinationNw:Destination", "Protocol", "NextHopList:Next hops", "IsNetworkReachable:Reachable", "RouteUpdatedTime:Updated"}},
			Doc: "One route of the switch's routing table: connected subnets of its IPv4Intfs and its static routes (later also routes learned by BGP).",
			Fields: routeStateFields(
				&Field{Name: "DestinationNw", Type: String, Doc: "prefix, like 10.1.1.0/30"},
				&Field{Name: "NetworkMask", Type: String, Doc: "the prefix's mask, like 255.255.255.252 (swmgr's addition)"},
				&Field{Name: "Protocol", Type: String, Doc: "CONNECTED or STATIC"},
				&Field{Name: "IsNetworkReachable", Type: Bool, Doc: "the route is usable: its interface is up, or a next hop lies in an up connected subnet"}),
		},
	}
}

// routeStateFields are a routing table's route's fields (IPv4RouteState,
// IPv6RouteState): the family's own first, then the times, the next hops
// and the policies.
func routeStateFields(own ...*Field) []*Field {
	return append(own,
		&Field{Name: "RouteCreatedTime", Type: String},
		&Field{Name: "RouteUpdatedTime", Type: String},
		&Field{Name: "NextHopList", Type: RecordList, Sub: []*Field{
			{Name: "NextHopIp", Type: String},
			{Name: "NextHopIntRef", Type: String},
			{Name: "Weight", Type: Int},
		}},
		&Field{Name: "PolicyList", Type: StringList})
}

// routeForm is what tells a static route kind of one family from the
// other's: its name and CLI words, its address formats and its texts.
type routeForm struct {
	kind                           string
	words                          []string
	addr, mask, hop                *Format
	doc, maskDoc, costDoc, intfDoc string
}

// staticRoute declares FlexSwitch's static route of one family (IPv4Route,
// IPv6Route): DestinationNw and NetworkMask as key, Cost, NullRoute and
// the NextHop list.
func staticRoute(f routeForm) *Kind {
	return &Kind{
		Name: f.kind, Class: Config,
		CLI: &CLICommand{Words: f.words, Prompt: f.words},
		Doc: f.doc,
		Fields: []*Field{
			{Name: "DestinationNw", Type: String, Key: true, Format: f.addr, Doc: "network address (host bits zero)"},
			{Name: "NetworkMask", Type: String, Key: true, Format: f.mask, Doc: f.maskDoc},
			{Name: "Protocol", Type: String, Default: "STATIC", Enum: []string{"STATIC"}},
			{Name: "Cost", Type: Int, Range: rng(0, 255), Doc: f.costDoc, CLI: "cost"},
			{Name: "NullRoute", Type: Bool, Doc: "drop the traffic; no next hop", CLI: "nullroute"},
			{Name: "NextHop", Type: RecordList, Doc: "where the traffic goes; at least one unless NullRoute", CLI: "nexthop", Sub: []*Field{
				{Name: "NextHopIp", Type: String, Required: true, Format: f.hop, CLI: "nexthopip"},
				{Name: "NextHopIntRef", Type: String, Format: FormatIntfRef, Doc: f.intfDoc, CLI: "nexthopintref"},
				{Name: "Weight", Type: Int, Range: rng(0, 255), CLI: "weight"},
			}},
		},
		Check: checkRoute,
	}
}

// checkRoute checks a static route of either family (IPv4Route,
// IPv6Route).
func checkRoute(o Object) error {
	kind := routeKindOf(o)
	p, ok := RoutePrefix(o)
	if !ok {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NetworkMask", "NetworkMask: %q is not a contiguous mask like 255.255.255.0", o.Str("NetworkMask"))
	}
	if p.Masked() != p {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "DestinationNw", "DestinationNw: %s has host bits set for mask %s; the network is %s", o.Str("DestinationNw"), o.Str("NetworkMask"), p.Masked().Addr())
	}
	hops := o.Records("NextHop")
	switch {
	case o.Bool("NullRoute") && len(hops) > 0:
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NextHop", "NextHop: a NullRoute drops the traffic and has no next hop")
	case !o.Bool("NullRoute") && len(hops) == 0:
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NextHop", "NextHop: give at least one next hop, or NullRoute true")
	}
	seen := map[string]bool{}
	for _, h := range hops {
		if err := checkHopFamily(kind, h); err != nil {
			return err
		}
		if seen[h.Str("NextHopIp")] {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NextHop", "NextHop: %s is listed twice", h.Str("NextHopIp"))
		}
		seen[h.Str("NextHopIp")] = true
	}
	return nil
}
