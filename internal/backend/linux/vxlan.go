package linux

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// VXLAN on the Linux backend: one VXLAN device per VNI (vxlan<VNI>, from
// the VTEP's address, learning off), a port of the VLAN-aware bridge in
// its VLAN (untagged, its PVID), as FRR's zebra expects of an L2 VNI: it
// maps the VNI to the VLAN through the port's VLAN, learns the local MACs
// from the bridge and installs the remote ones (type-2 routes) and the
// flooding entries (type-3) on the device. A VRF's L3 VNI is such a device
// too, in its own VLAN, whose interface is put in the VRF. Why one device
// per VNI and not a single device for all: docs/linux-backend.md.
//
// The VXLAN kinds make one set of devices: their drivers edit a stage of
// the Tx, flushed once per apply after every other change (the loopback's
// address, the VLANs, the VRFs are in place then), which makes the kernel's
// devices those of the staged objects. The EVPN part goes to FRR with the
// BGP configuration (evpnOf).

// vxlanKinds are the kinds that make the VXLAN devices.
var vxlanKinds = []string{"VxlanEndpoint", "VxlanInstance", "VxlanVtepInstance", "EvpnL3Vni"}

// VxlanConfig is one VNI's VXLAN device.
type VxlanConfig struct {
	VNI   int
	VID   int        // its VLAN on the bridge
	Local netip.Addr // the VTEP's address
	Port  int
	TTL   int
	TOS   int
	MTU   int          // 0: the kernel's
	Flood []netip.Addr // static remote VTEPs
	VRF   string       // an L3 VNI's VRF: its VLAN's interface is put there
	Up    bool
}

// VxlanName is the VXLAN device of a VNI.
func VxlanName(vni int) string { return "vxlan" + strconv.Itoa(vni) }

// vxlanKey is an object's store key within its kind, as the engine gives
// it (b.applied's keys).
func vxlanKey(kind string, o model.Object) string {
	switch kind {
	case "VxlanInstance":
		return strconv.FormatInt(o.Int("Vni"), 10)
	case "VxlanVtepInstance":
		return o.Str("Intf") + "\x00" + strconv.FormatInt(o.Int("Vni"), 10)
	case "EvpnL3Vni":
		return o.Str("Vrf")
	}
	return "default"
}

// vxlanStage is the VXLAN objects as the Tx will leave them; the caller
// holds b.mu (apply does), under which b.applied is what the kernel has.
func (b *Backend) vxlanStage(tx *Tx, kind string) map[string]map[string]model.Object {
	return tx.staged("vxlan", kind, func() any {
		st := map[string]map[string]model.Object{}
		for _, k := range vxlanKinds {
			st[k] = map[string]model.Object{}
			for key, o := range b.applied[k] {
				st[k][key] = o
			}
		}
		return st
	}, b.flushVXLAN).(map[string]map[string]model.Object)
}

// vxlanConfigs are the devices the objects make, by VNI; an error names a
// VNI whose source has no address.
func (b *Backend) vxlanConfigs(objs map[string]map[string]model.Object) (map[int]VxlanConfig, error) {
	ep := objs["VxlanEndpoint"]["default"]
	port := int64(4789)
	src := ""
	if ep != nil {
		src, port = ep.Str("SourceInterface"), ep.Int("UdpPort")
	}
	vteps := map[int64]model.Object{}
	for _, v := range objs["VxlanVtepInstance"] {
		vteps[v.Int("Vni")] = v
	}
	out := map[int]VxlanConfig{}
	add := func(vni, vid int64, up bool, vrf string) error {
		c := VxlanConfig{VNI: int(vni), VID: int(vid), Port: int(port), TTL: 255, Up: up, VRF: vrf}
		from := src
		if v := vteps[vni]; v != nil {
			c.Port, c.TTL, c.TOS, c.MTU = int(v.Int("DstUDP")), int(v.Int("TTL")), int(v.Int("TOS")), int(v.Int("Mtu"))
			for _, d := range v.List("DstIp") {
				if a, err := netip.ParseAddr(d); err == nil {
					c.Flood = append(c.Flood, a)
				}
			}
			switch ip := v.Str("SrcIp"); {
			case v.Str("IntfRef") != "":
				from = v.Str("IntfRef")
			case ip != "" && ip != "0.0.0.0":
				a, err := netip.ParseAddr(ip)
				if err != nil {
					return &Refusal{Field: "SrcIp", Msg: fmt.Sprintf("VNI %d: SrcIp %q is not an address", vni, ip)}
				}
				c.Local, from = a, ""
			}
		}
		if from != "" {
			a, err := b.intfAddress(from)
			if err != nil {
				return err
			}
			c.Local = a
		}
		if !c.Local.IsValid() {
			return &Refusal{Field: "SourceInterface", Msg: fmt.Sprintf("VNI %d has no VTEP source: set VxlanEndpoint's SourceInterface to a loopback with an IPv4 address", vni)}
		}
		out[c.VNI] = c
		return nil
	}
	for _, o := range objs["VxlanInstance"] {
		if err := add(o.Int("Vni"), o.Int("VlanId"), o.Str("AdminState") != "DOWN", ""); err != nil {
			return nil, err
		}
	}
	for _, o := range objs["EvpnL3Vni"] {
		if err := add(o.Int("Vni"), o.Int("VlanId"), true, o.Str("Vrf")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// intfAddress is the primary IPv4 address the kernel has on an interface
// (the VTEP's source).
func (b *Backend) intfAddress(ref string) (netip.Addr, error) {
	dev, _, err := b.netdevOf(ref)
	if err != nil {
		return netip.Addr{}, err
	}
	a, err := b.SourceAddr(context.Background(), dev)
	if err != nil {
		return netip.Addr{}, err
	}
	if !a.IsValid() {
		return a, &Refusal{Field: "SourceInterface", Msg: fmt.Sprintf("%s, the VTEP's source, has no IPv4 address", ref)}
	}
	return a, nil
}

// flushVXLAN makes the kernel's VXLAN devices those of the staged objects:
// the devices of VNIs no longer configured go, the others are made or put
// right; every step is undone with the Tx.
func (b *Backend) flushVXLAN(tx *Tx, value any) error {
	staged := value.(map[string]map[string]model.Object)
	want, err := b.vxlanConfigs(staged)
	if err != nil {
		return err
	}
	for _, kind := range []string{"VxlanInstance", "EvpnL3Vni"} {
		for _, o := range b.applied[kind] {
			if _, ok := want[int(o.Int("Vni"))]; !ok {
				if err := tx.RemoveVxlan(int(o.Int("Vni"))); err != nil {
					return err
				}
			}
		}
	}
	vnis := make([]int, 0, len(want))
	for vni := range want {
		vnis = append(vnis, vni)
	}
	slices.Sort(vnis)
	for _, vni := range vnis {
		if err := tx.EnsureVxlan(want[vni]); err != nil {
			return err
		}
	}
	return nil
}

// sameVxlan says whether the kernel's device is c's (else it is made
// again: the kernel changes none of these on a live device).
func sameVxlan(v *netlink.Vxlan, c VxlanConfig) bool {
	local, _ := netip.AddrFromSlice(v.SrcAddr.To4())
	return v.VxlanId == c.VNI && local == c.Local && v.Port == c.Port && v.TTL == c.TTL && v.TOS == c.TOS && !v.Learning
}

// EnsureVxlan makes VNI c's device: a port of the bridge in c's VLAN,
// learning off (EVPN installs the remote MACs), its ARP and ND suppressed
// (EVPN answers for the hosts it knows), with c's static flooding entries.
func (tx *Tx) EnsureVxlan(c VxlanConfig) error {
	k := tx.k
	br, err := tx.ensureBridge()
	if err != nil {
		return err
	}
	name := VxlanName(c.VNI)
	l, err := k.h.LinkByName(name)
	if err == nil {
		if v, ok := l.(*netlink.Vxlan); !ok || !sameVxlan(v, c) {
			if err := tx.delLink(k.h, l, "VXLAN device"); err != nil {
				return err
			}
			l = nil
		}
	} else {
		l = nil
	}
	if l == nil {
		dev := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: c.MTU}, VxlanId: c.VNI, SrcAddr: net.IP(c.Local.AsSlice()),
			Port: c.Port, TTL: c.TTL, TOS: c.TOS, Learning: false}
		if err := tx.addLink(k.h, dev, "VXLAN device"); err != nil {
			return err
		}
		if l, err = k.h.LinkByName(name); err != nil {
			return err
		}
	}
	if c.MTU != 0 {
		if err := tx.setMTU(k.h, l, c.MTU); err != nil {
			return err
		}
	}
	if err := tx.setMaster(k.h, l, br.Attrs().Index); err != nil {
		return err
	}
	if l, err = k.h.LinkByName(name); err != nil {
		return err
	}
	if err := tx.bridgePortLearning(l, false); err != nil {
		return err
	}
	// Its VLAN only: a VNI that moved to another VLAN leaves the old one.
	all, err := k.bridgeVlans()
	if err != nil {
		return err
	}
	for _, v := range all[int32(l.Attrs().Index)] {
		if int(v.Vid) != c.VID {
			if err := tx.portVlan(l, v.Vid, false, false, false, false); err != nil {
				return err
			}
		}
	}
	if err := tx.portVlan(l, uint16(c.VID), true, true, true, false); err != nil {
		return err
	}
	if err := tx.floodEntries(l, c.Flood); err != nil {
		return err
	}
	if c.VRF != "" {
		if err := tx.AttachToVRF(SVIName(c.VID), c.VRF); err != nil {
			return fmt.Errorf("L3 VNI %d: VLAN interface %s into VRF %s: %w", c.VNI, SVIName(c.VID), c.VRF, err)
		}
	}
	return tx.setUp(k.h, l, c.Up)
}

// RemoveVxlan deletes a VNI's device.
func (tx *Tx) RemoveVxlan(vni int) error {
	l, err := tx.k.h.LinkByName(VxlanName(vni))
	if err != nil {
		return nil
	}
	return tx.delLink(tx.k.h, l, "VXLAN device")
}

// bridgePortLearning turns MAC learning of a bridge port on or off.
func (tx *Tx) bridgePortLearning(l netlink.Link, on bool) error {
	h := tx.k.h
	cur, err := h.LinkGetProtinfo(l)
	if err != nil {
		return fmt.Errorf("bridge port %s: %w", l.Attrs().Name, err)
	}
	if cur.Learning == on {
		return nil
	}
	return tx.change(fmt.Sprintf("set %s learning %v", l.Attrs().Name, on),
		func() error { return h.LinkSetLearning(l, on) },
		func() error { return h.LinkSetLearning(l, cur.Learning) })
}

// floodEntries makes the device's static flooding entries (the all-zero
// MAC to each remote VTEP) exactly want; the entries EVPN installs
// (extern_learn) are left to FRR.
func (tx *Tx) floodEntries(l netlink.Link, want []netip.Addr) error {
	h := tx.k.h
	neighs, err := h.NeighList(l.Attrs().Index, unix.AF_BRIDGE)
	if err != nil {
		return fmt.Errorf("%s: forwarding entries: %w", l.Attrs().Name, err)
	}
	entry := func(dst netip.Addr) *netlink.Neigh {
		return &netlink.Neigh{LinkIndex: l.Attrs().Index, Family: unix.AF_BRIDGE, Flags: netlink.NTF_SELF, State: netlink.NUD_PERMANENT,
			HardwareAddr: make(net.HardwareAddr, 6), IP: net.IP(dst.AsSlice())}
	}
	var have []netip.Addr
	for _, n := range neighs {
		if n.HardwareAddr.String() != "00:00:00:00:00:00" || n.State&netlink.NUD_PERMANENT == 0 || n.Flags&netlink.NTF_EXT_LEARNED != 0 {
			continue
		}
		if a, ok := netip.AddrFromSlice(n.IP.To4()); ok {
			have = append(have, a)
		}
	}
	for _, a := range have {
		if !slices.Contains(want, a) {
			e := entry(a)
			if err := tx.change(fmt.Sprintf("remove %s flooding to %s", l.Attrs().Name, a),
				func() error { return h.NeighDel(e) }, func() error { return h.NeighAppend(e) }); err != nil {
				return err
			}
		}
	}
	for _, a := range want {
		if !slices.Contains(have, a) {
			e := entry(a)
			if err := tx.change(fmt.Sprintf("add %s flooding to %s", l.Attrs().Name, a),
				func() error { return h.NeighAppend(e) }, func() error { return h.NeighDel(e) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// vxlanDriver is a VXLAN kind on the Linux backend: its objects are staged
// for the device flush and, where FRR runs, for FRR (an L2 VNI's route
// targets, a VRF's L3 VNI).
func vxlanDriver(kind string) *driver {
	d := &driver{
		check: func(b *Backend, c changeView) error {
			if kind == "EvpnL3Vni" && !b.k.feat.VRFDevice {
				return &Refusal{Field: "Vrf", Msg: "an L3 VNI needs VRF devices (CONFIG_NET_VRF): this kernel has none, and FRR maps an L3 VNI to a VRF device"}
			}
			return nil
		},
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			if before != nil && vxlanKey(kind, before) != vxlanKey(kind, after) {
				delete(b.vxlanStage(tx, kind)[kind], vxlanKey(kind, before))
			}
			b.vxlanStage(tx, kind)[kind][vxlanKey(kind, after)] = after
			b.stageEVPN(tx, kind, after, nil)
			return nil
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			delete(b.vxlanStage(tx, kind)[kind], vxlanKey(kind, before))
			b.stageEVPN(tx, kind, nil, before)
			return nil
		},
	}
	switch kind {
	case "VxlanInstance":
		d.state = func(b *Backend, o model.Object) (model.Object, error) {
			name := VxlanName(int(o.Int("Vni")))
			l, err := b.k.h.LinkByName(name)
			return model.Object{"VxlanIntf": name, "OperState": upDownState(err == nil && operUp(l))}, nil
		}
	case "VxlanEndpoint":
		d.state = func(b *Backend, o model.Object) (model.Object, error) {
			st := model.Object{"SourceAddress": "", "Vnis": int64(len(b.appliedOf("VxlanInstance")) + len(b.appliedOf("EvpnL3Vni")))}
			if src := o.Str("SourceInterface"); src != "" {
				if a, err := b.intfAddress(src); err == nil {
					st["SourceAddress"] = a.String()
				}
			}
			return st, nil
		}
	}
	return d
}

// stageEVPN puts an object that FRR needs (an L2 VNI, an L3 VNI) in the
// Tx's FRR stage, where FRR runs.
func (b *Backend) stageEVPN(tx *Tx, kind string, after, before model.Object) {
	if b.bgp == nil || (kind != "VxlanInstance" && kind != "EvpnL3Vni") {
		return
	}
	st := b.bgpStage(tx, kind)
	if st[kind] == nil {
		st[kind] = map[string]model.Object{}
	}
	if before != nil {
		delete(st[kind], vxlanKey(kind, before))
	}
	if after != nil {
		st[kind][vxlanKey(kind, after)] = after
	}
}

// evpnOf is FRR's EVPN configuration of the staged objects.
func evpnOf(objs map[string]map[string]model.Object) frr.EVPN {
	var e frr.EVPN
	if g := objs["BGPL2vpnEvpn"]["default"]; g != nil {
		e.AdvertiseAllVNI, e.AdvertiseDefaultGw = g.Bool("AdvertiseAllVni"), g.Bool("AdvertiseDefaultGw")
	}
	for _, key := range sortedKeys(objs["BGPL2vpnEvpnNeighbor"]) {
		n := objs["BGPL2vpnEvpnNeighbor"][key]
		e.Neighbors = append(e.Neighbors, frr.EVPNNeighbor{Name: n.Str("FRRName"), RouteReflectorClient: n.Bool("RouteReflectorClient")})
	}
	for _, key := range sortedKeys(objs["VxlanInstance"]) {
		o := objs["VxlanInstance"][key]
		e.VNIs = append(e.VNIs, frr.VNI{VNI: uint32(o.Int("Vni")), RD: o.Str("RouteDistinguisher"), Import: o.List("ImportRouteTargets"), Export: o.List("ExportRouteTargets")})
	}
	for _, key := range sortedKeys(objs["EvpnL3Vni"]) {
		o := objs["EvpnL3Vni"][key]
		e.L3VNIs = append(e.L3VNIs, frr.L3VNI{VRF: o.Str("Vrf"), VNI: uint32(o.Int("Vni")), AdvertiseIPv4Unicast: o.Bool("AdvertiseIPv4Unicast"),
			RD: o.Str("RouteDistinguisher"), Import: o.List("ImportRouteTargets"), Export: o.List("ExportRouteTargets")})
	}
	return e
}

// evpnFRRName is the name FRR's configuration gives an EVPN neighbour: an
// unnumbered neighbour's netdev, else the address or group as it is.
func (b *Backend) evpnFRRName(name string) string {
	if _, err := netip.ParseAddr(name); err == nil {
		return name
	}
	if dev, lb, err := b.netdevOf(name); err == nil && !lb {
		return dev
	}
	return name
}

// evpnDriver is BGPL2vpnEvpn or BGPL2vpnEvpnNeighbor: staged with the BGP
// configuration.
func evpnDriver(kind string) *driver {
	key := func(o model.Object) string {
		if kind == "BGPL2vpnEvpnNeighbor" {
			return o.Str("Neighbor")
		}
		return "default"
	}
	d := &driver{
		check: func(b *Backend, c changeView) error {
			o := c.after()
			cfg := frr.Config{Instances: []frr.Instance{{VRF: frr.DefaultVRF, ASNum: "65000"}}}
			if kind == "BGPL2vpnEvpnNeighbor" {
				cfg.EVPN.Neighbors = []frr.EVPNNeighbor{{Name: b.evpnFRRName(o.Str("Neighbor"))}}
			}
			if err := cfg.Validate(); err != nil {
				return &Refusal{Field: "Neighbor", Msg: err.Error()}
			}
			return nil
		},
	}
	d.ensure, d.remove = frrStaged(kind, key, func(b *Backend, o model.Object) error {
		o["FRRName"] = b.evpnFRRName(o.Str("Neighbor"))
		return nil
	})
	if kind == "BGPL2vpnEvpnNeighbor" {
		d.state = func(b *Backend, o model.Object) (model.Object, error) {
			st := model.Object{"PeerAS": "", "SessionState": int64(0), "SessionStateDuration": "0s", "PrefixesReceived": int64(0)}
			peers, err := b.bgp.evpnPeers()
			if err != nil {
				return nil, err
			}
			if p, ok := peers[b.evpnFRRName(o.Str("Neighbor"))]; ok {
				st["PeerAS"], st["SessionState"], st["SessionStateDuration"], st["PrefixesReceived"] = p.PeerAS, int64(p.State), p.StateDuration, int64(p.PfxRcd)
			}
			return st, nil
		}
	}
	return d
}

// evpnPeers reads the EVPN sessions (one query for all the reads of a
// list).
func (r *bgpRunner) evpnPeers() (map[string]frr.EVPNPeer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := r.router.EVPNPeers(ctx)
	if err != nil {
		return nil, unavailable("BGPL2vpnEvpnNeighbor", "FRR", err)
	}
	return p, nil
}

// evpnStateLists are the EVPN state kinds, read from FRR; without FRR the
// VNIs are the configured ones, with no remote VTEP, and nothing else.
func (b *Backend) evpnStateLists() map[string]func(context.Context) ([]model.Object, error) {
	return map[string]func(context.Context) ([]model.Object, error){
		"EvpnVniState":   b.evpnVNIs,
		"EvpnMacState":   b.evpnMACs,
		"EvpnRouteState": b.evpnRoutes,
	}
}

func (b *Backend) evpnVNIs(ctx context.Context) ([]model.Object, error) {
	out := []model.Object{}
	if b.bgp == nil {
		for _, o := range b.appliedOf("VxlanInstance") {
			out = append(out, model.Object{"Vni": o.Int("Vni"), "Type": "L2", "VxlanIntf": VxlanName(int(o.Int("Vni"))), "Vrf": "default",
				"LocalVtep": "", "RemoteVteps": []string{}, "NumRemoteVteps": int64(0), "NumMacs": int64(0), "NumArpNd": int64(0)})
		}
		slices.SortFunc(out, func(a, b model.Object) int { return int(a.Int("Vni") - b.Int("Vni")) })
		return out, nil
	}
	vnis, err := b.bgp.router.VNIs(ctx)
	if err != nil {
		return nil, unavailable("EvpnVniState", "FRR", err)
	}
	for _, v := range vnis {
		out = append(out, model.Object{"Vni": int64(v.VNI), "Type": v.Type, "VxlanIntf": v.VxlanIntf, "Vrf": v.VRF, "LocalVtep": v.LocalVTEP,
			"RemoteVteps": v.RemoteVTEPs, "NumRemoteVteps": int64(len(v.RemoteVTEPs)), "NumMacs": int64(v.NumMACs), "NumArpNd": int64(v.NumArpNd)})
	}
	return out, nil
}

func (b *Backend) evpnMACs(ctx context.Context) ([]model.Object, error) {
	out := []model.Object{}
	if b.bgp == nil {
		return out, nil
	}
	macs, err := b.bgp.router.MACs(ctx)
	if err != nil {
		return nil, unavailable("EvpnMacState", "FRR", err)
	}
	for _, m := range macs {
		intf := m.Intf
		if p := b.ports.Port(intf); p != "" {
			intf = p
		}
		out = append(out, model.Object{"Vni": int64(m.VNI), "MacAddr": m.MAC, "Type": m.Type, "Intf": intf, "VlanId": int64(m.VlanID),
			"RemoteVtep": m.RemoteVTEP, "Sequence": int64(m.Sequence)})
	}
	return out, nil
}

func (b *Backend) evpnRoutes(ctx context.Context) ([]model.Object, error) {
	out := []model.Object{}
	if b.bgp == nil {
		return out, nil
	}
	routes, err := b.bgp.router.EVPNRoutes(ctx)
	if err != nil {
		return nil, unavailable("EvpnRouteState", "FRR", err)
	}
	for i, r := range routes {
		// One row per route: its best path (paths of a route are adjacent).
		if i > 0 && routes[i-1].RD == r.RD && routes[i-1].Prefix == r.Prefix {
			if !r.Best {
				continue
			}
			out = out[:len(out)-1]
		}
		out = append(out, model.Object{"RouteDistinguisher": r.RD, "Prefix": r.Prefix, "RouteType": int64(r.RouteType), "Mac": r.MAC,
			"IpAddr": r.IP, "NextHop": r.NextHop, "Vni": int64(r.VNI), "Best": r.Best, "Local": r.Local})
	}
	return out, nil
}
