package test

import (
	"testing"
)

// gnmi_cli reaches openconfig-bgp: a neighbor by interface (unnumbered,
// keyed by its interface) is created with its peer group by a Set of its
// config container, which REST then shows; a Get of every neighbor's
// state answers its session state and its AFI-SAFIs' prefix counters
// (both families for the unnumbered one), and the peer group's config.
func TestGNMIOpenConfigBGP(t *testing.T) {
	g := startGNMIServer(t, "")
	g.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	g.expect(t, 201, "POST", "/config/IPv6Intf", `{"IntfRef":"fpPort1"}`)
	g.expect(t, 201, "POST", "/config/BGPv4PeerGroup", `{"Name":"SPINES","PeerAS":"external"}`)
	const nbrs = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors"
	g.admin(t, "-set", "-proto", ocUpdate(nbrs+"/neighbor[neighbor-address=fpPort1]/config", `{"neighbor-address":"fpPort1","peer-group":"SPINES","description":"spine 1"}`))
	mustContain(t, string(g.expect(t, 200, "GET", "/config/BGPv4Neighbor?Vrf=default&NeighborAddress=&IntfRef=fpPort1", "").raw), `"PeerGroup":"SPINES"`, `"Description":"spine 1"`)
	got := g.admin(t, "-get", "-proto", `path:<`+ocProto(nbrs+"/neighbor[neighbor-address=*]/state")+`> type:STATE encoding:JSON_IETF`)
	mustContain(t, got, `value:"fpPort1"`, `name:"session-state"`, `json_ietf_val:"\"IDLE\""`)
	got = g.admin(t, "-get", "-proto", `path:<`+ocProto(nbrs+"/neighbor[neighbor-address=fpPort1]/afi-safis")+`> type:STATE encoding:JSON_IETF`)
	mustContain(t, got, `value:"IPV4_UNICAST"`, `value:"IPV6_UNICAST"`, `name:"received-pre-policy"`, `name:"installed"`, `name:"sent"`)
	got = g.admin(t, "-get", "-proto", `path:<`+ocProto("/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/peer-groups/peer-group[peer-group-name=SPINES]/config")+`> type:CONFIG encoding:JSON_IETF`)
	mustContain(t, got, `name:"peer-group-name"`, `json_ietf_val:"\"SPINES\""`)
}
