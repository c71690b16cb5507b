package model

import (
	"net/netip"
	"regexp"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// The BGP kinds' fields follow FlexSwitch's object definitions
// (bgpObjects.go of its models): the same names, JSON types, defaults and
// meaning, so that the SDK's createBGPv4Neighbor, which sends every field
// with its default, is accepted as it is. FlexSwitch's unsigned widths
// (uint8, uint32) become ranges.

// redistribution is FlexSwitch's []SourcePolicyList, a field of kind.
func redistribution(kind string) *Field {
	return &Field{
		Name: "Redistribution", Type: RecordList, CLI: "redistribute",
		Doc: "routes redistributed into BGP; each source at most once",
		Sub: []*Field{
			{Name: "Sources", Type: String, Required: true, Doc: "CONNECTED, STATIC, or both comma-separated"},
			{Name: "Policy", Type: String, Format: FormatRoutingName, Ref: "PolicyDefinition", Doc: "the PolicyDefinition the routes of these sources pass; \"\": every route"},
		},
		CheckRecord: func(o Object) error {
			srcs, err := canonicalSources(kind, o.Str("Sources"))
			if err != nil {
				return err
			}
			o["Sources"] = srcs
			return nil
		},
	}
}

// canonicalSources checks a comma-separated list of redistribution sources
// of kind and returns it upper-cased, without spaces.
func canonicalSources(kind, s string) (string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		p := strings.ToUpper(strings.TrimSpace(part))
		switch {
		case p == "OSPF":
			return "", apierr.BadRequest(apierr.CodeInvalidValue, kind, "Redistribution", "Redistribution.Sources: OSPF is not supported yet (swmgr runs no OSPF); use CONNECTED or STATIC")
		case p != "CONNECTED" && p != "STATIC":
			return "", apierr.BadRequest(apierr.CodeInvalidValue, kind, "Redistribution", "Redistribution.Sources: %q is not a source; use CONNECTED, STATIC or both, comma-separated", part)
		}
		for _, o := range out {
			if o == p {
				return "", apierr.BadRequest(apierr.CodeInvalidValue, kind, "Redistribution", "Redistribution.Sources: %s is listed twice", p)
			}
		}
		out = append(out, p)
	}
	return strings.Join(out, ","), nil
}

// checkRedistribution is kind's check: a source is redistributed by one
// entry only (BGP takes one policy per source).
func checkRedistribution(kind string) func(Object) error {
	return func(o Object) error {
		seen := map[string]bool{}
		for _, r := range o.Records("Redistribution") {
			for _, src := range strings.Split(r.Str("Sources"), ",") {
				if seen[src] {
					return apierr.BadRequest(apierr.CodeInvalidValue, kind, "Redistribution", "Redistribution: source %s is redistributed twice; give each source once", src)
				}
				seen[src] = true
			}
		}
		return nil
	}
}

func bgpNeighborFields(vrfRef func(*Field) *Field) []*Field {
	return []*Field{
		vrfRef(&Field{Name: "Vrf", Type: String, Key: true, Default: "default", Doc: "VRF of the session (swmgr's addition to FlexSwitch's keys)"}),
		{Name: "NeighborAddress", Type: String, Key: true, Default: "", Format: FormatIPv4Host, Doc: "\"\" for a neighbor by interface (IntfRef)"},
		{Name: "IntfRef", Type: String, Key: true, Default: "", Format: FormatIntfRef, Ref: "Port", Doc: "FlexSwitch's second key: with NeighborAddress \"\", an unnumbered session on this interface (BGP over its IPv6 link-local address, IPv4 routes with IPv6 next hops, RFC 8950); \"\" (the default) for a neighbor by address"},
		{Name: "PeerAS", Type: String, Format: FormatPeerAS, CLI: "peer_as", Doc: "\"\" takes the PeerGroup's"},
		{Name: "LocalAS", Type: String, Format: FormatASN, Doc: "\"\" uses BGPGlobal ASNum", CLI: "local_as", InEffect: true},
		{Name: "Description", Type: String, MaxLen: 64, CLI: "description"},
		{Name: "Disabled", Type: Bool, CLI: "shutdown"},
		{Name: "PeerGroup", Type: String, Format: FormatRoutingName, Ref: "BGPv4PeerGroup", Doc: "the BGPv4PeerGroup whose settings the neighbor takes where it sets none"},
		{Name: "UpdateSource", Type: String, Text: TextName, MaxLen: 15, Doc: "source of the session: an IPv4 address or an interface name (Loopback1); \"\" lets the switch choose"},
		{Name: "AuthPassword", Type: String, Secret: Sealed, Text: TextSecret, MaxLen: 80, Doc: "TCP MD5 password; write-only", CLI: "password"},
		{Name: "NextHopSelf", Type: Bool, CLI: "next_hop_self"},
		{Name: "RouteReflectorClusterId", Type: Int, Range: rng(0, 4294967295), Doc: "0: the router id; one per BGP instance"},
		{Name: "RouteReflectorClient", Type: Bool, CLI: "route_reflector_client"},
		{Name: "MultiHopEnable", Type: Bool},
		{Name: "MultiHopTTL", Type: Int, Range: rng(0, 255), Doc: "0 with MultiHopEnable: 255"},
		{Name: "ConnectRetryTime", Type: Int, Range: rng(0, 65535), Doc: "seconds; 0 uses the default (120)", CLI: "connect_retry_time", InEffect: true},
		{Name: "HoldTime", Type: Int, Range: rng(0, 65535), Doc: "seconds; 0 uses the default (180)", CLI: "timers_hold_time", InEffect: true},
		{Name: "KeepaliveTime", Type: Int, Range: rng(0, 21845), Doc: "seconds; 0 uses the default (60)", CLI: "timers_keep_alive", InEffect: true},
		{Name: "AddPathsRx", Type: Bool},
		{Name: "AddPathsMaxTx", Type: Int, Range: rng(0, 255)},
		{Name: "BfdEnable", Type: Bool},
		{Name: "BfdSessionParam", Type: String, Format: FormatRoutingName, Default: DefaultBfdParam, Ref: "BfdSessionParam", RefImplied: DefaultBfdParam, Doc: "the BfdSessionParam of the neighbor's BFD session (with BfdEnable)"},
		{Name: "MaxPrefixes", Type: Int, Range: rng(0, 4294967295), Doc: "0: no limit"},
		{Name: "MaxPrefixesThresholdPct", Type: Int, Default: int64(80), Range: rng(0, 100)},
		{Name: "MaxPrefixesDisconnect", Type: Bool},
		{Name: "MaxPrefixesRestartTimer", Type: Int, Range: rng(0, 255), Doc: "seconds"},
		{Name: "AdjRIBInFilter", Type: String, Format: FormatRoutingName, Ref: "PolicyDefinition", Doc: "the PolicyDefinition the routes received pass; \"\": every route"},
		{Name: "AdjRIBOutFilter", Type: String, Format: FormatRoutingName, Ref: "PolicyDefinition", Doc: "the PolicyDefinition the routes sent pass; \"\": every route"},
	}
}

// sessionStates name the RFC 4271 states of a BGP session, as FlexSwitch's
// CLI printed them (0 is its "Resolving Peer": no state yet).
var sessionStates = []string{"Resolving", "Idle", "Connect", "Active", "OpenSent", "OpenConfirm", "Established"}

func bgpNeighborStateFields() []*Field {
	counters := []*Field{{Name: "Update", Type: Int}, {Name: "Notification", Type: Int}}
	return append([]*Field{
		{Name: "PeerType", Type: Int, Doc: "0 internal, 1 external", Names: []string{"internal", "external"}},
		{Name: "SessionState", Type: Int, Doc: "RFC 4271 FSM state: 1 Idle .. 6 Established", Names: sessionStates, Metric: &Metric{Name: "state"}},
		{Name: "SessionStateDuration", Type: String, Doc: "how long the session has been in SessionState, as a Go duration (1h2m3s)", Metric: &Metric{Name: "state_duration_seconds"}},
		{Name: "TotalPrefixes", Type: Int, Doc: "prefixes received", Metric: &Metric{Name: "prefixes_received"}},
		{Name: "BfdNeighborState", Type: String, Doc: "\"\" without BFD"},
		{Name: "Messages", Type: Record, Doc: "BGP messages exchanged", Metric: &Metric{Name: "messages", Counter: true}, Sub: []*Field{
			{Name: "Sent", Type: Record, Sub: counters},
			{Name: "Received", Type: Record, Sub: counters},
		}},
		{Name: "Queues", Type: Record, Doc: "messages waiting", Sub: []*Field{{Name: "Input", Type: Int}, {Name: "Output", Type: Int}}},
		{Name: "ConnectionsEstablished", Type: Int, Doc: "sessions established so far: a reset shows as an increase (swmgr's addition)", Metric: &Metric{Name: "established_total", Counter: true}},
	}, prefixCounterFields()...)
}

var ifNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,14}$`)

// checkBGPNeighbor checks a BGPv4Neighbor: by address or by interface,
// with a peer AS of its own or its group's, and the checks of a peer.
func checkBGPNeighbor(o Object) error {
	const kind = "BGPv4Neighbor"
	if o.Str("NeighborAddress") == "" && o.Str("IntfRef") == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "NeighborAddress", "NeighborAddress: give the neighbor's address, or IntfRef for an unnumbered session on that interface")
	}
	if o.Str("PeerAS") == "" && o.Str("PeerGroup") == "" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "PeerAS", "PeerAS: give the peer's AS (or external, internal), or a PeerGroup that gives it")
	}
	return checkBGPPeer(kind, o)
}

// checkBGPPeer is what a neighbor and a peer group check alike.
func checkBGPPeer(kind string, o Object) error {
	hold, keep := o.Int("HoldTime"), o.Int("KeepaliveTime")
	if hold != 0 && hold < 3 {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "HoldTime", "HoldTime: %d is not allowed; use 0 or 3..65535 (RFC 4271)", hold)
	}
	if hold != 0 && keep != 0 && keep > hold/3 {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "KeepaliveTime", "KeepaliveTime: %d is more than a third of HoldTime %d", keep, hold)
	}
	if o.Int("MultiHopTTL") != 0 && !o.Bool("MultiHopEnable") {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "MultiHopTTL", "MultiHopTTL: %d needs MultiHopEnable true", o.Int("MultiHopTTL"))
	}
	if src := o.Str("UpdateSource"); src != "" {
		family, v6 := "IPv4", strings.HasPrefix(kind, "BGPv6")
		if v6 {
			family = "IPv6"
		}
		if a, err := netip.ParseAddr(src); err == nil {
			if a.Is4() == v6 || !isUnicastHost(a) || (v6 && parseIPv6Why(src) != "") {
				return apierr.BadRequest(apierr.CodeInvalidValue, kind, "UpdateSource", "UpdateSource: %q is not a unicast %s address", src, family)
			}
			o["UpdateSource"] = a.String()
		} else if !ifNameRE.MatchString(src) {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "UpdateSource", "UpdateSource: %q is neither an %s address nor an interface name like Loopback1 or fpPort1", src, family)
		}
	}
	if strings.ContainsAny(o.Str("AuthPassword"), " \t\r\n!#") {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "AuthPassword", "AuthPassword: must not contain spaces, '!' or '#' (the routing daemon's configuration cannot carry them)")
	}
	return nil
}

// The BGP defaults in effect when a neighbor leaves its timers at 0
// (RFC 4271's suggested values, which FRR uses too), in seconds.
const (
	DefaultHoldTime         = 180
	DefaultKeepaliveTime    = 60
	DefaultConnectRetryTime = 120
)

// BGPNeighborInEffect returns the values a neighbor's session uses where
// its configuration says "the default" (LocalAS "", timers 0), as its
// state shows them: the local AS is BGPGlobal's ASNum (globalAS); a hold
// time or keepalive given alone brings the other at RFC 4271's 1:3 (as the
// routing daemon's configuration is written); neither given is 180 and
// 60; a connect retry of 0 is 120. A session that is up may have
// negotiated a lower hold time with its peer: a backend that runs BGP
// shows that one instead.
func BGPNeighborInEffect(o Object, globalAS string) Object {
	local := o.Str("LocalAS")
	if local == "" {
		local = globalAS
	}
	hold, keep := o.Int("HoldTime"), o.Int("KeepaliveTime")
	switch {
	case hold == 0 && keep == 0:
		hold, keep = DefaultHoldTime, DefaultKeepaliveTime
	case hold == 0:
		hold = 3 * keep
	case keep == 0:
		keep = hold / 3
	}
	retry := o.Int("ConnectRetryTime")
	if retry == 0 {
		retry = DefaultConnectRetryTime
	}
	return Object{"LocalAS": local, "HoldTime": hold, "KeepaliveTime": keep, "ConnectRetryTime": retry}
}

// BGPGlobalInEffect returns BGPGlobal's values in effect where its
// configuration says "the default": EBGPMaxPaths and IBGPMaxPaths of 0
// (FlexSwitch's default) are one path.
func BGPGlobalInEffect(o Object) Object {
	st := Object{}
	for _, f := range []string{"EBGPMaxPaths", "IBGPMaxPaths"} {
		if n := o.Int(f); n == 0 {
			st[f] = int64(1)
		} else {
			st[f] = n
		}
	}
	return st
}

// peerGroupFields are FlexSwitch's BGPv4PeerGroup: a neighbor's settings
// that a group carries (bgpNeighborFields, the same declarations), keyed
// by Name; BfdEnable and BfdSessionParam are swmgr's additions (a fabric
// sets BFD once for its group).
var peerGroupFields = setOf("PeerAS", "LocalAS", "UpdateSource", "AuthPassword", "Description", "AdjRIBInFilter", "AdjRIBOutFilter",
	"RouteReflectorClient", "MultiHopTTL", "KeepaliveTime", "AddPathsRx", "MaxPrefixesRestartTimer", "MultiHopEnable",
	"RouteReflectorClusterId", "MaxPrefixesDisconnect", "AddPathsMaxTx", "MaxPrefixes", "MaxPrefixesThresholdPct", "NextHopSelf",
	"HoldTime", "ConnectRetryTime", "BfdEnable", "BfdSessionParam")

// bgpPeerGroup is the BGPv4PeerGroup kind. A group is defined in the BGP
// instance of every VRF one of its neighbors is in (FlexSwitch's has no
// VRF).
func bgpPeerGroup(vrfRef func(*Field) *Field) *Kind {
	fields := []*Field{{Name: "Name", Type: String, Key: true, Format: FormatRoutingName, Doc: "the group's name"}}
	for _, f := range bgpNeighborFields(vrfRef) {
		if peerGroupFields[f.Name] {
			fields = append(fields, f)
		}
	}
	return &Kind{
		Name: "BGPv4PeerGroup", Class: Config,
		Doc:    "A BGP peer group: settings its neighbors (BGPv4Neighbor PeerGroup) take where they set none. A group in use cannot be deleted.",
		CLI:    &CLICommand{Words: []string{"peer-group"}, Prompt: []string{"peer-group"}, Parents: []string{"BGPGlobal"}, Show: []string{"ip", "bgp", "peer-group"}},
		Fields: fields,
		Check:  func(o Object) error { return checkBGPPeer("BGPv4PeerGroup", o) },
	}
}
