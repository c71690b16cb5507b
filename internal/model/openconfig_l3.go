package model

import "fmt"

// The OpenConfig paths of BGP's neighbors and peer groups
// (openconfig-bgp), BFD's sessions (openconfig-bfd) and the routing
// tables' next hops (openconfig-aft), beside the global BGP rows and the
// IPv4 AFT entries of openconfig.go.
//
// A neighbor is keyed by neighbor-address: its address, or for a neighbor
// by interface (BGP unnumbered) the interface's name, as FRR and SONiC
// name it (OpenConfig's key is an ip-address; an interface name is what
// every implementation answers there instead). An IPv6 neighbor by a
// link-local address and its interface is fe80::1%fpPort1, the zone form
// of OpenConfig's ip-address type. The conversions (bgppeer4, bgppeer6)
// are the gNMI front end's: a write by an IPv4 address or an interface is
// a BGPv4Neighbor's, one by an IPv6 address a BGPv6Neighbor's. Peer groups
// are the default instance's (FlexSwitch's groups have no VRF; FRR defines
// a group in every VRF one of its neighbors is in).
//
// An AFT entry's next hops are a next-hop group whose id is derived from
// its set of next hops (address%interface, sorted: FNV-1a, 64 bits), and
// each next hop's index from the next hop itself: the same set is the
// same group in every read, across routes and both families, without a
// table of ids to keep.

const (
	ocNbrPath   = ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress,IntfRef:%s]"
	ocGroupPath = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/peer-groups/peer-group[peer-group-name=@Name]"
	ocAFTRoot   = "/network-instances/network-instance[name=default]/afts"
	ocAFT6Path  = ocAFTRoot + "/ipv6-unicast/ipv6-entry[prefix=@DestinationNw]"
	ocNHGPath   = ocAFTRoot + "/next-hop-groups/next-hop-group[id=@NextHopList:nhgroup]"
	ocNHGHop    = ocNHGPath + "/next-hops/next-hop[index=@NextHopList.NextHopIp,NextHopIntRef:nhindex]"
	ocNHPath    = ocAFTRoot + "/next-hops/next-hop[index=@NextHopList.NextHopIp,NextHopIntRef:nhindex]"
	ocBFDPeer   = "/bfd/interfaces/interface[id=@IfName:ornone]/peers/peer[local-discriminator=@LocalDiscriminator]"
	// nhFields are a next hop's fields, as the nhindex conversion takes them.
	nhFields = "NextHopList.NextHopIp,NextHopList.NextHopIntRef"
)

func routingOpenConfigLeaves() []OpenConfigLeaf {
	var out []OpenConfigLeaf
	for _, k := range []struct{ kind, key, afi string }{{"BGPv4Neighbor", "bgppeer4", "IPV4_UNICAST"}, {"BGPv6Neighbor", "bgppeer6", "IPV6_UNICAST"}} {
		out = append(out, bgpPeerLeaves(fmt.Sprintf(ocNbrPath, k.key), k.kind, "NeighborAddress,IntfRef", "neighbor-address", k.key)...)
		nbr := fmt.Sprintf(ocNbrPath, k.key)
		out = append(out,
			OpenConfigLeaf{nbr + "/config/peer-group", k.kind, "PeerGroup", false, "nonempty", nil},
			ocState(nbr+"/state/peer-group", k.kind, "PeerGroup", "nonempty"),
			ocState(nbr+"/state/session-state", k.kind, "SessionState", "bgpstate"),
			ocState(nbr+"/state/established-transitions", k.kind, "ConnectionsEstablished", "counter"),
			ocState(nbr+"/state/peer-type", k.kind, "PeerType", "peertype"),
			ocState(nbr+"/state/messages/received/UPDATE", k.kind, "Messages", "msgrxupd"),
			ocState(nbr+"/state/messages/received/NOTIFICATION", k.kind, "Messages", "msgrxnotif"),
			ocState(nbr+"/state/messages/sent/UPDATE", k.kind, "Messages", "msgtxupd"),
			ocState(nbr+"/state/messages/sent/NOTIFICATION", k.kind, "Messages", "msgtxnotif"))
		out = append(out, afiSafiLeaves(nbr+"/afi-safis/afi-safi[afi-safi-name="+k.afi+"]", k.kind, "")...)
	}
	// An unnumbered BGPv4Neighbor carries IPv6 unicast too.
	out = append(out, afiSafiLeaves(fmt.Sprintf(ocNbrPath, "bgppeer4")+"/afi-safis/afi-safi[afi-safi-name=@NeighborAddress:unnumbered6]", "BGPv4Neighbor", "IPv6")...)
	for _, kind := range []string{"BGPv4PeerGroup", "BGPv6PeerGroup"} {
		out = append(out, bgpPeerLeaves(ocGroupPath, kind, "Name", "peer-group-name", "")...)
	}
	for _, k := range []struct{ kind, entry string }{{"IPv4RouteState", ocAFTPath}, {"IPv6RouteState", ocAFT6Path}} {
		if k.kind == "IPv6RouteState" {
			out = append(out,
				ocState(k.entry+"/state/prefix", k.kind, "DestinationNw", ""),
				ocState(k.entry+"/state/origin-protocol", k.kind, "Protocol", "originprotocol"))
		}
		out = append(out,
			ocState(k.entry+"/state/next-hop-group", k.kind, "NextHopList", "nhgroup"),
			ocState(ocNHGPath+"/state/id", k.kind, "NextHopList", "nhgroup"),
			ocState(ocNHGHop+"/state/index", k.kind, nhFields, "nhindex"),
			ocState(ocNHGHop+"/state/weight", k.kind, "NextHopList.Weight", "nonzero"),
			ocState(ocNHPath+"/state/index", k.kind, nhFields, "nhindex"),
			ocState(ocNHPath+"/state/ip-address", k.kind, "NextHopList.NextHopIp", "nonempty"),
			ocState(ocNHPath+"/interface-ref/state/interface", k.kind, "NextHopList.NextHopIntRef", "nonempty"))
	}
	return append(out,
		ocState(ocBFDPeer+"/state/local-discriminator", "BfdSessionState", "LocalDiscriminator", ""),
		ocState(ocBFDPeer+"/state/remote-discriminator", "BfdSessionState", "RemoteDiscriminator", ""),
		ocState(ocBFDPeer+"/state/remote-address", "BfdSessionState", "IpAddr", ""),
		ocState(ocBFDPeer+"/state/local-address", "BfdSessionState", "LocalIpAddr", "nonempty"),
		ocState(ocBFDPeer+"/state/session-state", "BfdSessionState", "SessionState", "bfdstate"),
		ocState(ocBFDPeer+"/state/remote-session-state", "BfdSessionState", "RemoteSessionState", "bfdstate"),
		ocState(ocBFDPeer+"/state/remote-minimum-receive-interval", "BfdSessionState", "RemoteMinRxInterval", "mstous"),
		ocState(ocBFDPeer+"/state/failure-transitions", "BfdSessionState", "ToDownCount", "counter"),
		ocState(ocBFDPeer+"/state/async/up-transitions", "BfdSessionState", "ToUpCount", "counter"),
	)
}

// bgpPeerLeaves are the config and state leaves a neighbor and a peer
// group share; path is the entry's, keyField and keyConv its key leaf's.
func bgpPeerLeaves(path, kind, keyField, keyLeaf, keyConv string) []OpenConfigLeaf {
	both := func(sub, leaf, field, conv string) []OpenConfigLeaf {
		return []OpenConfigLeaf{
			{path + sub + "/config/" + leaf, kind, field, false, conv, nil},
			ocState(path+sub+"/state/"+leaf, kind, field, conv),
		}
	}
	out := both("", keyLeaf, keyField, keyConv)
	for _, l := range []struct{ sub, leaf, field, conv string }{
		{"", "peer-as", "PeerAS", "asn"},
		{"", "local-as", "LocalAS", "asn"},
		{"", "description", "Description", "nonempty"},
		{"", "enabled", "Disabled", "not"},
		{"/timers", "hold-time", "HoldTime", ""},
		{"/timers", "keepalive-interval", "KeepaliveTime", ""},
		{"/timers", "connect-retry", "ConnectRetryTime", ""},
		{"/transport", "local-address", "UpdateSource", "nonempty"},
		{"/ebgp-multihop", "enabled", "MultiHopEnable", ""},
		{"/ebgp-multihop", "multihop-ttl", "MultiHopTTL", ""},
		{"/route-reflector", "route-reflector-client", "RouteReflectorClient", ""},
		{"/enable-bfd", "enabled", "BfdEnable", ""},
		{"/apply-policy", "import-policy", "AdjRIBInFilter", "policylist"},
		{"/apply-policy", "export-policy", "AdjRIBOutFilter", "policylist"},
	} {
		if l.field == "Disabled" && (kind == "BGPv4PeerGroup" || kind == "BGPv6PeerGroup") {
			continue // FlexSwitch's groups have no Disabled
		}
		out = append(out, both(l.sub, l.leaf, l.field, l.conv)...)
	}
	if kind == "BGPv4Neighbor" || kind == "BGPv4PeerGroup" { // BGPv6's have no AuthPassword
		out = append(out, OpenConfigLeaf{path + "/config/auth-password", kind, "AuthPassword", false, "", nil})
	}
	return out
}

// afiSafiLeaves are a session's AFI-SAFI and its prefix counters; prefix
// names the counters' fields (IPv6PrefixesReceived: an unnumbered
// BGPv4Neighbor's IPv6 unicast ones; "": the neighbor's own family's).
func afiSafiLeaves(path, kind, prefix string) []OpenConfigLeaf {
	name := "afi" + map[string]string{"BGPv4Neighbor": "4", "BGPv6Neighbor": "6"}[kind]
	if prefix != "" {
		name = "afi6"
	}
	return []OpenConfigLeaf{
		ocState(path+"/state/afi-safi-name", kind, "NeighborAddress", name),
		ocState(path+"/state/prefixes/received", kind, prefix+"PrefixesAccepted", ""),
		ocState(path+"/state/prefixes/received-pre-policy", kind, prefix+"PrefixesReceived", ""),
		ocState(path+"/state/prefixes/installed", kind, prefix+"PrefixesInstalled", ""),
		ocState(path+"/state/prefixes/sent", kind, prefix+"PrefixesAdvertised", ""),
	}
}
