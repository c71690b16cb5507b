package sim

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// The simulated switch's VXLAN and EVPN: the VNIs are kept and shown with
// their VXLAN device (vxlan<VNI>) and the VTEP's address (its source
// interface's IPv4 address); no remote VTEP answers a simulated switch,
// so it learns no remote MAC and receives no EVPN route, and its EVPN
// sessions stay Idle as its BGP sessions do.

// vxlanDrivers are the VXLAN kinds of the simulated dataplane, and the
// EVPN state lists (the Linux backend's dataplane lists them too).
func (s *Sim) vxlanDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"VxlanEndpoint":     {Apply: s.record, State: s.vxlanEndpointState, Replay: true},
		"VxlanInstance":     {Apply: s.record, State: s.vxlanInstanceState, Replay: true},
		"VxlanVtepInstance": {Apply: s.record, Replay: true},
		"EvpnL3Vni":         {Apply: s.record, Replay: true},
		"EvpnVniState":      {List: s.evpnVnis},
		"EvpnMacState":      {List: noNeighbors},
		"EvpnRouteState":    {List: noNeighbors},
	}
}

// evpnDrivers are the EVPN kinds of the simulated BGP.
func (s *Sim) evpnDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"BGPL2vpnEvpn":         {Apply: s.record},
		"BGPL2vpnEvpnNeighbor": {Apply: s.record, State: s.evpnNeighborState},
	}
}

// vtepAddress is the VTEP's address: the IPv4 address of VxlanEndpoint's
// source interface; "" without one. The caller holds s.mu.
func (s *Sim) vtepAddress() string {
	src := s.applied["VxlanEndpoint"]["default"].Str("SourceInterface")
	if src == "" {
		return ""
	}
	for _, in := range s.applied["IPv4Intf"] {
		if in.Str("IntfRef") == src {
			if p, err := netip.ParsePrefix(in.Str("IpAddr")); err == nil {
				return p.Addr().String()
			}
		}
	}
	return ""
}

func (s *Sim) vxlanEndpointState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.Object{"SourceAddress": s.vtepAddress(), "Vnis": int64(len(s.applied["VxlanInstance"]) + len(s.applied["EvpnL3Vni"]))}, nil
}

// VxlanIntfName is the VXLAN device of a VNI, on the simulated switch as
// on Linux.
func VxlanIntfName(vni int64) string { return fmt.Sprintf("vxlan%d", vni) }

func (s *Sim) vxlanInstanceState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up := o.Str("AdminState") == "UP" && s.vtepAddress() != ""
	return model.Object{"OperState": upDown(up), "VxlanIntf": VxlanIntfName(o.Int("Vni"))}, nil
}

// evpnVnis lists EvpnVniState: every configured VNI, L2 and L3, in VNI
// order, with no remote VTEP.
func (s *Sim) evpnVnis(ctx context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	local := s.vtepAddress()
	var out []model.Object
	add := func(o model.Object, typ, vrf string) {
		out = append(out, model.Object{"Vni": o.Int("Vni"), "Type": typ, "VxlanIntf": VxlanIntfName(o.Int("Vni")), "Vrf": vrf,
			"LocalVtep": local, "RemoteVteps": []string{}, "NumRemoteVteps": int64(0), "NumMacs": int64(0), "NumArpNd": int64(0)})
	}
	for _, o := range s.applied["VxlanInstance"] {
		add(o, "L2", "default")
	}
	for _, o := range s.applied["EvpnL3Vni"] {
		add(o, "L3", o.Str("Vrf"))
	}
	slices.SortFunc(out, func(a, b model.Object) int { return int(a.Int("Vni") - b.Int("Vni")) })
	if out == nil {
		out = []model.Object{}
	}
	return out, nil
}

// evpnNeighborState: Idle like the simulated BGP session it rides on (a
// peer group has no session: 0).
func (s *Sim) evpnNeighborState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := model.Object{"PeerAS": "", "SessionState": int64(0), "SessionStateDuration": "0s", "PrefixesReceived": int64(0)}
	name := o.Str("Neighbor")
	for _, n := range s.applied["BGPv4Neighbor"] {
		if n.Str("NeighborAddress") == name || (n.Str("NeighborAddress") == "" && strings.EqualFold(n.Str("IntfRef"), name)) {
			st["PeerAS"], st["SessionState"] = n.Str("PeerAS"), int64(1)
		}
	}
	return st, nil
}
