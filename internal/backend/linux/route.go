package linux

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteConfig is a static route (IPv4 or IPv6, by Dst's family) in a VRF;
// several next hops make a multipath route.
type RouteConfig struct {
	VRF      string
	Dst      netip.Prefix
	NextHops []NextHop
	Metric   int
	// Blackhole drops the traffic (FlexSwitch's NullRoute); no next hops.
	Blackhole bool
}

// NextHop is a gateway, a device, or both.
type NextHop struct {
	Gateway netip.Addr
	Netdev  string
	Weight  int // 1..256; 0 is 1
}

// CheckRoute is the pure check of a route.
func (k *Kernel) CheckRoute(c RouteConfig) error {
	if !c.Dst.IsValid() {
		return refuse("DestinationNw", "%s is not a prefix", c.Dst)
	}
	if c.Dst.Masked() != c.Dst {
		return refuse("DestinationNw", "%s has host bits set; use %s", c.Dst, c.Dst.Masked())
	}
	if c.Blackhole {
		if len(c.NextHops) > 0 {
			return refuse("NullRoute", "route %s: a null route has no next hop", c.Dst)
		}
		return nil
	}
	if len(c.NextHops) == 0 {
		return refuse("NextHopList", "route %s has no next hop", c.Dst)
	}
	for _, nh := range c.NextHops {
		if !nh.Gateway.IsValid() && nh.Netdev == "" {
			return refuse("NextHopList", "route %s: a next hop needs a gateway or an interface", c.Dst)
		}
		if nh.Gateway.IsValid() && nh.Gateway.Is4() != c.Dst.Addr().Is4() {
			return refuse("NextHopList", "route %s: next hop %s is of the other address family", c.Dst, nh.Gateway)
		}
		if nh.Weight < 0 || nh.Weight > 256 {
			return refuse("NextHopList", "route %s: weight %d is not 1..256", c.Dst, nh.Weight)
		}
	}
	return nil
}

// kernelRoute builds the netlink route of c in the VRF's table.
func (k *Kernel) kernelRoute(c RouteConfig) (*netlink.Handle, *netlink.Route, error) {
	h, err := k.handleOf(c.VRF)
	if err != nil {
		return nil, nil, err
	}
	r := &netlink.Route{
		Dst:      ipNet(c.Dst),
		Table:    k.VRFTable(c.VRF),
		Protocol: unix.RTPROT_STATIC,
		Priority: c.Metric,
	}
	if c.Blackhole {
		r.Type = unix.RTN_BLACKHOLE
		return h, r, nil
	}
	hops := make([]*netlink.NexthopInfo, 0, len(c.NextHops))
	for _, nh := range c.NextHops {
		info := &netlink.NexthopInfo{}
		if nh.Gateway.IsValid() {
			info.Gw = nh.Gateway.AsSlice()
		}
		if nh.Netdev != "" {
			l, err := h.LinkByName(nh.Netdev)
			if err != nil {
				return nil, nil, fmt.Errorf("route %s: next hop interface %s is not in VRF %s: %w", c.Dst, nh.Netdev, vrfName(c.VRF), err)
			}
			info.LinkIndex = l.Attrs().Index
		}
		if nh.Weight > 1 {
			info.Hops = nh.Weight - 1
		}
		hops = append(hops, info)
	}
	if len(hops) == 1 {
		r.Gw, r.LinkIndex = hops[0].Gw, hops[0].LinkIndex
	} else {
		r.MultiPath = hops
	}
	return h, r, nil
}

// ipNet is a prefix in netlink's terms, of its own family.
func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func vrfName(v string) string {
	if isDefaultVRF(v) {
		return "default"
	}
	return v
}

// findRoute returns the route to dst in table with the given metric.
func findRoute(h *netlink.Handle, table int, dst *net.IPNet, metric int) (*netlink.Route, error) {
	fam := netlink.FAMILY_V4
	if dst.IP.To4() == nil {
		fam = netlink.FAMILY_V6
	}
	routes, err := h.RouteListFiltered(fam, &netlink.Route{Table: table, Dst: dst}, netlink.RT_FILTER_TABLE|netlink.RT_FILTER_DST)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	for i := range routes {
		if routes[i].Priority == metric && (routes[i].Type == unix.RTN_UNICAST || routes[i].Type == unix.RTN_BLACKHOLE) && routes[i].Dst != nil && routes[i].Dst.String() == dst.String() {
			return &routes[i], nil
		}
	}
	return nil, nil
}

// sameRoute compares what swmgr sets of two routes.
func sameRoute(a, b *netlink.Route) bool {
	return a.Protocol == b.Protocol && routeType(a) == routeType(b) && hopsKey(a) == hopsKey(b)
}

// routeType is a route's type; netlink leaves it 0 for unicast when
// building one.
func routeType(r *netlink.Route) int {
	if r.Type == 0 {
		return unix.RTN_UNICAST
	}
	return r.Type
}

func hopsKey(r *netlink.Route) string {
	var keys []string
	if len(r.MultiPath) == 0 {
		keys = append(keys, fmt.Sprintf("%v/%d/0", r.Gw, r.LinkIndex))
	}
	for _, nh := range r.MultiPath {
		keys = append(keys, fmt.Sprintf("%v/%d/%d", nh.Gw, nh.LinkIndex, nh.Hops))
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// EnsureRoute installs the route, replacing one to the same destination
// (and metric) in the table; the inverse puts the replaced one back.
func (tx *Tx) EnsureRoute(c RouteConfig) error {
	h, want, err := tx.k.kernelRoute(c)
	if err != nil {
		return err
	}
	cur, err := findRoute(h, want.Table, want.Dst, want.Priority)
	if err != nil {
		return err
	}
	if cur != nil && sameRoute(cur, want) {
		return nil
	}
	return tx.change(fmt.Sprintf("route %s in VRF %s via %s", c.Dst, vrfName(c.VRF), hopsKey(want)),
		func() error { return h.RouteReplace(want) },
		func() error {
			if cur == nil {
				return h.RouteDel(want)
			}
			return h.RouteReplace(cur)
		})
}

// RemoveRoute deletes the route to c.Dst if it is swmgr's (static).
func (tx *Tx) RemoveRoute(c RouteConfig) error {
	h, err := tx.k.handleOf(c.VRF)
	if err != nil {
		return nil
	}
	dst := ipNet(c.Dst)
	cur, err := findRoute(h, tx.k.VRFTable(c.VRF), dst, c.Metric)
	if err != nil || cur == nil || cur.Protocol != unix.RTPROT_STATIC {
		return err
	}
	saved := *cur
	return tx.change(fmt.Sprintf("delete route %s in VRF %s", c.Dst, vrfName(c.VRF)),
		func() error { return h.RouteDel(&saved) },
		func() error { return h.RouteAdd(&saved) })
}

// RouteState is one route the kernel has (state/IPv4Routes, state/IPv6Routes).
type RouteState struct {
	VRF      string
	Dst      string
	NextHops []string // gateway or "dev <netdev>", with "weight N" if not 1
	Hops     []RouteHop
	Protocol string
	Metric   int
}

// RouteHop is one next hop of a route the kernel has.
type RouteHop struct {
	Gateway string // "" for none
	Netdev  string
	Weight  int
}

// Routes lists the kernel's unicast IPv4 routes of a VRF.
func (k *Kernel) Routes(vrf string) ([]RouteState, error) {
	return k.RoutesOf(vrf, netlink.FAMILY_V4)
}

// RoutesOf lists the kernel's unicast routes of a family (netlink.FAMILY_V4
// or FAMILY_V6) of a VRF; for IPv6 not the link-local (fe80::/64) or
// multicast ones, which every interface has.
func (k *Kernel) RoutesOf(vrf string, family int) ([]RouteState, error) {
	h, err := k.handleOf(vrf)
	if err != nil {
		return nil, err
	}
	routes, err := h.RouteListFiltered(family, &netlink.Route{Table: k.VRFTable(vrf)}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	links, err := h.LinkList()
	if err != nil {
		return nil, err
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	var out []RouteState
	for _, r := range routes {
		if r.Type != unix.RTN_UNICAST && r.Type != unix.RTN_BLACKHOLE {
			continue
		}
		if r.Dst != nil && r.Dst.IP.To4() == nil && (r.Dst.IP.IsLinkLocalUnicast() || r.Dst.IP.IsMulticast()) {
			continue
		}
		any := "0.0.0.0/0"
		if family == netlink.FAMILY_V6 {
			any = "::/0"
		}
		st := RouteState{VRF: vrfName(vrf), Dst: any, Protocol: r.Protocol.String(), Metric: r.Priority}
		if r.Dst != nil {
			st.Dst = r.Dst.String()
		}
		hop := func(gw net.IP, idx, hops int) string {
			h := RouteHop{Netdev: names[idx], Weight: hops + 1}
			if gw != nil {
				h.Gateway = gw.String()
			}
			st.Hops = append(st.Hops, h)
			var parts []string
			if gw != nil {
				parts = append(parts, gw.String())
			}
			if idx != 0 {
				parts = append(parts, "dev "+names[idx])
			}
			if hops > 0 {
				parts = append(parts, fmt.Sprintf("weight %d", hops+1))
			}
			return strings.Join(parts, " ")
		}
		switch {
		case r.Type == unix.RTN_BLACKHOLE:
			st.NextHops = []string{"blackhole"}
		case len(r.MultiPath) == 0:
			st.NextHops = []string{hop(r.Gw, r.LinkIndex, 0)}
		}
		for _, nh := range r.MultiPath {
			st.NextHops = append(st.NextHops, hop(nh.Gw, nh.LinkIndex, nh.Hops))
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b RouteState) int { return strings.Compare(a.Dst, b.Dst) })
	return out, nil
}
