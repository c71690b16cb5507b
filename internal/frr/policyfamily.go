package frr

import (
	"fmt"
	"strings"
)

// A neighbor's or peer group's routing policy in its address families.
// A BGPv4Neighbor by address and a BGPv4PeerGroup's numbered members run
// IPv4 unicast only, a BGPv6Neighbor IPv6 unicast only; a BGPv4Neighbor by
// interface (unnumbered) runs both, so its filters are applied in both.
// One route-map serves both families: a match on an IPv4 prefix-list
// never matches an IPv6 route and the other way round (FRR's match
// commands check the route's family), so each statement acts on the
// routes of its prefix set's family.
//
// An inbound filter comes with `soft-reconfiguration inbound` in the same
// family: FRR then keeps what the neighbor sent before policy (its
// Adj-RIB-In), which is what the received count reports beside the
// accepted one (routes that passed the filter). Without an inbound filter
// nothing is dropped by policy, received is accepted, and no copy is kept.

// softReconfigLines keep a neighbor's routes as received, before its
// inbound filter.
func softReconfigLines(n Neighbor, p string) []string {
	if n.AdjRIBInFilter == "" {
		return nil
	}
	return []string{p + "soft-reconfiguration inbound"}
}

// filterLines are a neighbor's route-maps, each line starting with p.
func filterLines(n Neighbor, p string) ([]string, error) {
	var out []string
	for _, f := range []struct{ name, dir string }{{n.AdjRIBInFilter, "in"}, {n.AdjRIBOutFilter, "out"}} {
		if f.name == "" {
			continue
		}
		if !wordRE.MatchString(f.name) {
			return nil, fmt.Errorf("filter %q is not a valid route-map name", f.name)
		}
		out = append(out, p+"route-map "+f.name+" "+f.dir)
	}
	return out, nil
}

// ipv6PolicyLines are the policy lines an IPv4 neighbor or group also
// gets in IPv6 unicast: an unnumbered neighbor's, and a group's (which its
// unnumbered members take there). Their names were checked by renderPeer.
func ipv6PolicyLines(n Neighbor) []string {
	p := "neighbor " + n.name() + " "
	filters, _ := filterLines(n, p)
	return append(softReconfigLines(n, p), filters...)
}

// softReconfigFirst puts the removals of soft reconfiguration before the
// other removals of a family (a filter's among them). FRR 8.4 drops a
// neighbor's Adj-RIB-In with its soft reconfiguration; when the inbound
// route-map goes first, its re-application from that copy is still
// pending when the copy is dropped, and the routes the filter denied never
// come back (found against a real bgpd). Removed first, the route-map's
// removal then asks the neighbor for its routes again (a route refresh).
func softReconfigFirst(removals []string) []string {
	soft := func(l string) bool {
		return strings.HasSuffix(l, " soft-reconfiguration inbound") && strings.HasPrefix(l, "no ")
	}
	out := make([]string, 0, len(removals))
	for _, pass := range []bool{true, false} {
		for _, l := range removals {
			if soft(l) == pass {
				out = append(out, l)
			}
		}
	}
	return out
}
