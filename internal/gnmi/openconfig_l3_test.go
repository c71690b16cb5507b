package gnmi

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/swmgr/swmgr/internal/model"
)

const ocBGP = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp"

// BGP's neighbors of both families are openconfig-bgp's: keyed by
// address, by interface for a neighbor by interface (unnumbered), their
// settings readable and writable, their state (session state, the
// AFI-SAFIs each carries with prefix counters) readable; the peer groups
// of both families likewise. A write by an IPv6 address is the
// BGPv6Neighbor's; an address of neither form is refused, nothing changed.
func TestOpenConfigBGPNeighbors(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(
		fx.f.Edit(model.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001"}),
		fx.f.Edit(model.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1"}),
		fx.f.Edit(model.Create, "PolicyStmt", model.Object{"Name": "ALL", "Conditions": []string{}, "Action": "permit"}),
		fx.f.Edit(model.Create, "PolicyDefinition", model.Object{"Name": "FROM-PEER", "Priority": int64(1), "StatementList": []model.Object{{"Priority": int64(1), "Statement": "ALL"}}}),
		fx.f.Edit(model.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "65100", "Description": "spines"}),
		fx.f.Edit(model.Create, "BGPv6PeerGroup", model.Object{"Name": "LEAVES6", "PeerAS": "65200"}),
		fx.f.Edit(model.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "AdjRIBInFilter": "FROM-PEER", "AuthPassword": "s3cret"}),
		fx.f.Edit(model.Create, "BGPv4Neighbor", model.Object{"IntfRef": "fpPort1", "PeerGroup": "SPINES"}),
		fx.f.Edit(model.Create, "BGPv6Neighbor", model.Object{"NeighborAddress": "2001:db8::2", "PeerGroup": "LEAVES6", "Disabled": true}),
	)
	nbr := func(key string) string { return ocBGP + "/neighbors/neighbor[neighbor-address=" + key + "]" }
	cfg := ocGetOf(t, fx, ocBGP+"/neighbors", "CONFIG")
	state := ocGet(t, fx, ocBGP+"/neighbors")
	groups := ocGet(t, fx, ocBGP+"/peer-groups")
	for path, want := range map[string]string{
		nbr("10.0.0.2") + "/config/neighbor-address":           `"10.0.0.2"`,
		nbr("10.0.0.2") + "/config/peer-as":                    `65002`,
		nbr("10.0.0.2") + "/apply-policy/config/import-policy": `["FROM-PEER"]`,
		nbr("fpPort1") + "/config/peer-group":                  `"SPINES"`,
		nbr("fpPort1") + "/config/enabled":                     `true`,
		nbr("2001:db8::2") + "/config/enabled":                 `false`,
		nbr("2001:db8::2") + "/config/peer-group":              `"LEAVES6"`,
	} {
		if cfg[path] != want {
			t.Errorf("config %s = %s, want %s", path, cfg[path], want)
		}
	}
	for path, want := range map[string]string{
		nbr("10.0.0.2") + "/state/messages/received/UPDATE":                                                    `"0"`,
		nbr("10.0.0.2") + "/state/session-state":                                                               `"IDLE"`,
		nbr("fpPort1") + "/state/neighbor-address":                                                             `"fpPort1"`,
		nbr("10.0.0.2") + "/afi-safis/afi-safi[afi-safi-name=IPV4_UNICAST]/state/prefixes/received":            `0`,
		nbr("10.0.0.2") + "/afi-safis/afi-safi[afi-safi-name=IPV4_UNICAST]/state/prefixes/received-pre-policy": `0`,
		nbr("fpPort1") + "/afi-safis/afi-safi[afi-safi-name=IPV6_UNICAST]/state/afi-safi-name":                 `"IPV6_UNICAST"`,
		nbr("2001:db8::2") + "/afi-safis/afi-safi[afi-safi-name=IPV6_UNICAST]/state/prefixes/sent":             `0`,
		ocBGP + "/peer-groups/peer-group[peer-group-name=SPINES]/state/description":                            `"spines"`,
		ocBGP + "/peer-groups/peer-group[peer-group-name=LEAVES6]/state/peer-as":                               `65200`,
	} {
		got := state[path]
		if strings.Contains(path, "peer-groups") {
			got = groups[path]
		}
		if got != want {
			t.Errorf("state %s = %s, want %s", path, got, want)
		}
	}
	for path, v := range cfg {
		if strings.Contains(v, "s3cret") {
			t.Errorf("a read returns the neighbor's password: %s = %s", path, v)
		}
	}
	// A neighbor by address carries no IPv6 unicast.
	if v, ok := state[nbr("10.0.0.2")+"/afi-safis/afi-safi[afi-safi-name=IPV6_UNICAST]/state/afi-safi-name"]; ok {
		t.Errorf("the IPv4 neighbor by address has an IPV6_UNICAST AFI-SAFI: %s", v)
	}

	runOCSteps(t, fx, "", []ocStep{
		{name: "description of the neighbor by interface", upd: [][2]string{{nbr("fpPort1") + "/config/description", `"to spine 1"`}},
			get: nbr("fpPort1") + "/config/description", want: []string{nbr("fpPort1") + `/config/description="to spine 1"`}},
		{name: "an IPv6 neighbor's peer-as", upd: [][2]string{{nbr("2001:db8::2") + "/config/peer-as", `65009`}},
			get: nbr("2001:db8::2") + "/config/peer-as", want: []string{nbr("2001:db8::2") + "/config/peer-as=65009"}},
		{name: "a new IPv6 neighbor", rep: [][2]string{{nbr("2001:db8::3") + "/config", `{"neighbor-address": "2001:db8::3", "peer-as": 65003}`}},
			get: nbr("2001:db8::3") + "/config/peer-as", want: []string{nbr("2001:db8::3") + "/config/peer-as=65003"}},
		{name: "enabled false", upd: [][2]string{{nbr("10.0.0.2") + "/config/enabled", `false`}},
			get: nbr("10.0.0.2") + "/config/enabled", want: []string{nbr("10.0.0.2") + "/config/enabled=false"}},
		{name: "two import policies", upd: [][2]string{{nbr("10.0.0.2") + "/apply-policy/config/import-policy", `["FROM-PEER", "OTHER"]`}},
			code: codes.InvalidArgument, msg: "one policy"},
		{name: "a zone without an address", upd: [][2]string{{nbr("x%fpPort1") + "/config/peer-as", `1`}},
			code: codes.InvalidArgument, msg: "address%interface"},
		{name: "a delete of a zone without an address", del: []string{nbr("x%fpPort1")},
			code: codes.InvalidArgument, msg: "address%interface"},
		{name: "the IPv6 neighbor's delete", del: []string{nbr("2001:db8::3")},
			get: nbr("2001:db8::3") + "/config/peer-as", want: nil},
	})
}

// The routing tables' next hops are openconfig-aft's next-hop groups and
// next hops: two routes through the same next hops name one group, given
// once, and the IPv6 table's entries are ipv6-unicast's. BFD sessions are
// openconfig-bfd's peers.
func TestOpenConfigAFTNextHopsAndBFD(t *testing.T) {
	hops := []model.Object{{"NextHopIp": "10.1.1.2", "NextHopIntRef": "fpPort1", "Weight": int64(1)}, {"NextHopIp": "10.1.2.2", "NextHopIntRef": "fpPort2", "Weight": int64(1)}}
	fx := start(t, Options{State: func(_ context.Context, k *model.Kind) ([]model.Object, error) {
		if k.Name == "IPv4RouteState" {
			return []model.Object{
				{"DestinationNw": "10.9.0.0/16", "Protocol": "BGP", "NextHopList": hops},
				{"DestinationNw": "10.8.0.0/16", "Protocol": "BGP", "NextHopList": []model.Object{hops[1], hops[0]}},
				{"DestinationNw": "10.7.0.0/16", "Protocol": "STATIC", "NextHopList": hops[:1]},
			}, nil
		}
		return nil, nil
	}})
	fx.f.MustApply(
		fx.f.Edit(model.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "2001:db8:1::1/64"}),
		fx.f.Edit(model.Create, "IPv6Route", model.Object{"DestinationNw": "2001:db8:9::", "NetworkMask": "48", "NextHop": []model.Object{{"NextHopIp": "2001:db8:1::2"}}}),
		fx.f.Edit(model.Create, "BfdSession", model.Object{"IpAddr": "10.1.1.2", "Interface": "fpPort1"}),
	)
	afts := ocGet(t, fx, "/network-instances/network-instance[name=default]/afts")
	const root = "/network-instances/network-instance[name=default]/afts"
	group := func(prefix string) string {
		return afts[root+"/ipv4-unicast/ipv4-entry[prefix="+prefix+"]/state/next-hop-group"]
	}
	if g9, g8, g7 := group("10.9.0.0/16"), group("10.8.0.0/16"), group("10.7.0.0/16"); g9 == "" || g9 != g8 || g7 == "" || g7 == g9 {
		t.Errorf("next-hop groups: 10.9/16 %s, 10.8/16 %s (the same next hops), 10.7/16 %s (one of them): %v", g9, g8, g7, afts)
	}
	id := strings.Trim(group("10.9.0.0/16"), `"`)
	groupHops, groupIDs := 0, 0
	for p := range afts {
		if strings.HasPrefix(p, root+"/next-hop-groups/next-hop-group[id="+id+"]/next-hops/next-hop[") && strings.HasSuffix(p, "/state/index") {
			groupHops++
		}
		if strings.HasSuffix(p, "]/state/id") {
			groupIDs++
		}
	}
	if groupHops != 2 || groupIDs != 4 {
		t.Errorf("group %s has %d next hops, want 2; %d groups, want 4 (the IPv6 routes' among them): %v", id, groupHops, groupIDs, afts)
	}
	addrs := map[string]bool{}
	for p, v := range afts {
		if strings.HasPrefix(p, root+"/next-hops/next-hop[") && strings.HasSuffix(p, "/state/ip-address") {
			if addrs[v] {
				t.Errorf("next hop %s given twice", v)
			}
			addrs[v] = true
		}
	}
	if !addrs[`"10.1.1.2"`] || !addrs[`"10.1.2.2"`] || !addrs[`"2001:db8:1::2"`] {
		t.Errorf("next hops: %v", addrs)
	}
	if afts[root+"/ipv6-unicast/ipv6-entry[prefix=2001:db8:9::/48]/state/origin-protocol"] != `"STATIC"` {
		t.Errorf("the IPv6 static route: %v", afts)
	}
	bfd := ocGet(t, fx, "/bfd")
	found := false
	for p, v := range bfd {
		if strings.HasPrefix(p, "/bfd/interfaces/interface[id=fpPort1]/peers/peer[") && strings.HasSuffix(p, "/state/session-state") {
			found = v == `"DOWN"`
			if bfd[strings.TrimSuffix(p, "session-state")+"remote-address"] != `"10.1.1.2"` {
				t.Errorf("the session's remote address: %v", bfd)
			}
		}
	}
	if !found {
		t.Errorf("no BFD peer on fpPort1 DOWN: %v", bfd)
	}
}
