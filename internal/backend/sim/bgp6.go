package sim

import (
	"context"
	"maps"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
)

// The simulated switch's actions. Its BGP sessions never come up and no
// neighbour answers it, so a reset finds the configured neighbor it names
// (or says there is none) and has nothing more to do, and its neighbour
// tables are empty: an ARP or NDP action by address finds no entry, one by
// interface has none to act on.

// DaemonActions are the simulated daemons' actions: the BGP resets.
func (s *Sim) DaemonActions() map[string]*bind.Action {
	reset := func(kind, field, arg string) *bind.Action {
		return &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
			value := c.Fields.Str(arg)
			s.mu.Lock()
			n := 0
			for _, o := range s.applied[kind] {
				if o.Str(field) == value && (field == "NeighborAddress" || o.Str("NeighborAddress") == "") {
					n++
				}
			}
			s.mu.Unlock()
			if n == 0 {
				return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "%s: no %s with %s %s: nothing was reset", c.Kind.Name, kind, field, value)
			}
			return bind.Result{DryRun: c.DryRun}, nil
		}}
	}
	out := map[string]*bind.Action{
		"ResetBGPv4NeighborByIPAddr":    reset("BGPv4Neighbor", "NeighborAddress", "IPAddr"),
		"ResetBGPv4NeighborByInterface": reset("BGPv4Neighbor", "IntfRef", "IntfRef"),
		"ResetBGPv6NeighborByIPAddr":    reset("BGPv6Neighbor", "NeighborAddress", "IPAddr"),
		"ResetBGPv6NeighborByInterface": reset("BGPv6Neighbor", "IntfRef", "IntfRef"),
	}
	maps.Copy(out, s.bfdActions()) // bfd.go
	return out
}

// DataplaneActions are the simulated dataplane's actions: the ARP and NDP
// ones, over its empty neighbour tables, and ClearMacTable (lag.go).
func (s *Sim) DataplaneActions() map[string]*bind.Action {
	byAddr := &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
		return bind.Result{}, apierr.NotFound(apierr.CodeNotFound, c.Kind.Name, "%s: the neighbour table has no learned entry for address %s (no neighbour answers a simulated switch)", c.Kind.Name, c.Fields.Str("IpAddr"))
	}}
	byIntf := &bind.Action{Run: func(ctx context.Context, c bind.Call) (bind.Result, error) {
		return bind.Result{DryRun: c.DryRun}, nil
	}}
	out := map[string]*bind.Action{"ClearMacTable": {Run: s.clearMacTable}}
	for _, name := range []string{"ArpDeleteByIPv4Addr", "ArpRefreshByIPv4Addr", "NdpDeleteByIPv6Addr", "NdpRefreshByIPv6Addr"} {
		out[name] = byAddr
	}
	for _, name := range []string{"ArpDeleteByIfName", "ArpRefreshByIfName", "NdpDeleteByIfName", "NdpRefreshByIfName"} {
		out[name] = byIntf
	}
	return out
}
