package linux

import (
	"context"
	"maps"
	"net/netip"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// BGP over IPv6, the aggregates, BGP's route tables and the session
// resets, run by the same FRR as BGP over IPv4 (bgp.go): BGPv6Neighbor,
// BGPv6PeerGroup, BGPv4Aggregate and BGPv6Aggregate are part of the one
// configuration the BGP stage sends to FRR.

// addBGPv6 adds the IPv6 neighbors and groups and the aggregates of objs
// to cfg; a neighbor whose VRF has no instance waits for it, as an IPv4 one
// does, and the aggregates wait for the default instance.
func addBGPv6(cfg *frr.Config, objs map[string]map[string]model.Object, instances map[string]bool) {
	if len(cfg.Instances) == 0 {
		return
	}
	for _, key := range sortedKeys(objs["BGPv6Neighbor"]) {
		n := neighborOf(objs["BGPv6Neighbor"][key])
		n.IPv6 = true
		if instances[bgpVRF(n.VRF)] {
			cfg.Neighbors = append(cfg.Neighbors, n)
		}
	}
	for _, key := range sortedKeys(objs["BGPv6PeerGroup"]) {
		g := neighborOf(objs["BGPv6PeerGroup"][key])
		g.Name, g.IPv6 = key, true
		cfg.PeerGroups = append(cfg.PeerGroups, g)
	}
	for _, kind := range []string{"BGPv4Aggregate", "BGPv6Aggregate"} {
		for _, key := range sortedKeys(objs[kind]) {
			cfg.Aggregates = append(cfg.Aggregates, aggregateOf(objs[kind][key]))
		}
	}
}

// portName is the interface's name in the model: a port's for its netdev.
func (b *Backend) portName(dev string) string {
	if port := b.ports.Port(dev); port != "" {
		return port
	}
	return dev
}

func aggregateOf(o model.Object) frr.Aggregate {
	return frr.Aggregate{Prefix: o.Str("IpPrefix"), SummaryOnly: o.Bool("SendSummaryOnly"), ASSet: o.Bool("GenerateASSet")}
}

// familyCounts are the prefix counts of a neighbor's own family: IPv6
// unicast for a BGPv6Neighbor, else IPv4 unicast.
func familyCounts(n frr.NeighborState, v6 bool) frr.PrefixCounts {
	if v6 {
		return n.IPv6Unicast
	}
	return n.IPv4Unicast
}

// setPrefixCounts fills the state's prefix counters: received before
// inbound policy, accepted after it (internal/frr/policyfamily.go).
func setPrefixCounts(st model.Object, c frr.PrefixCounts) {
	setFamilyCounts(st, "", c)
}

// setFamilyCounts fills the counters of one family, their names starting
// with prefix ("IPv6": an unnumbered BGPv4Neighbor's IPv6 unicast ones).
func setFamilyCounts(st model.Object, prefix string, c frr.PrefixCounts) {
	st[prefix+"PrefixesReceived"] = int64(c.Received)
	st[prefix+"PrefixesAccepted"] = int64(c.Accepted)
	st[prefix+"PrefixesInstalled"] = int64(c.Installed)
	st[prefix+"PrefixesAdvertised"] = int64(c.Advertised)
}

// bgpRouteLister lists BGP's table of one family from FRR.
func (b *Backend) bgpRouteLister(v6 bool) func(context.Context) ([]model.Object, error) {
	return func(ctx context.Context) ([]model.Object, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		routes, err := b.bgp.router.BGPRoutes(ctx, v6)
		if err != nil {
			return nil, unavailable(kindBGP, "FRR", err)
		}
		// FRR names a path from an unnumbered neighbor by the neighbor's
		// link-local address: its interface says which one it is.
		_, neighbors, err := b.bgp.refresh()
		if err != nil {
			return nil, err
		}
		intfOf := map[string]string{}
		for _, n := range neighbors {
			if n.IntfRef != "" && n.PeerAddress != "" {
				intfOf[n.VRF+"|"+n.PeerAddress] = b.portName(n.IntfRef)
			}
		}
		out := make([]model.Object, 0, len(routes))
		for _, r := range routes {
			paths := make([]model.Object, 0, len(r.Paths))
			for _, p := range r.Paths {
				peer, hopIntf := p.Peer, ""
				if intf := intfOf[r.VRF+"|"+p.Peer]; intf != "" {
					peer = intf
				}
				if a, err := netip.ParseAddr(p.NextHop); err == nil && a.IsLinkLocalUnicast() {
					hopIntf = intfOf[r.VRF+"|"+p.NextHop]
				}
				paths = append(paths, model.Object{"NextHop": p.NextHop, "NextHopIntf": hopIntf, "Peer": peer, "Path": p.ASPath,
					"LocalPref": int64(p.LocalPref), "MED": int64(p.MED), "Origin": p.Origin, "Best": p.Best, "Multipath": p.Multipath})
			}
			out = append(out, model.Object{"Vrf": r.VRF, "Network": r.Prefix.Addr().String(), "CIDRLen": int64(r.Prefix.Bits()), "Paths": paths})
		}
		return out, nil
	}
}

// bgpActions are the session resets: each finds the configured neighbor
// (of any VRF) the action names and has FRR reset its session.
func (b *Backend) bgpActions() map[string]*bind.Action {
	byAddr := func(kind string) *bind.Action {
		return &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
			return b.resetBGP(ctx, c, kind, "NeighborAddress", c.Fields.Str("IPAddr"))
		}}
	}
	byIntf := func(kind string) *bind.Action {
		return &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
			// The stage keeps the interface's netdev, FRR's name for it.
			dev, err := b.bgpNetdev(c.Fields.Str("IntfRef"))
			if err != nil {
				return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "%s: no %s on %s: %v", c.Kind.Name, kind, c.Fields.Str("IntfRef"), err)
			}
			return b.resetBGP(ctx, c, kind, "IntfRef", dev)
		}}
	}
	return map[string]*bind.Action{
		"ResetBGPv4NeighborByIPAddr":    byAddr("BGPv4Neighbor"),
		"ResetBGPv4NeighborByInterface": byIntf("BGPv4Neighbor"),
		"ResetBGPv6NeighborByIPAddr":    byAddr("BGPv6Neighbor"),
		"ResetBGPv6NeighborByInterface": byIntf("BGPv6Neighbor"),
	}
}

// resetBGP resets the sessions of the neighbors of kind whose field is
// value (a neighbor by interface: NeighborAddress ""), in every VRF.
func (b *Backend) resetBGP(ctx context.Context, c bind.Call, kind, field, value string) (bind.Result, error) {
	b.bgp.mu.Lock()
	var targets [][2]string // VRF, FRR's name of the neighbor
	for _, o := range b.bgp.applied[kind] {
		if o.Str(field) != value || (field == "IntfRef" && o.Str("NeighborAddress") != "") {
			continue
		}
		name := o.Str("NeighborAddress")
		if name == "" {
			name = o.Str("IntfRef") // the netdev, as the stage keeps it
		}
		targets = append(targets, [2]string{bgpVRF(o.Str("Vrf")), name})
	}
	b.bgp.mu.Unlock()
	if len(targets) == 0 {
		return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "%s: no %s with %s %s: nothing was reset", c.Kind.Name, kind, field, value)
	}
	if c.DryRun {
		return bind.Result{DryRun: true}, nil
	}
	for _, t := range targets {
		if err := b.bgp.router.Reset(ctx, t[0], t[1]); err != nil {
			return bind.Result{}, unavailable(c.Kind.Name, "FRR", err)
		}
	}
	b.bgp.forgetState()
	return bind.Result{}, nil
}

// forgetState drops the cached state: the sessions changed.
func (r *bgpRunner) forgetState() {
	r.cacheMu.Lock()
	r.cacheAt = time.Time{}
	r.cacheMu.Unlock()
}

// DaemonActions are the actions the daemons the backend runs answer: the
// BGP session resets, with FRR.
func (b *Backend) DaemonActions() map[string]*bind.Action {
	if b.bgp == nil {
		return nil
	}
	out := b.bgpActions()
	maps.Copy(out, b.bfdActions()) // bfd.go
	return out
}

// daemonLists are the state-only kinds the daemons list: BGP's tables.
func (b *Backend) daemonLists() map[string]func(context.Context) ([]model.Object, error) {
	if b.bgp == nil {
		return nil
	}
	return map[string]func(context.Context) ([]model.Object, error){
		"BGPv4RouteState": b.bgpRouteLister(false),
		"BGPv6RouteState": b.bgpRouteLister(true),
	}
}
