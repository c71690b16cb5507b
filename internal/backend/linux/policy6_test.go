package linux

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestIPv6PolicyOnLinux: BGP unnumbered between the switch (the Linux
// backend and its FRR) and a peer FRR, both exchanging IPv4 and IPv6
// loopbacks. The switch's peer group filters in both families: its
// out-filter, an IPv6 prefix set, removes one of the switch's IPv6
// loopbacks from the peer's BGP and kernel tables (the other stays); its
// in-filter drops one IPv4 and one IPv6 prefix of the peer's, which leave
// the switch's tables, and the neighbor's state counts them as received
// (before policy) but not accepted.
func TestIPv6PolicyOnLinux(t *testing.T) {
	l, s, dir := startUnnumberedPair(t, "p6", frr.Instance{ASNum: "65002", RouterID: "192.0.2.2", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}})
	peerNS := l.hosts[0]
	for _, a := range []string{"192.0.2.2/32", "192.0.2.3/32"} {
		l.host(1, "ip", "addr", "add", a, "dev", "lo")
	}
	for _, a := range []string{"2001:db8:ff::2/128", "2001:db8:ff::3/128"} {
		l.host(1, "ip", "-6", "addr", "add", a, "dev", "lo")
	}
	key := establishSpines(t, s,
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "2001:db8:ff::1/128", "LinkIp": false}),
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback9"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "Loopback9", "IpAddr": "2001:db8:ff::9/128", "LinkIp": false}),
	)
	// has says whether ns's BGP table and kernel table hold prefix.
	has := func(ns, vty, family, prefix string) (bgp, kernel bool) {
		afi := map[string]string{"-4": "ipv4", "-6": "ipv6"}[family]
		table := frrtest.Run(t, "ip", "netns", "exec", ns, "vtysh", "--vty_socket", vty, "-c", "show bgp "+afi+" unicast")
		route := frrtest.Run(t, "ip", "-n", ns, family, "route", "show", prefix)
		return strings.Contains(table, prefix), strings.Contains(route, "proto bgp")
	}
	type want struct {
		ns, vty, family, prefix string
		there                   bool
	}
	peer, sw := filepath.Join(dir, "peer"), filepath.Join(dir, "frr")
	expect := func(what string, wants []want) {
		t.Helper()
		for _, w := range wants {
			var bgp, kernel bool
			if !eventually(30*time.Second, func() bool {
				bgp, kernel = has(w.ns, w.vty, w.family, w.prefix)
				return bgp == w.there && kernel == w.there
			}) {
				t.Errorf("%s: %s has %s in its BGP table: %v, in its kernel table: %v; want %v", what, w.ns, w.prefix, bgp, kernel, w.there)
			}
		}
	}
	expect("no policy", []want{
		{peerNS, peer, "-6", "2001:db8:ff::1", true}, {peerNS, peer, "-6", "2001:db8:ff::9", true},
		{l.sw, sw, "-4", "192.0.2.3", true}, {l.sw, sw, "-6", "2001:db8:ff::3", true},
	})
	st := s.stateOf("BGPv4Neighbor", key)
	if num(st["PrefixesReceived"]) != num(st["PrefixesAccepted"]) || num(st["PrefixesAccepted"]) < 2 {
		t.Errorf("without a filter: received %v, accepted %v; want them equal, 2 or more", st["PrefixesReceived"], st["PrefixesAccepted"])
	}

	s.mustCommit(
		s.edit(backend.Create, "PolicyPrefixSet", model.Object{"Name": "HIDDEN6", "PrefixList": []model.Object{{"Prefix": "2001:db8:ff::9/128"}}}),
		s.edit(backend.Create, "PolicyPrefixSet", model.Object{"Name": "DROP4", "PrefixList": []model.Object{{"Prefix": "192.0.2.3/32"}}}),
		s.edit(backend.Create, "PolicyPrefixSet", model.Object{"Name": "DROP6", "PrefixList": []model.Object{{"Prefix": "2001:db8:ff::3/128"}}}),
		s.edit(backend.Create, "PolicyCondition", model.Object{"Name": "IS-HIDDEN6", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "HIDDEN6"}),
		s.edit(backend.Create, "PolicyCondition", model.Object{"Name": "IS-DROP4", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "DROP4"}),
		s.edit(backend.Create, "PolicyCondition", model.Object{"Name": "IS-DROP6", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "DROP6"}),
		s.edit(backend.Create, "PolicyStmt", model.Object{"Name": "HIDE", "Conditions": []string{"IS-HIDDEN6"}, "Action": "deny"}),
		s.edit(backend.Create, "PolicyStmt", model.Object{"Name": "DROP", "Conditions": []string{"IS-DROP4", "IS-DROP6"}, "MatchConditions": "any", "Action": "deny"}),
		s.edit(backend.Create, "PolicyStmt", model.Object{"Name": "REST", "Conditions": []string{}, "Action": "permit"}),
		s.edit(backend.Create, "PolicyDefinition", model.Object{"Name": "TO-SPINES", "Priority": int64(1), "MatchType": "any",
			"StatementList": []model.Object{{"Priority": int64(10), "Statement": "HIDE"}, {"Priority": int64(20), "Statement": "REST"}}}),
		s.edit(backend.Create, "PolicyDefinition", model.Object{"Name": "FROM-SPINES", "Priority": int64(2), "MatchType": "any",
			"StatementList": []model.Object{{"Priority": int64(10), "Statement": "DROP"}, {"Priority": int64(20), "Statement": "REST"}}}),
		s.edit(backend.Update, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "AdjRIBOutFilter": "TO-SPINES", "AdjRIBInFilter": "FROM-SPINES"}),
	)
	expect("the filters", []want{
		{peerNS, peer, "-6", "2001:db8:ff::1", true}, {peerNS, peer, "-6", "2001:db8:ff::9", false},
		{peerNS, peer, "-4", "10.255.0.1", true},
		{l.sw, sw, "-4", "192.0.2.3", false}, {l.sw, sw, "-6", "2001:db8:ff::3", false},
		{l.sw, sw, "-4", "192.0.2.2", true}, {l.sw, sw, "-6", "2001:db8:ff::2", true},
	})
	// The IPv4 in-filter dropped one of the peer's prefixes: received
	// before policy, not accepted. (Received also counts the switch's own
	// loopback, which the peer sends back and BGP refuses for the
	// switch's AS in its path.)
	if !eventually(20*time.Second, func() bool {
		st = s.stateOf("BGPv4Neighbor", key)
		return num(st["PrefixesReceived"]) > num(st["PrefixesAccepted"]) && num(st["PrefixesAccepted"]) >= 1
	}) {
		t.Errorf("with the in-filter: received %v, accepted %v; want more received than accepted", st["PrefixesReceived"], st["PrefixesAccepted"])
	}
	if num(st["PrefixesInstalled"]) < 1 || num(st["PrefixesInstalled"]) > num(st["PrefixesAccepted"]) {
		t.Errorf("installed %v of %v accepted", st["PrefixesInstalled"], st["PrefixesAccepted"])
	}
	s.be.bgp.mu.Lock()
	cfg := bgpConfig(s.be.bgp.applied)
	s.be.bgp.mu.Unlock()
	if plan, err := s.be.FRR().Plan(t.Context(), cfg); err != nil || len(plan) != 0 {
		t.Errorf("FRR does not run what swmgr rendered; it would still send %q (%v)", plan, err)
	}
}

// establishSpines commits the switch's side of an unnumbered session on
// fpPort1 (IPv6 on the port for its link-local address, the loopbacks
// given, BGPGlobal AS 65001 redistributing them, the neighbor in peer
// group SPINES with fast timers) and waits for it to be Established; it
// returns the neighbor's key.
func establishSpines(t *testing.T, s *sw, loopbacks ...engine.Edit) model.Object {
	t.Helper()
	s.mustCommit(append(append([]engine.Edit{
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1"}),
	}, loopbacks...),
		s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.255.0.1",
			"Redistribution": []model.Object{{"Sources": "CONNECTED"}}}),
		s.edit(backend.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "external", "HoldTime": int64(9), "KeepaliveTime": int64(3), "ConnectRetryTime": int64(1)}),
		s.edit(backend.Create, "BGPv4Neighbor", model.Object{"IntfRef": "fpPort1", "PeerGroup": "SPINES"}),
	)...)
	key := model.Object{"Vrf": "default", "NeighborAddress": "", "IntfRef": "fpPort1"}
	if !eventually(60*time.Second, func() bool { return num(s.stateOf("BGPv4Neighbor", key)["SessionState"]) == 6 }) {
		t.Fatalf("the session is not Established: %v", s.stateOf("BGPv4Neighbor", key))
	}
	return key
}
