package frr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
)

// BGP over IPv6 and aggregation. FRR activates every neighbor and peer
// group in IPv4 unicast by default (bgp default ipv4-unicast); a BGPv6
// neighbor or group is taken out of it (`no neighbor X activate`, as FRR
// prints it) and activated in IPv6 unicast, where its per-family settings
// go. A member of a group takes the group's activation: FRR prints none
// of its own. Peer groups of both families share FRR's one namespace of
// neighbor names, so a name is one family's.

// Aggregate is a BGPv4Aggregate or BGPv6Aggregate of the default
// instance: `aggregate-address` in the prefix's family.
type Aggregate struct {
	Prefix      string // the network, host bits zero
	SummaryOnly bool
	ASSet       bool
}

func familyName(v6 bool) string {
	if v6 {
		return "IPv6"
	}
	return "IPv4"
}

// renderAggregates puts the aggregates into the default instance's
// address families, as FRR prints them (as-set before summary-only).
func (c Config) renderAggregates(b *block) []error {
	if len(c.Aggregates) == 0 {
		return nil
	}
	if b == nil {
		return []error{errors.New("a BGP aggregate needs the BGP instance (BGPGlobal ASNum)")}
	}
	var errs []error
	seen := map[netip.Prefix]bool{}
	for _, a := range c.Aggregates {
		p, err := netip.ParsePrefix(a.Prefix)
		if err != nil || p.Masked() != p || p.Bits() == 0 || p.Addr().Zone() != "" {
			errs = append(errs, fmt.Errorf("aggregate %q: give a network prefix like 10.1.0.0/16 or 2001:db8::/32, host bits zero", a.Prefix))
			continue
		}
		if seen[p] {
			errs = append(errs, fmt.Errorf("aggregate %s is configured twice", p))
			continue
		}
		seen[p] = true
		line := "aggregate-address " + p.String()
		if a.ASSet {
			line += " as-set"
		}
		if a.SummaryOnly {
			line += " summary-only"
		}
		if p.Addr().Is4() {
			b.af = append(b.af, line)
		} else {
			b.af6 = append(b.af6, line)
		}
	}
	return errs
}

// checkGroupFamilies refuses a peer group name given to both families and
// a neighbor in a group of the other family.
func (c Config) checkGroupFamilies() []error {
	var errs []error
	family := map[string]bool{}
	for _, g := range c.PeerGroups {
		if v6, ok := family[g.Name]; ok {
			if v6 != g.IPv6 {
				errs = append(errs, fmt.Errorf("peer group %s is both a BGPv4PeerGroup and a BGPv6PeerGroup: FRR has one namespace of group names; rename one", g.Name))
			}
			continue
		}
		family[g.Name] = g.IPv6
	}
	for _, n := range c.Neighbors {
		if v6, ok := family[n.PeerGroup]; ok && v6 != n.IPv6 {
			errs = append(errs, fmt.Errorf("neighbor %s: peer group %s is an %s group; an %s neighbor needs an %s one", n.name(), n.PeerGroup, familyName(v6), familyName(n.IPv6), familyName(n.IPv6)))
		}
	}
	return errs
}

// placeFamilies puts a neighbor's per-family lines (af, rendered for its
// family) and its activations into the instance's address families.
func placeFamilies(b *block, n Neighbor, af []string) {
	p := "neighbor " + n.name() + " "
	if !n.IPv6 {
		b.af = append(b.af, af...)
		if n.NeighborAddress == "" {
			// Unnumbered: IPv6 routes beside the IPv4 ones (RFC 8950),
			// through the same filters (policyfamily.go).
			b.af6 = append(b.af6, p+"activate")
			b.af6 = append(b.af6, ipv6PolicyLines(n)...)
		}
		return
	}
	if n.PeerGroup == "" {
		b.af = append(b.af, "no "+p+"activate")
		b.af6 = append(b.af6, p+"activate")
	}
	b.af6 = append(b.af6, af...)
}

// placeGroupFamilies adds a peer group's per-family lines (af) and, for an
// IPv6 group, its activations, to the groups' lines of each family.
func placeGroupFamilies(g Neighbor, af, groupAF, groupAF6 []string) ([]string, []string) {
	if !g.IPv6 {
		// Its unnumbered members run IPv6 unicast too (policyfamily.go).
		return append(groupAF, af...), append(groupAF6, ipv6PolicyLines(g)...)
	}
	p := "neighbor " + g.Name + " "
	groupAF = append(groupAF, "no "+p+"activate")
	groupAF6 = append(append(groupAF6, p+"activate"), af...)
	return groupAF, groupAF6
}

// PrefixCounts are a session's prefix counts in one address family
// (prefixcounts.go).
type PrefixCounts struct {
	// Received is what the neighbor announced, before inbound policy:
	// FRR's Adj-RIB-In where it keeps one (soft-reconfiguration inbound,
	// which swmgr sets with an inbound filter), else Accepted (nothing
	// was dropped by policy).
	Received   uint32
	Accepted   uint32 // taken into BGP's table (after inbound policy)
	Installed  uint32 // accepted and chosen as BGP's best path
	Advertised uint32 // announced to the neighbor
	// active: the session carries the family (FRR reports it);
	// beforePolicy: FRR keeps the family's Adj-RIB-In.
	active, beforePolicy bool
}

type frrPrefixCounts struct {
	AcceptedPrefixCounter   *uint32 `json:"acceptedPrefixCounter"`
	SentPrefixCounter       uint32  `json:"sentPrefixCounter"`
	InboundSoftConfigPermit bool    `json:"inboundSoftConfigPermit"`
}

func (c frrPrefixCounts) counts() PrefixCounts {
	out := PrefixCounts{Advertised: c.SentPrefixCounter, beforePolicy: c.InboundSoftConfigPermit}
	if c.AcceptedPrefixCounter != nil {
		out.active = true
		out.Accepted = *c.AcceptedPrefixCounter
		out.Received, out.Installed = out.Accepted, out.Accepted
	}
	return out
}

// BGPRoute is one destination of BGP's table of one address family.
type BGPRoute struct {
	VRF    string
	Prefix netip.Prefix
	Paths  []BGPPath
}

// BGPPath is one path to a BGPRoute's destination.
type BGPPath struct {
	NextHop   string // the global next hop, else the link-local one
	Peer      string // the neighbor it came from; "" for a local route
	ASPath    string
	LocalPref uint32
	MED       uint32
	Origin    string
	Best      bool
	Multipath bool
}

type frrBGPTable struct {
	VRFName string                  `json:"vrfName"`
	Routes  map[string][]frrBGPPath `json:"routes"`
}

type frrBGPPath struct {
	Valid     bool   `json:"valid"`
	Best      bool   `json:"bestpath"`
	Multipath bool   `json:"multipath"`
	Metric    uint32 `json:"metric"`
	LocPrf    uint32 `json:"locPrf"`
	PeerID    string `json:"peerId"`
	Path      string `json:"path"`
	Origin    string `json:"origin"`
	NextHops  []struct {
		IP       string `json:"ip"`
		Scope    string `json:"scope"`
		Hostname string `json:"hostname"`
		Used     bool   `json:"used"`
	} `json:"nexthops"`
}

// BGPRoutes reports BGP's table of IPv4 (v6 false) or IPv6 unicast, every
// VRF's, sorted by VRF and prefix.
func (r *Router) BGPRoutes(ctx context.Context, v6 bool) ([]BGPRoute, error) {
	afi := "ipv4"
	if v6 {
		afi = "ipv6"
	}
	var raw map[string]json.RawMessage
	if err := r.showJSON(ctx, "bgpd", "show bgp vrf all "+afi+" unicast json", &raw); err != nil {
		return nil, err
	}
	return parseBGPTables(raw)
}

// parseBGPTables reads `show bgp vrf all <afi> unicast json`: one table
// per VRF's instance, by name.
func parseBGPTables(raw map[string]json.RawMessage) ([]BGPRoute, error) {
	tables := map[string]frrBGPTable{}
	for vrf, msg := range raw {
		var t frrBGPTable
		if err := json.Unmarshal(msg, &t); err != nil {
			return nil, fmt.Errorf("frr: BGP table of VRF %s: %w", vrf, err)
		}
		tables[vrf] = t
	}
	var out []BGPRoute
	for vrf, t := range tables {
		for prefix, paths := range t.Routes {
			p, err := netip.ParsePrefix(prefix)
			if err != nil {
				return nil, fmt.Errorf("frr: BGP table of VRF %s: prefix %q: %w", vrf, prefix, err)
			}
			rt := BGPRoute{VRF: vrf, Prefix: p}
			for _, fp := range paths {
				if !fp.Valid {
					continue
				}
				bp := BGPPath{Peer: fp.PeerID, ASPath: fp.Path, LocalPref: fp.LocPrf, MED: fp.Metric, Origin: fp.Origin, Best: fp.Best, Multipath: fp.Multipath}
				if bp.Peer == "(unspec)" || bp.Peer == "0.0.0.0" || bp.Peer == "::" {
					bp.Peer = ""
				}
				for _, nh := range fp.NextHops {
					if nh.IP == "::" || nh.IP == "0.0.0.0" {
						continue // a route of the switch's own
					}
					if bp.NextHop == "" || (nh.Scope == "global" && isLinkLocal(bp.NextHop)) {
						bp.NextHop = nh.IP
					}
				}
				rt.Paths = append(rt.Paths, bp)
			}
			out = append(out, rt)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].VRF != out[j].VRF {
			return out[i].VRF < out[j].VRF
		}
		return out[i].Prefix.String() < out[j].Prefix.String()
	})
	return out, nil
}

// Reset tears down the session with one neighbor (an address, or the
// interface of a neighbor by interface) of a VRF's instance, which then
// comes up again: FRR's `clear bgp`.
func (r *Router) Reset(ctx context.Context, vrf, neighbor string) error {
	if !wordRE.MatchString(neighbor) || (vrf != "" && !wordRE.MatchString(vrf)) {
		return fmt.Errorf("frr: reset: %q in VRF %q is not a neighbor's name", neighbor, vrf)
	}
	cmd := "clear bgp vrf " + vrfOf(vrf) + " " + neighbor
	if _, err := r.show(ctx, "bgpd", cmd); err != nil {
		return fmt.Errorf("frr: %s: %w", cmd, err)
	}
	return nil
}

func isLinkLocal(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.IsLinkLocalUnicast()
}
