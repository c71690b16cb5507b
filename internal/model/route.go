package model

import (
	"github.com/swmgr/swmgr/internal/apierr"
)

// routeKinds are FlexSwitch's static routes (IPv4Route, which TORC and the
// labs POST and DELETE) and the routing table (state/IPv4Routes: every
// route the switch has, connected ones included).
func routeKinds() []*Kind {
	return []*Kind{
		{
			Name: "IPv4Route", Class: Config,
			// `ip route 10.2.0.0 255.255.0.0` then `nexthop 10.1.1.2`, or on one line.
			CLI: &CLICommand{Words: []string{"ip", "route"}, Prompt: []string{"ip", "route"}},
			Doc: "A static IPv4 route: to DestinationNw/NetworkMask through its NextHop list (ECMP when several), or dropped with NullRoute. state/IPv4Routes lists the switch's routing table, not these objects.",
			Fields: []*Field{
				{Name: "DestinationNw", Type: String, Key: true, Format: FormatIPv4, Doc: "network address (host bits zero)"},
				{Name: "NetworkMask", Type: String, Key: true, Format: FormatIPv4, Doc: "dotted mask, like 255.255.255.0"},
				{Name: "Protocol", Type: String, Default: "STATIC", Enum: []string{"STATIC"}},
				{Name: "Cost", Type: Int, Range: rng(0, 255), Doc: "administrative distance; 0 is the static default (1)", CLI: "cost"},
				{Name: "NullRoute", Type: Bool, Doc: "drop the traffic; no next hop", CLI: "nullroute"},
				{Name: "NextHop", Type: RecordList, Doc: "where the traffic goes; at least one unless NullRoute", CLI: "nexthop", Sub: []*Field{
					{Name: "NextHopIp", Type: String, Required: true, Format: FormatIPv4Host, CLI: "nexthopip"},
					{Name: "NextHopIntRef", Type: String, Format: FormatIntfRef, Doc: "\"\": the interface whose subnet holds NextHopIp", CLI: "nexthopintref"},
					{Name: "Weight", Type: Int, Range: rng(0, 255), CLI: "weight"},
				}},
			},
			Check: checkRoute,
		},
		{
			Name: "IPv4RouteState", Class: State, Source: SourceService,
			CLI: &CLICommand{Words: []string{"ip", "route"},
				Brief: []string{"DestinationNw:Destination", "Protocol", "NextHopList:Next hops", "IsNetworkReachable:Reachable", "RouteUpdatedTime:Updated"}},
			Doc: "One route of the switch's routing table: connected subnets of its IPv4Intfs and its static routes (later also routes learned by BGP).",
			Fields: []*Field{
				{Name: "DestinationNw", Type: String, Doc: "prefix, like 10.1.1.0/30"},
				{Name: "NetworkMask", Type: String, Doc: "the prefix's mask, like 255.255.255.252 (swmgr's addition)"},
				{Name: "Protocol", Type: String, Doc: "CONNECTED or STATIC"},
				{Name: "IsNetworkReachable", Type: Bool, Doc: "the route is usable: its interface is up, or a next hop lies in an up connected subnet"},
				{Name: "RouteCreatedTime", Type: String},
				{Name: "RouteUpdatedTime", Type: String},
				{Name: "NextHopList", Type: RecordList, Sub: []*Field{
					{Name: "NextHopIp", Type: String},
					{Name: "NextHopIntRef", Type: String},
					{Name: "Weight", Type: Int},
				}},
				{Name: "PolicyList", Type: StringList},
			},
		},
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
