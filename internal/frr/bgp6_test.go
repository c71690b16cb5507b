package frr

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestRenderBGPv6Refuses(t *testing.T) {
	global := []Instance{{ASNum: "65001"}}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"v4 address in a v6 neighbor", Config{Instances: global, Neighbors: []Neighbor{{NeighborAddress: "10.0.0.1", PeerAS: "2", IPv6: true}}}, "not an IPv6"},
		{"zone", Config{Instances: global, Neighbors: []Neighbor{{NeighborAddress: "fe80::1%eth0", PeerAS: "2", IPv6: true}}}, "not an IPv6"},
		{"group of both families", Config{Instances: global, Neighbors: []Neighbor{{NeighborAddress: "2001:db8::1", PeerGroup: "G", IPv6: true}},
			PeerGroups: []Neighbor{{Name: "G", PeerAS: "2"}, {Name: "G", PeerAS: "2", IPv6: true}}}, "both a BGPv4PeerGroup and a BGPv6PeerGroup"},
		{"v6 neighbor in a v4 group", Config{Instances: global, Neighbors: []Neighbor{{NeighborAddress: "2001:db8::1", PeerGroup: "G", IPv6: true}},
			PeerGroups: []Neighbor{{Name: "G", PeerAS: "2"}}}, "an IPv4 group"},
		{"aggregate without instance", Config{Aggregates: []Aggregate{{Prefix: "10.0.0.0/8"}}}, "BGPGlobal ASNum"},
		{"aggregate with host bits", Config{Instances: global, Aggregates: []Aggregate{{Prefix: "10.0.0.1/8"}}}, "host bits zero"},
		{"aggregate of everything", Config{Instances: global, Aggregates: []Aggregate{{Prefix: "::/0"}}}, "host bits zero"},
		{"aggregate twice", Config{Instances: global, Aggregates: []Aggregate{{Prefix: "10.0.0.0/8"}, {Prefix: "10.0.0.0/8", ASSet: true}}}, "twice"},
		{"command as aggregate", Config{Instances: global, Aggregates: []Aggregate{{Prefix: "10.0.0.0/8 route-map x"}}}, "host bits zero"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestParseBGPTables reads FRR 8.4's `show bgp vrf all ipv6 unicast json`
// (this one printed by it for a switch originating a loopback and
// learning a route with a global and a link-local next hop).
func TestParseBGPTables(t *testing.T) {
	const out = `{
"default":{
 "vrfId": 0, "vrfName": "default", "tableVersion": 2, "routerId": "0.0.0.0", "defaultLocPrf": 100, "localAS": 65001,
 "routes": { "2001:db8:1::1/128": [{"valid":true,"bestpath":true,"selectionReason":"First path received","pathFrom":"external","prefix":"2001:db8:1::1","prefixLen":128,"network":"2001:db8:1::1/128","version":1,"metric":0,"weight":32768,"peerId":"(unspec)","path":"","origin":"incomplete","nexthops":[{"ip":"::","hostname":"vm","afi":"ipv6","scope":"global","used":true}]}],
  "2001:db8:ff::2/128": [{"valid":true,"bestpath":true,"pathFrom":"external","prefix":"2001:db8:ff::2","prefixLen":128,"network":"2001:db8:ff::2/128","metric":0,"weight":0,"peerId":"2001:db8:12::2","path":"65002","origin":"incomplete","nexthops":[{"ip":"2001:db8:12::2","hostname":"vm","afi":"ipv6","scope":"global"},{"ip":"fe80::1","hostname":"vm","afi":"ipv6","scope":"link-local","used":true}]},
   {"valid":false,"peerId":"2001:db8:12::3","path":"65003","nexthops":[]}]
 }  }
}`
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	got, err := parseBGPTables(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []BGPRoute{
		{VRF: "default", Prefix: netip.MustParsePrefix("2001:db8:1::1/128"), Paths: []BGPPath{{Origin: "incomplete", Best: true}}},
		{VRF: "default", Prefix: netip.MustParsePrefix("2001:db8:ff::2/128"), Paths: []BGPPath{{NextHop: "2001:db8:12::2", Peer: "2001:db8:12::2", ASPath: "65002", Origin: "incomplete", Best: true}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
