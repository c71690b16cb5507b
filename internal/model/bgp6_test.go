package model

import (
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// TestBGPv6Checks: a BGPv6Neighbor and the aggregates refuse what their
// declarations cannot mean, naming the field, and keep one form.
func TestBGPv6Checks(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(Object) error
		in    Object
		field string // "" accepted
		want  Object // the fields as kept, when accepted
	}{
		{"by address", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2", "PeerAS": "65002"}, "", nil},
		{"by interface", checkBGPv6Neighbor, Object{"IntfRef": "fpPort1", "PeerGroup": "G"}, "", nil},
		{"neither", checkBGPv6Neighbor, Object{"PeerAS": "65002"}, "NeighborAddress", nil},
		{"link-local alone", checkBGPv6Neighbor, Object{"NeighborAddress": "fe80::2", "PeerAS": "65002"}, "IntfRef", nil},
		{"no AS, no group", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2"}, "PeerAS", nil},
		{"IPv6 source", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2", "PeerAS": "1", "UpdateSource": "2001:DB8::1"}, "", Object{"UpdateSource": "2001:db8::1"}},
		{"IPv4 source", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2", "PeerAS": "1", "UpdateSource": "10.0.0.1"}, "UpdateSource", nil},
		{"mapped source", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2", "PeerAS": "1", "UpdateSource": "::ffff:10.0.0.1"}, "UpdateSource", nil},
		{"interface source", checkBGPv6Neighbor, Object{"NeighborAddress": "2001:db8::2", "PeerAS": "1", "UpdateSource": "Loopback1"}, "", nil},
		{"v4 neighbor, v6 source", checkBGPNeighbor, Object{"NeighborAddress": "10.0.0.2", "PeerAS": "1", "UpdateSource": "2001:db8::1"}, "UpdateSource", nil},
		{"v4 aggregate", checkAggregate("BGPv4Aggregate", false), Object{"IpPrefix": "10.1.0.0/16"}, "", Object{"IpPrefix": "10.1.0.0/16"}},
		{"v4 host bits", checkAggregate("BGPv4Aggregate", false), Object{"IpPrefix": "10.1.0.1/16"}, "IpPrefix", nil},
		{"v4 everything", checkAggregate("BGPv4Aggregate", false), Object{"IpPrefix": "0.0.0.0/0"}, "IpPrefix", nil},
		{"v6 in v4", checkAggregate("BGPv4Aggregate", false), Object{"IpPrefix": "2001:db8::/32"}, "IpPrefix", nil},
		{"v6 aggregate", checkAggregate("BGPv6Aggregate", true), Object{"IpPrefix": "2001:DB8:0::/32"}, "", Object{"IpPrefix": "2001:db8::/32"}},
		{"v6 host bits", checkAggregate("BGPv6Aggregate", true), Object{"IpPrefix": "2001:db8::1/32"}, "IpPrefix", nil},
		{"v6 zone", checkAggregate("BGPv6Aggregate", true), Object{"IpPrefix": "fe80::%eth0/64"}, "IpPrefix", nil},
		{"v6 mapped", checkAggregate("BGPv6Aggregate", true), Object{"IpPrefix": "::ffff:10.0.0.0/104"}, "IpPrefix", nil},
		{"v4 in v6", checkAggregate("BGPv6Aggregate", true), Object{"IpPrefix": "10.0.0.0/8"}, "IpPrefix", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.check(c.in)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				for f, v := range c.want {
					if c.in[f] != v {
						t.Errorf("%s kept as %v, want %v", f, c.in[f], v)
					}
				}
				return
			}
			ae := apierr.From(err)
			if err == nil || ae.Status != http.StatusBadRequest || ae.Field != c.field {
				t.Fatalf("got %v (field %q), want a 400 on %s", err, ae.Field, c.field)
			}
		})
	}
}

// mapView is a configuration for a constraint's check.
type mapView map[string][]Object

func (v mapView) Get(kind, key string) Object { return nil }
func (v mapView) Each(kind string, fn func(string, Object) bool) error {
	for _, o := range v[kind] {
		if !fn("", o) {
			break
		}
	}
	return nil
}

// TestBGPIntfNeedsIPv6: a session on an interface needs an IPv6Intf on
// it: an unnumbered BGPv4Neighbor, a BGPv6Neighbor with IntfRef; a
// BGPv4Neighbor by address does not.
func TestBGPIntfNeedsIPv6(t *testing.T) {
	v6 := []Object{{"IntfRef": "fpPort1"}}
	for _, c := range []struct {
		name string
		cfg  mapView
		bad  string // "" fine, else what the error names
	}{
		{"v6 neighbor with IPv6", mapView{"IPv6Intf": v6, "BGPv6Neighbor": {{"IntfRef": "fpPort1"}}}, ""},
		{"v6 neighbor without", mapView{"IPv6Intf": v6, "BGPv6Neighbor": {{"IntfRef": "fpPort2"}}}, "fpPort2"},
		{"unnumbered without", mapView{"BGPv4Neighbor": {{"IntfRef": "fpPort3", "NeighborAddress": ""}}}, "fpPort3"},
		{"v4 by address on an interface", mapView{"BGPv4Neighbor": {{"IntfRef": "fpPort3", "NeighborAddress": "10.0.0.2"}}}, ""},
		{"v6 by global address", mapView{"BGPv6Neighbor": {{"NeighborAddress": "2001:db8::2"}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := bgpIntfNeedsIPv6.Check(c.cfg, nil)
			switch {
			case c.bad == "" && err != nil:
				t.Fatal(err)
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad) || apierr.From(err).Status != http.StatusConflict):
				t.Fatalf("got %v, want a 409 naming %s", err, c.bad)
			}
		})
	}
}
