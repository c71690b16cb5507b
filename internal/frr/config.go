// Package frr runs BGP through FRR (bgpd and zebra, and BFD through bfdd):
// it renders the BGP part of FRR's configuration from plain structs shaped
// after FlexSwitch's BGPGlobal, BGPVrf and BGPv4Neighbor (and the L2VPN EVPN
// family with the VRFs' L3 VNIs, evpn.go; bfdd's profiles and peers, with
// its session state and change notifications, bfd.go), applies it
// incrementally by diffing
// against FRR's own running configuration (so a change to one neighbor sends
// only that neighbor's lines and never resets another session), undoes a
// change FRR rejects, reads FRR's JSON state, and supervises the daemons in
// their own network namespace and directories.
package frr

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultVRF is the name FlexSwitch and FRR give the default instance.
const DefaultVRF = "default"

// Config is the whole BGP configuration swmgr owns in FRR.
type Config struct {
	Instances []Instance // at most one per VRF; the default one is needed by any other
	Neighbors []Neighbor
	// PeerGroups are BGPv4PeerGroup (Neighbor with Name set): each is
	// defined in the instance of every VRF one of its neighbors is in.
	PeerGroups []Neighbor
	// Aggregates are BGPv4Aggregate and BGPv6Aggregate, of the default
	// instance (bgp6.go).
	Aggregates []Aggregate
	EVPN       EVPN // evpn.go
	// Policies are the prefix-lists and route-maps (policy.go) the
	// neighbors' filters and the redistributions name.
	Policies Policies
	BFD      BFD // bfdd's profiles and static peers (bfd.go)
	// RAIntervals are zebra's router advertisement intervals on the
	// unnumbered neighbors' interfaces (ndp.go).
	RAIntervals []RAInterval
}

// Instance is BGPGlobal (VRF "default") or BGPVrf.
type Instance struct {
	VRF                 string
	ASNum               string // asplain or asdot
	RouterID            string // "" or 0.0.0.0: FRR picks one
	Disabled            bool
	UseMultiplePaths    bool
	EBGPMaxPaths        uint32
	EBGPAllowMultipleAS bool
	IBGPMaxPaths        uint32
	Redistribution      []Redistribution
}

// Redistribution is FlexSwitch's SourcePolicyList.
type Redistribution struct {
	Sources string // comma separated: CONNECTED, STATIC, OSPF
	Policy  string // a route-map name; "" for none
}

// Neighbor is BGPv4Neighbor, or with Name a BGPv4PeerGroup. Timers of 0
// take FRR's defaults. A neighbor by interface (IntfRef alone: BGP
// unnumbered) is activated in IPv6 unicast too, so that it exchanges IPv6
// routes beside the IPv4 ones, which travel with IPv6 next hops (RFC 8950,
// FRR's default for such a neighbor).
type Neighbor struct {
	Name                    string // a peer group's name; "" for a neighbor
	VRF                     string
	NeighborAddress         string
	IntfRef                 string // alone (no address): an unnumbered session on that interface
	Description             string
	Disabled                bool
	PeerGroup               string
	PeerAS                  string
	LocalAS                 string
	UpdateSource            string // an address or an interface name
	NextHopSelf             bool
	AuthPassword            string
	RouteReflectorClusterId uint32
	RouteReflectorClient    bool
	MultiHopEnable          bool
	MultiHopTTL             uint8
	ConnectRetryTime        uint32
	HoldTime                uint32
	KeepaliveTime           uint32
	AddPathsRx              bool
	AddPathsMaxTx           uint8
	BfdEnable               bool
	BfdSessionParam         string
	MaxPrefixes             uint32
	MaxPrefixesThresholdPct uint8
	MaxPrefixesDisconnect   bool
	MaxPrefixesRestartTimer uint8 // seconds; FRR counts minutes, so rounded up
	AdjRIBInFilter          string
	AdjRIBOutFilter         string
	// IPv6 makes it a BGPv6Neighbor or BGPv6PeerGroup: an IPv6 address,
	// its session in IPv6 unicast only (bgp6.go).
	IPv6 bool
}

// name is how FRR's configuration names the neighbor.
func (n Neighbor) name() string {
	if n.Name != "" {
		return n.Name
	}
	if n.NeighborAddress != "" {
		return n.NeighborAddress
	}
	return n.IntfRef
}

func vrfOf(v string) string {
	if v == "" {
		return DefaultVRF
	}
	return v
}

var (
	wordRE = regexp.MustCompile(`^[A-Za-z0-9_.:@/+-]{1,63}$`)
	asDot  = regexp.MustCompile(`^([0-9]{1,5})\.([0-9]{1,5})$`)
)

// ParseAS accepts asplain and asdot and returns the asplain number FRR uses.
func ParseAS(s string) (uint32, error) {
	if m := asDot.FindStringSubmatch(s); m != nil {
		hi, _ := strconv.ParseUint(m[1], 10, 32)
		lo, _ := strconv.ParseUint(m[2], 10, 32)
		if hi > 65535 || lo > 65535 {
			return 0, fmt.Errorf("AS %q out of range", s)
		}
		return uint32(hi<<16 | lo), nil
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("AS %q is not a number from 1 to 4294967295 (asplain) or 1.0 to 65535.65535 (asdot)", s)
	}
	return uint32(v), nil
}

// Validate refuses what FRR cannot express, without touching FRR: this is
// the pure check a driver runs before applying.
func (c Config) Validate() error {
	_, err := c.renderAll()
	_, bfdErr := c.BFD.render()
	_, raErr := renderRAIntervals(c.RAIntervals)
	return errors.Join(err, bfdErr, raErr)
}

// block is one `router bgp` stanza: its header, its lines in the router
// context and in `address-family ipv4 unicast`, in the order FRR needs them
// to be entered.
type block struct {
	vrf    string
	asn    uint32
	router []string
	af     []string // address-family ipv4 unicast
	af6    []string // address-family ipv6 unicast
	evpn   []string // address-family l2vpn evpn (evpn.go)
}

func (b block) header() string {
	if b.vrf == DefaultVRF {
		return fmt.Sprintf("router bgp %d", b.asn)
	}
	return fmt.Sprintf("router bgp %d vrf %s", b.asn, b.vrf)
}

// render turns the configuration into FRR's normal form (the lines exactly
// as `show running-config` prints them), default instance first.
func (c Config) render() ([]block, error) {
	var errs []error
	byVRF := map[string]*block{}
	var order []string
	for _, in := range c.Instances {
		b, err := renderInstance(in)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if byVRF[b.vrf] != nil {
			errs = append(errs, fmt.Errorf("BGP instance for VRF %q is configured twice", b.vrf))
			continue
		}
		byVRF[b.vrf] = b
		order = append(order, b.vrf)
	}
	if len(order) > 0 && byVRF[DefaultVRF] == nil {
		errs = append(errs, errors.New("a BGP VRF instance needs the default instance (BGPGlobal ASNum) too"))
	}
	errs = append(errs, c.renderAggregates(byVRF[DefaultVRF])...)
	errs = append(errs, c.checkGroupFamilies()...)
	seen := map[string]bool{}
	groups := map[string][]string{} // vrf -> peer groups in first-use order
	clusterIDs := map[string]uint32{}
	for _, n := range c.Neighbors {
		vrf := vrfOf(n.VRF)
		b := byVRF[vrf]
		if b == nil {
			errs = append(errs, fmt.Errorf("neighbor %s: no BGP instance for VRF %q (set its ASNum first)", n.name(), vrf))
			continue
		}
		key := vrf + "|" + n.name()
		if seen[key] {
			errs = append(errs, fmt.Errorf("neighbor %s in VRF %q is configured twice", n.name(), vrf))
			continue
		}
		seen[key] = true
		if n.RouteReflectorClusterId != 0 {
			if id, ok := clusterIDs[vrf]; ok && id != n.RouteReflectorClusterId {
				errs = append(errs, fmt.Errorf("neighbor %s: RouteReflectorClusterId %d differs from another neighbor's %d; FRR has one cluster id per BGP instance", n.name(), n.RouteReflectorClusterId, id))
				continue
			}
			clusterIDs[vrf] = n.RouteReflectorClusterId
		}
		if n.PeerGroup != "" && !slices.Contains(groups[vrf], n.PeerGroup) {
			groups[vrf] = append(groups[vrf], n.PeerGroup)
		}
		router, af, err := renderNeighbor(n, b.asn)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.router = append(b.router, router...)
		placeFamilies(b, n, af)
	}
	if err := c.EVPN.render(byVRF); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]block, 0, len(order))
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == DefaultVRF:
			return -1
		case b == DefaultVRF:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, vrf := range order {
		b := *byVRF[vrf]
		// Instance-wide lines go first, then peer-group definitions: members
		// can only join a group that exists.
		var head []string
		if id, ok := clusterIDs[vrf]; ok {
			head = append(head, "bgp cluster-id "+netip.AddrFrom4([4]byte{byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}).String())
		}
		var groupAF, groupAF6 []string
		for _, g := range groups[vrf] {
			head = append(head, "neighbor "+g+" peer-group")
			i := slices.IndexFunc(c.PeerGroups, func(pg Neighbor) bool { return pg.Name == g })
			if i < 0 {
				continue // checked alone, without its group
			}
			router, af, err := renderPeer(c.PeerGroups[i], "neighbor "+g+" ", b.asn)
			if err != nil {
				return nil, fmt.Errorf("peer group %s: %w", g, err)
			}
			head = append(head, router...)
			groupAF, groupAF6 = placeGroupFamilies(c.PeerGroups[i], af, groupAF, groupAF6)
		}
		b.af = insertAfterGlobals(b.af, groupAF)
		b.af6 = insertAfterGlobals(b.af6, groupAF6)
		for _, g := range groups[vrf] {
			if seen[vrf+"|"+g] {
				return nil, fmt.Errorf("peer group %s: a neighbor in VRF %q has that name", g, vrf)
			}
		}
		b.router = insertAfterGlobals(b.router, head)
		out = append(out, b)
	}
	return out, nil
}

// insertAfterGlobals puts extra lines after the instance's own settings and
// before the first neighbor line.
func insertAfterGlobals(lines, extra []string) []string {
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "neighbor ") })
	if i < 0 {
		i = len(lines)
	}
	return slices.Concat(lines[:i], extra, lines[i:])
}

func renderInstance(in Instance) (*block, error) {
	vrf := vrfOf(in.VRF)
	if vrf != DefaultVRF && !wordRE.MatchString(vrf) {
		return nil, fmt.Errorf("VRF name %q: use letters, digits and _.:@/+- only", vrf)
	}
	asn, err := ParseAS(in.ASNum)
	if err != nil {
		return nil, fmt.Errorf("BGP instance %q: ASNum: %w", vrf, err)
	}
	b := &block{vrf: vrf, asn: asn}
	if in.RouterID != "" && in.RouterID != "0.0.0.0" {
		a, err := netip.ParseAddr(in.RouterID)
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("BGP instance %q: RouterId %q is not an IPv4 address", vrf, in.RouterID)
		}
		b.router = append(b.router, "bgp router-id "+a.String())
	}
	// FlexSwitch has no "policy required" rule: without a policy a session
	// exchanges every route, so FRR's RFC 8212 default is turned off.
	b.router = append(b.router, "no bgp ebgp-requires-policy")
	if in.EBGPAllowMultipleAS {
		b.router = append(b.router, "bgp bestpath as-path multipath-relax")
	}
	if in.Disabled {
		b.router = append(b.router, "bgp shutdown")
	}
	for _, r := range in.Redistribution {
		if r.Policy != "" && !wordRE.MatchString(r.Policy) {
			return nil, fmt.Errorf("BGP instance %q: redistribution policy %q is not a valid route-map name", vrf, r.Policy)
		}
		for _, src := range strings.Split(r.Sources, ",") {
			proto, ok := map[string]string{"connected": "connected", "static": "static", "ospf": "ospf"}[strings.ToLower(strings.TrimSpace(src))]
			if !ok {
				return nil, fmt.Errorf("BGP instance %q: redistribution source %q: use CONNECTED, STATIC or OSPF", vrf, src)
			}
			line := "redistribute " + proto
			if r.Policy != "" {
				line += " route-map " + r.Policy
			}
			if slices.ContainsFunc(b.af, func(l string) bool {
				return l == "redistribute "+proto || strings.HasPrefix(l, "redistribute "+proto+" ")
			}) {
				return nil, fmt.Errorf("BGP instance %q: source %s is redistributed twice", vrf, proto)
			}
			b.af = append(b.af, line)
			b.af6 = append(b.af6, line)
		}
	}
	// Without UseMultiplePaths BGP installs one path, whatever the counts say.
	ebgp, ibgp := uint32(1), uint32(1)
	if in.UseMultiplePaths {
		ebgp, ibgp = max(in.EBGPMaxPaths, 1), max(in.IBGPMaxPaths, 1)
	}
	if ebgp > 256 || ibgp > 256 {
		return nil, fmt.Errorf("BGP instance %q: at most 256 ECMP paths", vrf)
	}
	b.af = append(b.af, fmt.Sprintf("maximum-paths %d", ebgp), fmt.Sprintf("maximum-paths ibgp %d", ibgp))
	return b, nil
}

func renderNeighbor(n Neighbor, localAS uint32) (router, af []string, err error) {
	name := n.name()
	fail := func(format string, a ...any) ([]string, []string, error) {
		return nil, nil, fmt.Errorf("neighbor %s: %s", name, fmt.Sprintf(format, a...))
	}
	unnumbered := false
	switch {
	case n.NeighborAddress != "":
		a, err := netip.ParseAddr(n.NeighborAddress)
		if err != nil || a.Is4() == n.IPv6 || a.Zone() != "" {
			return fail("NeighborAddress %q is not an %s address", n.NeighborAddress, familyName(n.IPv6))
		}
		if n.IntfRef != "" && !wordRE.MatchString(n.IntfRef) {
			return fail("IntfRef %q is not an interface name", n.IntfRef)
		}
	case n.IntfRef != "":
		if !wordRE.MatchString(n.IntfRef) {
			return fail("IntfRef %q is not an interface name", n.IntfRef)
		}
		unnumbered = true
	default:
		return nil, nil, errors.New("neighbor: NeighborAddress or IntfRef is required")
	}
	p := "neighbor " + name + " "
	if n.PeerGroup != "" && !wordRE.MatchString(n.PeerGroup) {
		return fail("PeerGroup %q: use letters, digits and _.:@/+- only", n.PeerGroup)
	}
	peerAS, err := remoteAS(n.PeerAS)
	if err != nil {
		return fail("PeerAS: %v", err)
	}
	switch {
	case unnumbered && peerAS != "":
		router = append(router, fmt.Sprintf("%sinterface remote-as %s", p, peerAS))
		if n.PeerGroup != "" {
			router = append(router, p+"peer-group "+n.PeerGroup)
		}
	case unnumbered:
		if n.PeerGroup == "" {
			return fail("PeerAS or PeerGroup is required")
		}
		router = append(router, p+"interface peer-group "+n.PeerGroup)
	case peerAS != "":
		router = append(router, fmt.Sprintf("%sremote-as %s", p, peerAS))
		if n.PeerGroup != "" {
			router = append(router, p+"peer-group "+n.PeerGroup)
		}
	case n.PeerGroup != "":
		router = append(router, p+"peer-group "+n.PeerGroup)
	default:
		return fail("PeerAS is required (or a PeerGroup that sets it)")
	}
	more, af, err := renderPeer(n, p, localAS)
	if err != nil {
		return fail("%v", err)
	}
	return append(router, more...), af, nil
}

// remoteAS is a peer AS as FRR's remote-as takes it: asplain, external or
// internal; "" for none.
func remoteAS(s string) (string, error) {
	switch s {
	case "", "external", "internal":
		return s, nil
	}
	as, err := ParseAS(s)
	if err != nil {
		return "", err
	}
	return strconv.FormatUint(uint64(as), 10), nil
}

// renderPeer renders the settings a neighbor and a peer group share, each
// line starting with p ("neighbor <name> "); a peer group's own lines
// (its definition, its remote-as) come first.
func renderPeer(n Neighbor, p string, localAS uint32) (router, af []string, err error) {
	fail := func(format string, a ...any) ([]string, []string, error) {
		return nil, nil, fmt.Errorf(format, a...)
	}
	if n.Name != "" {
		if !wordRE.MatchString(n.Name) {
			return fail("name %q: use letters, digits and _.:@/+- only", n.Name)
		}
		as, err := remoteAS(n.PeerAS)
		if err != nil {
			return fail("PeerAS: %v", err)
		}
		if as != "" {
			router = append(router, p+"remote-as "+as)
		}
	}
	if n.LocalAS != "" {
		las, err := ParseAS(n.LocalAS)
		if err != nil {
			return fail("LocalAS: %v", err)
		}
		if las != localAS {
			router = append(router, fmt.Sprintf("%slocal-as %d", p, las))
		}
	}
	if n.Description != "" {
		if strings.ContainsAny(n.Description, "\r\n") || len(n.Description) > 80 {
			return fail("Description must be one line of at most 80 characters")
		}
		// FRR keeps the words of a description, split at blanks (not at
		// other white space), one blank apart.
		words := strings.FieldsFunc(n.Description, func(r rune) bool { return r == ' ' })
		router = append(router, p+"description "+strings.Join(words, " "))
	}
	if n.Disabled {
		router = append(router, p+"shutdown")
	}
	if n.AuthPassword != "" {
		if strings.ContainsAny(n.AuthPassword, " \t\r\n!#") || len(n.AuthPassword) > 80 {
			return fail("AuthPassword must be at most 80 characters without spaces, '!' or '#'")
		}
		router = append(router, p+"password "+n.AuthPassword)
	}
	if n.BfdEnable {
		router = append(router, p+"bfd")
		if n.BfdSessionParam != "" { // "": bfdd's defaults
			if !wordRE.MatchString(n.BfdSessionParam) {
				return fail("BfdSessionParam %q: use letters, digits and _.:@/+- only", n.BfdSessionParam)
			}
			router = append(router, p+"bfd profile "+n.BfdSessionParam)
		}
	}
	if n.MultiHopEnable {
		ttl := n.MultiHopTTL
		if ttl == 0 {
			ttl = 255
		}
		router = append(router, fmt.Sprintf("%sebgp-multihop %d", p, ttl))
	} else if n.MultiHopTTL != 0 {
		return fail("MultiHopTTL needs MultiHopEnable")
	}
	if n.UpdateSource != "" {
		if a, err := netip.ParseAddr(n.UpdateSource); err == nil {
			router = append(router, p+"update-source "+a.String())
		} else if wordRE.MatchString(n.UpdateSource) {
			router = append(router, p+"update-source "+n.UpdateSource)
		} else {
			return fail("UpdateSource %q is neither an address nor an interface", n.UpdateSource)
		}
	}
	if n.HoldTime != 0 || n.KeepaliveTime != 0 {
		// FRR sets both together; the missing one follows RFC 4271's 1:3.
		ka, hold := n.KeepaliveTime, n.HoldTime
		if hold == 0 {
			hold = 3 * ka
		}
		if ka == 0 {
			ka = hold / 3
		}
		if hold > 65535 || ka > 65535 || (hold != 0 && hold < 3) || ka > hold {
			return fail("HoldTime %d / KeepaliveTime %d: hold must be 0 or 3..65535 and not below keepalive", n.HoldTime, n.KeepaliveTime)
		}
		router = append(router, fmt.Sprintf("%stimers %d %d", p, ka, hold))
	}
	if n.ConnectRetryTime != 0 {
		if n.ConnectRetryTime > 65535 {
			return fail("ConnectRetryTime %d exceeds 65535", n.ConnectRetryTime)
		}
		router = append(router, fmt.Sprintf("%stimers connect %d", p, n.ConnectRetryTime))
	}

	if n.RouteReflectorClient {
		af = append(af, p+"route-reflector-client")
	}
	if n.NextHopSelf {
		af = append(af, p+"next-hop-self")
	}
	if n.AddPathsMaxTx > 0 {
		// FRR 8.4 advertises all paths or none; it has no per-count limit.
		af = append(af, p+"addpath-tx-all-paths")
	}
	if !n.AddPathsRx {
		af = append(af, p+"disable-addpath-rx")
	}
	af = append(af, softReconfigLines(n, p)...)
	if n.MaxPrefixes > 0 {
		line := fmt.Sprintf("%smaximum-prefix %d", p, n.MaxPrefixes)
		pct := n.MaxPrefixesThresholdPct
		if pct > 100 {
			return fail("MaxPrefixesThresholdPct %d exceeds 100", pct)
		}
		if pct != 0 && pct != 75 { // FRR's default, which it does not print
			line += fmt.Sprintf(" %d", pct)
		}
		switch {
		case !n.MaxPrefixesDisconnect:
			line += " warning-only"
		case n.MaxPrefixesRestartTimer > 0:
			line += fmt.Sprintf(" restart %d", (int(n.MaxPrefixesRestartTimer)+59)/60)
		}
		af = append(af, line)
	}
	filters, err := filterLines(n, p)
	if err != nil {
		return fail("%v", err)
	}
	return router, append(af, filters...), nil
}
