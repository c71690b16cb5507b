package linux

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestBGPv6OnLinux: the switch (the Linux backend with its FRR) and a peer
// FRR joined by a veth with global IPv6 addresses peer over a BGPv6Neighbor
// (in a BGPv6PeerGroup) and exchange IPv6 routes: the peer's loopback is
// in the switch's BGPv6RouteState and kernel, and the switch's loopback
// reaches the peer only as its BGPv6Aggregate (summary-only). The reset
// action resets the session (FRR's count of established sessions grows);
// bad input changes nothing in FRR.
func TestBGPv6OnLinux(t *testing.T) {
	l, dir := peerLab(t, "b6", 2)
	ctx := context.Background()

	peerNS := l.hosts[0]
	l.host(1, "ip", "-6", "addr", "add", "2001:db8:12::2/64", "dev", "eth0", "nodad")
	l.host(1, "ip", "-6", "addr", "add", "2001:db8:ff::2/128", "dev", "lo")
	peer := frrtest.StartRouter(t, filepath.Join(dir, "peer"), peerNS)
	if err := peer.Apply(ctx, frr.Config{
		Instances: []frr.Instance{{ASNum: "65002", RouterID: "192.0.2.2", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{{NeighborAddress: "2001:db8:12::1", PeerAS: "65001", KeepaliveTime: 3, HoldTime: 9, ConnectRetryTime: 1, IPv6: true}},
	}); err != nil {
		t.Fatal(err)
	}

	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
	})
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "2001:db8:12::1/64"}),
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "2001:db8:ff00::1/128", "LinkIp": false}),
		s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.255.0.1",
			"Redistribution": []model.Object{{"Sources": "CONNECTED"}}}),
		s.edit(backend.Create, "BGPv6PeerGroup", model.Object{"Name": "SPINES6", "PeerAS": "65002", "HoldTime": int64(9), "KeepaliveTime": int64(3), "ConnectRetryTime": int64(1)}),
		s.edit(backend.Create, "BGPv6Neighbor", model.Object{"NeighborAddress": "2001:DB8:12:0::2", "PeerGroup": "SPINES6"}),
		s.edit(backend.Create, "BGPv6Aggregate", model.Object{"IpPrefix": "2001:db8:ff00::/40", "SendSummaryOnly": true}),
		s.edit(backend.Create, "BGPv4Aggregate", model.Object{"IpPrefix": "10.255.0.0/16"}),
	)
	key := model.Object{"Vrf": "default", "NeighborAddress": "2001:db8:12::2", "IntfRef": ""}
	var st map[string]any
	if !eventually(60*time.Second, func() bool {
		st = s.stateOf("BGPv6Neighbor", key)
		return num(st["SessionState"]) == 6 && num(st["PrefixesAccepted"]) >= 1
	}) {
		t.Fatalf("the IPv6 session with 2001:db8:12::2 is not Established with prefixes: %v\n%s", st, frrtest.RunningBGP(t, s.be.FRR()))
	}
	if num(st["PrefixesAdvertised"]) < 1 || num(st["PrefixesReceived"]) != num(st["PrefixesAccepted"]) {
		t.Errorf("prefix counters %v/%v/%v: want some advertised, received as accepted", st["PrefixesReceived"], st["PrefixesAccepted"], st["PrefixesAdvertised"])
	}
	running := frrtest.RunningBGP(t, s.be.FRR())
	for _, want := range []string{"neighbor 2001:db8:12::2 peer-group SPINES6", "no neighbor SPINES6 activate", "aggregate-address 2001:db8:ff00::/40 summary-only", "aggregate-address 10.255.0.0/16"} {
		if !strings.Contains(running, want) {
			t.Errorf("FRR runs no %q:\n%s", want, running)
		}
	}

	// The peer's loopback: in BGP's IPv6 table, best, from AS 65002, and
	// in the kernel.
	list := s.be.DaemonDrivers()["BGPv6RouteState"].List
	var route model.Object
	if !eventually(30*time.Second, func() bool {
		routes, err := list(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(routes, func(o model.Object) bool { return o.Str("Network") == "2001:db8:ff::2" && o.Int("CIDRLen") == 128 })
		if i < 0 {
			return false
		}
		route = routes[i]
		return strings.Contains(run(t, "ip", "-n", l.sw, "-6", "route", "show", "2001:db8:ff::2"), "proto bgp")
	}) {
		t.Fatalf("2001:db8:ff::2/128 not learned: BGP's table %v, kernel %q", route, run(t, "ip", "-n", l.sw, "-6", "route", "show", "2001:db8:ff::2"))
	}
	paths := route.Records("Paths")
	if len(paths) != 1 || !paths[0].Bool("Best") || paths[0].Str("Path") != "65002" || paths[0].Str("Peer") != "2001:db8:12::2" {
		t.Errorf("the route's paths: %v", paths)
	}
	// The peer has the aggregate and not the route inside it.
	if !eventually(30*time.Second, func() bool {
		return strings.Contains(l.host(1, "ip", "-6", "route", "show", "2001:db8:ff00::/40"), "proto bgp")
	}) {
		t.Errorf("the peer has no aggregate: %q", l.host(1, "ip", "-6", "route", "show"))
	}
	if r := l.host(1, "ip", "-6", "route", "show", "2001:db8:ff00::1"); strings.Contains(r, "proto bgp") {
		t.Errorf("summary-only: the peer has the aggregated route too: %q", r)
	}

	// The reset: the session is torn down and comes up again.
	actions := s.be.DaemonActions()
	reg := model.Builtin()
	call := func(name string, fields model.Object) error {
		_, err := actions[name].Run(ctx, bind.Call{Kind: reg.Named(name), Fields: fields})
		return err
	}
	before := num(st["ConnectionsEstablished"])
	if err := call("ResetBGPv6NeighborByIPAddr", model.Object{"IPAddr": "2001:db8:12::2"}); err != nil {
		t.Fatal(err)
	}
	if !eventually(60*time.Second, func() bool {
		st = s.stateOf("BGPv6Neighbor", key)
		return num(st["SessionState"]) == 6 && num(st["ConnectionsEstablished"]) > before
	}) {
		t.Errorf("after the reset: %v sessions established (before %d), state %v", st["ConnectionsEstablished"], before, st["SessionState"])
	}
	for _, c := range []struct{ action, field, value string }{
		{"ResetBGPv6NeighborByIPAddr", "IPAddr", "2001:db8:12::9"},
		{"ResetBGPv4NeighborByIPAddr", "IPAddr", "10.0.0.9"},
		{"ResetBGPv6NeighborByInterface", "IntfRef", "fpPort2"},
	} {
		if err := call(c.action, model.Object{c.field: c.value}); statusOf(err) != http.StatusNotFound {
			t.Errorf("%s %s: %v, want a 404", c.action, c.value, err)
		}
	}

	// Bad input: refused, FRR unchanged.
	running = frrtest.RunningBGP(t, s.be.FRR())
	for _, bad := range []struct {
		name   string
		fields model.Object
		want   string
	}{
		{"missing group", model.Object{"NeighborAddress": "2001:db8:12::3", "PeerGroup": "NOPE"}, "NOPE"},
		{"v4 group", model.Object{"NeighborAddress": "2001:db8:12::3", "PeerGroup": "SPINES4"}, "SPINES4"},
		{"interface without IPv6", model.Object{"IntfRef": "fpPort2", "PeerAS": "external"}, "needs IPv6 on fpPort2"},
		{"zone", model.Object{"NeighborAddress": "fe80::2%fpPort1", "PeerAS": "65003"}, "zone"},
		{"mapped IPv4", model.Object{"NeighborAddress": "::ffff:10.0.0.2", "PeerAS": "65003"}, "IPv4-mapped"},
		{"dotted tail", model.Object{"NeighborAddress": "2001:db8::10.0.0.2", "PeerAS": "65003"}, "dotted"},
		{"two ::", model.Object{"NeighborAddress": "2001::db8::2", "PeerAS": "65003"}, "IPv6 address"},
		{"leading zeros beyond four digits", model.Object{"NeighborAddress": "2001:db8::00002", "PeerAS": "65003"}, "IPv6 address"},
		{"IPv4 address", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65003"}, "IPv4 address"},
		{"with a length", model.Object{"NeighborAddress": "2001:db8:12::3/64", "PeerAS": "65003"}, "IPv6 address"},
		{"link-local without interface", model.Object{"NeighborAddress": "fe80::2", "PeerAS": "65003"}, "link-local"},
	} {
		if bad.name == "v4 group" {
			s.mustCommit(s.edit(backend.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES4", "PeerAS": "65009"}))
		}
		err := s.commit(s.edit(backend.Create, "BGPv6Neighbor", bad.fields))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error naming %q", bad.name, err, bad.want)
		}
		if code := statusOf(err); code != http.StatusBadRequest && code != http.StatusConflict && code != http.StatusNotFound && code != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d", bad.name, code)
		}
	}
	for _, agg := range []string{"2001:db8:ff00::1/40", "10.255.0.1/16", "::/0", "2001:db8::/129"} {
		kind := "BGPv6Aggregate"
		if !strings.Contains(agg, ":") {
			kind = "BGPv4Aggregate"
		}
		if err := s.commit(s.edit(backend.Create, kind, model.Object{"IpPrefix": agg})); statusOf(err) != http.StatusBadRequest {
			t.Errorf("%s %s: %v, want a 400", kind, agg, err)
		}
	}
	// Deleting the IPv6 of an interface a session runs on is refused too.
	s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort2"}),
		s.edit(backend.Create, "BGPv6Neighbor", model.Object{"IntfRef": "fpPort2", "PeerAS": "external"}))
	if err := s.commit(s.edit(backend.Delete, "IPv6Intf", model.Object{"IntfRef": "fpPort2"})); err == nil || !strings.Contains(err.Error(), "needs IPv6 on fpPort2") {
		t.Errorf("deleting fpPort2's IPv6 under a session: %v", err)
	}
	s.mustCommit(s.edit(backend.Delete, "BGPv6Neighbor", model.Object{"Vrf": "default", "NeighborAddress": "", "IntfRef": "fpPort2"}),
		s.edit(backend.Delete, "BGPv4PeerGroup", model.Object{"Name": "SPINES4"}))
	if after := frrtest.RunningBGP(t, s.be.FRR()); after != running {
		t.Errorf("FRR changed by refused input:\nbefore:\n%s\nafter:\n%s", running, after)
	}
}

// statusOf is the HTTP status an error answers with; 0 for none.
func statusOf(err error) int {
	if err == nil {
		return 0
	}
	return apierr.From(err).Status
}
