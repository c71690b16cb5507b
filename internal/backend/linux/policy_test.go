package linux

import (
	"bytes"
	"context"
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

// TestRoutingPolicyOnLinux: the switch (the Linux backend and its FRR)
// and a peer FRR, BGP unnumbered over a veth. A policy on the switch's
// peer group's AdjRIBOutFilter denies one of its two loopbacks: the peer's
// BGP table and kernel table lose that route and keep the other. A change
// of the one prefix-list entry moves the filter to the other loopback
// without resetting the session, and leaves nothing for FRR to change.
// Bad input (a policy deleted while used, a missing prefix set, a name FRR
// would read as a command) is refused and changes neither the store nor
// FRR's running configuration.
func TestRoutingPolicyOnLinux(t *testing.T) {
	l, s, dir := startUnnumberedPair(t, "pol", frr.Instance{ASNum: "65002", RouterID: "192.0.2.2"})
	ctx := context.Background()
	peerNS := l.hosts[0]
	key := establishSpines(t, s,
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback9"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback9", "IpAddr": "10.255.0.9/32"}),
	)
	peerVty := filepath.Join(dir, "peer")
	// has says whether the peer's BGP table and kernel table hold prefix.
	has := func(prefix string) (bgp, kernel bool) {
		table := frrtest.Run(t, "ip", "netns", "exec", peerNS, "vtysh", "--vty_socket", peerVty, "-c", "show bgp ipv4 unicast")
		route := frrtest.Run(t, "ip", "-n", peerNS, "-4", "route", "show", prefix)
		return strings.Contains(table, prefix), strings.Contains(route, "proto bgp")
	}
	// expect waits until the peer has want of each prefix.
	expect := func(what string, want map[string]bool) {
		t.Helper()
		for prefix, w := range want {
			var bgp, kernel bool
			if !eventually(30*time.Second, func() bool { bgp, kernel = has(prefix); return bgp == w && kernel == w }) {
				t.Fatalf("%s: the peer has %s in its BGP table: %v, in its kernel table: %v; want %v", what, prefix, bgp, kernel, w)
			}
		}
	}
	expect("no policy", map[string]bool{"10.255.0.1": true, "10.255.0.9": true})
	connections := num(s.stateOf("BGPv4Neighbor", key)["ConnectionsEstablished"])

	// The policy: deny the prefixes of the set, permit the rest.
	s.mustCommit(
		s.edit(backend.Create, "PolicyPrefixSet", model.Object{"Name": "HIDDEN", "PrefixList": []model.Object{{"Prefix": "10.255.0.9/32"}}}),
		s.edit(backend.Create, "PolicyCondition", model.Object{"Name": "IS-HIDDEN", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "HIDDEN"}),
		s.edit(backend.Create, "PolicyStmt", model.Object{"Name": "HIDE", "Conditions": []string{"IS-HIDDEN"}, "Action": "deny"}),
		s.edit(backend.Create, "PolicyStmt", model.Object{"Name": "REST", "Conditions": []string{}, "Action": "permit"}),
		s.edit(backend.Create, "PolicyDefinition", model.Object{"Name": "TO-SPINES", "Priority": int64(1), "MatchType": "any",
			"StatementList": []model.Object{{"Priority": int64(10), "Statement": "HIDE"}, {"Priority": int64(20), "Statement": "REST"}}}),
		s.edit(backend.Update, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "AdjRIBOutFilter": "TO-SPINES"}),
	)
	expect("the filter", map[string]bool{"10.255.0.1": true, "10.255.0.9": false})

	// One entry changed: the other loopback is hidden instead, the
	// session is the same one, and FRR runs exactly what swmgr renders.
	s.mustCommit(s.edit(backend.Update, "PolicyPrefixSet", model.Object{"Name": "HIDDEN", "PrefixList": []model.Object{{"Prefix": "10.255.0.1/32"}}}))
	expect("the entry changed", map[string]bool{"10.255.0.1": false, "10.255.0.9": true})
	if now := num(s.stateOf("BGPv4Neighbor", key)["ConnectionsEstablished"]); now != connections {
		t.Errorf("the session was reset by a policy change: %d connections, was %d", now, connections)
	}
	s.be.bgp.mu.Lock()
	cfg := bgpConfig(s.be.bgp.applied)
	s.be.bgp.mu.Unlock()
	if plan, err := s.be.FRR().Plan(ctx, cfg); err != nil || len(plan) != 0 {
		t.Errorf("FRR does not run what swmgr rendered; it would still send %q (%v)", plan, err)
	}

	// Bad input: refused, nothing changed.
	before, dump := frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", "show running-config"), s.dump()
	for _, c := range []struct {
		name string
		edit engine.Edit
		says string
	}{
		{"a policy deleted while used", s.edit(backend.Delete, "PolicyDefinition", model.Object{"Name": "TO-SPINES"}), "still used by BGPv4PeerGroup"},
		{"a missing prefix set", s.edit(backend.Create, "PolicyCondition", model.Object{"Name": "C2", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "NOPE"}), `PolicyPrefixSet "NOPE" does not exist`},
		{"a name FRR would read as a command", s.edit(backend.Create, "PolicyDefinition", model.Object{"Name": "X permit 10", "Priority": int64(2),
			"StatementList": []model.Object{{"Priority": int64(1), "Statement": "REST"}}}), "Name"},
		{"a filter naming a command", s.edit(backend.Update, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "AdjRIBInFilter": "in\nrouter bgp 9"}), "AdjRIBInFilter"},
	} {
		err := s.commit(c.edit)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
	}
	if after := frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", "show running-config"); after != before {
		t.Errorf("refused commits changed FRR's running configuration:\n%s", diffLines(before, after))
	}
	if !bytes.Equal(s.dump(), dump) {
		t.Error("refused commits changed the store")
	}

	// The filter dropped and the policy deleted: the route is back.
	s.mustCommit(s.edit(backend.Update, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "AdjRIBOutFilter": ""}),
		s.edit(backend.Delete, "PolicyDefinition", model.Object{"Name": "TO-SPINES"}))
	expect("no filter", map[string]bool{"10.255.0.1": true, "10.255.0.9": true})
	if running := frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", "show running-config"); strings.Contains(running, "route-map TO-SPINES") {
		t.Errorf("FRR still runs the deleted policy:\n%s", running)
	}
}

// dump is the whole store, to compare before and after.
func (s *sw) dump() []byte {
	s.t.Helper()
	var b bytes.Buffer
	if err := s.st.Dump(&b); err != nil {
		s.t.Fatal(err)
	}
	return b.Bytes()
}

// startUnnumberedPair makes a lab of one port (named after area) and
// starts its peer FRR (host 1, IPv6 on its eth0 for its link-local
// address; its instance peerBGP, its neighbor eth0 unnumbered, external,
// with fast timers) and the switch, whose BGP runs in an FRR of its own;
// FRR's files are in dir.
func startUnnumberedPair(t *testing.T, area string, peerBGP frr.Instance) (l *lab, s *sw, dir string) {
	t.Helper()
	l, dir = peerLab(t, area, 1)
	peer := frrtest.StartRouter(t, filepath.Join(dir, "peer"), l.hosts[0])
	if err := peer.Apply(context.Background(), frr.Config{
		Instances: []frr.Instance{peerBGP},
		Neighbors: []frr.Neighbor{{IntfRef: "eth0", PeerAS: "external", KeepaliveTime: 3, HoldTime: 9, ConnectRetryTime: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	s = startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
	})
	return l, s, dir
}
