package linux

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// ipv4RouteDriver is FlexSwitch's IPv4Route (the compatibility issue
// declares the kind: DestinationNw and NetworkMask as key, Cost, NullRoute,
// and the NextHop list of records NextHopIp, NextHopIntRef, Weight) on the
// Linux backend: a proto static route in the VRF's table, multipath when
// there are several next hops, a blackhole route for NullRoute. Cost is the
// route's metric, so that routes of different costs to one destination
// coexist as they do in FlexSwitch.
var ipv4RouteDriver = &driver{
	check: func(b *Backend, c changeView) error {
		rc, err := b.routeConfig(c.after())
		if err != nil {
			return err
		}
		return b.k.CheckRoute(rc)
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		rc, err := b.routeConfig(after)
		if err != nil {
			return err
		}
		if before != nil {
			// A new cost is another kernel route (the metric is part of a
			// route's identity): the old one goes first.
			if old, err := b.routeConfig(before); err == nil && (old.Metric != rc.Metric || old.Dst != rc.Dst || old.VRF != rc.VRF) {
				if err := tx.RemoveRoute(old); err != nil {
					return err
				}
			}
		}
		return tx.EnsureRoute(rc)
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		rc, err := b.routeConfig(before)
		if err != nil {
			return err
		}
		return tx.RemoveRoute(rc)
	},
}

// routeConfig is an IPv4Route or IPv6Route in the kernel layer's terms.
func (b *Backend) routeConfig(o model.Object) (RouteConfig, error) {
	dst, ok := model.RoutePrefix(o)
	if !ok {
		return RouteConfig{}, &Refusal{Field: "NetworkMask", Msg: fmt.Sprintf("%s/%s is not a network and a contiguous mask", o.Str("DestinationNw"), o.Str("NetworkMask"))}
	}
	var err error
	// IPv4Route and IPv6Route have no VRF (as FlexSwitch's): their routes
	// are the default VRF's (RouteConfig.VRF ""). The kernel gives an
	// IPv6 route of metric 0 its default, 1024: Cost 0 is that one.
	metric := int(o.Int("Cost"))
	if dst.Addr().Is6() && metric == 0 {
		metric = ipv6DefaultMetric
	}
	rc := RouteConfig{Dst: dst, Metric: metric, Blackhole: o.Bool("NullRoute")}
	for _, hop := range records(o, "NextHop") {
		nh := NextHop{Weight: int(hop.Int("Weight"))}
		if ip := hop.Str("NextHopIp"); ip != "" {
			if nh.Gateway, err = netip.ParseAddr(ip); err != nil {
				return RouteConfig{}, &Refusal{Field: "NextHop", Msg: fmt.Sprintf("NextHopIp %q: %v", ip, err)}
			}
		}
		if ref := hop.Str("NextHopIntRef"); ref != "" {
			dev, lb, err := b.netdevOf(ref)
			if err != nil {
				return RouteConfig{}, err
			}
			if lb {
				dev = b.k.LoopbackNetdev(LoopbackConfig{Name: dev, VRF: rc.VRF})
			}
			nh.Netdev = dev
		}
		rc.NextHops = append(rc.NextHops, nh)
	}
	return rc, nil
}

// records reads a list of records (the model holds them as []Object; a
// decoded JSON document has []any of maps).
func records(o model.Object, name string) []model.Object {
	switch v := o[name].(type) {
	case []model.Object:
		return v
	case []any:
		out := make([]model.Object, 0, len(v))
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, model.Object(m))
			}
		}
		return out
	}
	return nil
}

// RouteTable is state/IPv4Routes: the IPv4 unicast and blackhole routes of
// the kernel, of the default VRF and of every VRF swmgr made, in
// FlexSwitch's IPv4RouteState form. Protocol is CONNECTED for the kernel's
// own (proto kernel) routes, STATIC for swmgr's, else the kernel's name of
// the protocol in capitals (BGP for FRR's). Local and broadcast routes are
// not listed.
func (b *Backend) RouteTable(ctx context.Context) ([]model.Object, error) {
	return b.routeTable(netlink.FAMILY_V4)
}

// RouteTableV6 is state/IPv6Routes: RouteTable's IPv6 routes, without the
// link-local and multicast routes of every interface.
func (b *Backend) RouteTableV6(ctx context.Context) ([]model.Object, error) {
	return b.routeTable(netlink.FAMILY_V6)
}

// ipv6DefaultMetric is the metric the kernel gives an IPv6 route of none.
const ipv6DefaultMetric = 1024

func (b *Backend) routeTable(family int) ([]model.Object, error) {
	vrfs := []string{"default"}
	for _, v := range b.appliedOf("Vrf") {
		vrfs = append(vrfs, v.Str("Vrf"))
	}
	var out []model.Object
	for _, vrf := range vrfs {
		routes, err := b.k.RoutesOf(vrf, family)
		if err != nil {
			return nil, fmt.Errorf("routes of VRF %s: %w", vrf, err)
		}
		for _, r := range routes {
			p, err := netip.ParsePrefix(r.Dst)
			if err != nil {
				continue
			}
			proto := strings.ToUpper(r.Protocol)
			switch r.Protocol {
			case "kernel":
				proto = "CONNECTED"
			case "static":
				proto = "STATIC"
			}
			hops := []model.Object{}
			reachable := len(r.NextHops) == 1 && r.NextHops[0] == "blackhole"
			for _, h := range r.Hops {
				intf := b.ports.Port(h.Netdev)
				if intf == "" {
					intf = h.Netdev
				}
				gw := h.Gateway
				if gw == "" {
					gw = netip.IPv4Unspecified().String()
					if p.Addr().Is6() {
						gw = netip.IPv6Unspecified().String()
					}
				}
				reachable = reachable || h.Netdev != ""
				hops = append(hops, model.Object{"NextHopIp": gw, "NextHopIntRef": intf, "Weight": int64(h.Weight)})
			}
			r := model.Object{"DestinationNw": p.String(), "Protocol": proto,
				"IsNetworkReachable": reachable, "RouteCreatedTime": "", "RouteUpdatedTime": "", "NextHopList": hops, "PolicyList": []string{}}
			if p.Addr().Is4() {
				r["NetworkMask"] = dottedMask(p.Bits())
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func dottedMask(bits int) string {
	m := net.CIDRMask(bits, 32)
	return net.IP(m).String()
}
