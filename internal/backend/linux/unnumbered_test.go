package linux

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestBGPUnnumberedOnLinux: the switch (the Linux backend with its FRR)
// and a peer FRR joined by a veth with no IPv4 address peer BGP
// unnumbered (the switch's neighbor is fpPort1 in the peer group SPINES,
// remote-as external; the peer's is its eth0) and exchange their
// loopbacks, IPv4 with IPv6 next hops (RFC 8950) and IPv6. The state says
// Established; ResetBGPv4NeighborByInterface resets the session; a peer
// group in use cannot be deleted.
func TestBGPUnnumberedOnLinux(t *testing.T) {
	ctx := context.Background()
	// The peer: IPv6 on its end of the link (for its link-local address
	// only), loopbacks of both families, announced.
	l, s, dir := startUnnumberedPair(t, "un", frr.Instance{ASNum: "65002", RouterID: "192.0.2.2", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}})
	peerNS := l.hosts[0]
	l.host(1, "ip", "addr", "add", "192.0.2.2/32", "dev", "lo")
	l.host(1, "ip", "-6", "addr", "add", "2001:db8:ff::2/128", "dev", "lo")
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1"}), // its link-local address only
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "2001:db8:ff::1/128", "LinkIp": false}),
		s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.255.0.1",
			"Redistribution": []model.Object{{"Sources": "CONNECTED"}}}),
		s.edit(backend.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "external", "HoldTime": int64(9), "KeepaliveTime": int64(3), "ConnectRetryTime": int64(1)}),
		s.edit(backend.Create, "BGPv4Neighbor", model.Object{"IntfRef": "fpPort1", "PeerGroup": "SPINES"}),
	)
	running := frrtest.RunningBGP(t, s.be.FRR())
	for _, want := range []string{"neighbor SPINES peer-group", "neighbor SPINES remote-as external", "neighbor fpPort1 interface peer-group SPINES", "neighbor fpPort1 activate"} {
		if !strings.Contains(running, want) {
			t.Errorf("FRR runs no %q:\n%s", want, running)
		}
	}
	key := model.Object{"Vrf": "default", "NeighborAddress": "", "IntfRef": "fpPort1"}
	var st map[string]any
	if !eventually(60*time.Second, func() bool {
		st = s.stateOf("BGPv4Neighbor", key)
		return num(st["SessionState"]) == 6
	}) {
		t.Fatalf("the unnumbered session on fpPort1 is not Established: %v\n%s", st, frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", "show bgp summary"))
	}
	// Each learns the other's loopbacks: IPv4 through an IPv6 next hop.
	learned := func(ns, family, prefix string) string {
		return frrtest.Run(t, "ip", "-n", ns, family, "route", "show", prefix)
	}
	for _, c := range []struct{ ns, family, prefix, via string }{
		{l.sw, "-4", "192.0.2.2", "via inet6 fe80::"},
		{l.sw, "-6", "2001:db8:ff::2", "via fe80::"},
		{peerNS, "-4", "10.255.0.1", "via inet6 fe80::"},
		{peerNS, "-6", "2001:db8:ff::1", "via fe80::"},
	} {
		var r string
		if !eventually(30*time.Second, func() bool {
			r = learned(c.ns, c.family, c.prefix)
			return strings.Contains(r, "proto bgp") && strings.Contains(r, c.via)
		}) {
			t.Errorf("%s has no BGP route to %s %s: %q", c.ns, c.prefix, c.via, r)
		}
	}

	// BGP's table names the path by the neighbor's interface: FRR's JSON
	// has only the peer's link-local address.
	for _, lister := range []string{"BGPv4RouteState", "BGPv6RouteState"} {
		routes, err := s.be.DaemonDrivers()[lister].List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(routes, func(o model.Object) bool {
			return o.Int("CIDRLen") == 32 && o.Str("Network") == "192.0.2.2" || o.Str("Network") == "2001:db8:ff::2"
		})
		if i < 0 {
			t.Errorf("%s has no route of the peer: %v", lister, routes)
			continue
		}
		p := routes[i].Records("Paths")
		if len(p) != 1 || p[0].Str("Peer") != "fpPort1" || p[0].Str("NextHopIntf") != "fpPort1" || !strings.HasPrefix(p[0].Str("NextHop"), "fe80::") {
			t.Errorf("%s: the peer's route's paths: %v, want from fpPort1 via its fe80:: address", lister, p)
		}
	}
	// ResetBGPv4NeighborByInterface resets the unnumbered session: FRR
	// counts one more established.
	before := num(s.stateOf("BGPv4Neighbor", key)["ConnectionsEstablished"])
	reset := "ResetBGPv4NeighborByInterface"
	if _, err := s.be.DaemonActions()[reset].Run(ctx, bind.Call{Kind: s.reg.Named(reset), Fields: model.Object{"IntfRef": "fpPort1"}}); err != nil {
		t.Fatal(err)
	}
	if !eventually(60*time.Second, func() bool {
		st = s.stateOf("BGPv4Neighbor", key)
		return num(st["SessionState"]) == 6 && num(st["ConnectionsEstablished"]) > before
	}) {
		t.Errorf("after %s: %v sessions established (before %d), state %v", reset, st["ConnectionsEstablished"], before, st["SessionState"])
	}

	// The group is in use: its delete is refused, naming the neighbor.
	err := s.commit(s.edit(backend.Delete, "BGPv4PeerGroup", model.Object{"Name": "SPINES"}))
	if err == nil || !strings.Contains(err.Error(), "BGPv4Neighbor") {
		t.Errorf("deleting the peer group in use: %v", err)
	}
	// Neighbor, then group, go.
	s.mustCommit(s.edit(backend.Delete, "BGPv4Neighbor", key), s.edit(backend.Delete, "BGPv4PeerGroup", model.Object{"Name": "SPINES"}))
	if running := frrtest.RunningBGP(t, s.be.FRR()); strings.Contains(running, "SPINES") || strings.Contains(running, "fpPort1") {
		t.Errorf("FRR still runs the group or the neighbor:\n%s", running)
	}
}

// peerLab is a lab of ports for a switch run by the engine (the lab's own
// kernel handle closed) with the daemons' directory dir, and host 1, the
// peer, with IPv6 on its end of the link and its loopback.
func peerLab(t *testing.T, area string, ports int) (*lab, string) {
	t.Helper()
	frrtest.Need(t)
	l := newLabNamed(t, area, ports, KernelOptions{})
	l.k.Close()
	l.k = nil
	l.host(1, "sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0", "net.ipv6.conf.lo.disable_ipv6=0")
	return l, daemonDir(t, l.prefix)
}
