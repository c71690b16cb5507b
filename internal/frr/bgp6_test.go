package frr

import (
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
