package frr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// EVPN is the L2VPN EVPN part of the configuration: the address family of
// the default instance (its neighbours, advertise-all-vni, the route
// targets of the L2 VNIs that do not take FRR's automatic ones) and each
// tenant VRF's L3 VNI (zebra's `vrf X / vni N`, and the address family of
// the VRF's instance: type-5 routes, its route targets).
type EVPN struct {
	AdvertiseAllVNI    bool
	AdvertiseDefaultGw bool
	Neighbors          []EVPNNeighbor
	VNIs               []VNI   // L2 VNIs with an RD or route targets given
	L3VNIs             []L3VNI // one per VRF
}

// EVPNNeighbor activates the family for a neighbour or peer group (by the
// name FRR's configuration gives it: an address, an interface, a group).
type EVPNNeighbor struct {
	Name                 string
	RouteReflectorClient bool
}

// VNI is an L2 VNI's route distinguisher and targets; empty: FRR's
// automatic ones (router-id:N, AS:VNI).
type VNI struct {
	VNI            uint32
	RD             string
	Import, Export []string
}

// L3VNI is a tenant VRF's L3 VNI (symmetric IRB).
type L3VNI struct {
	VRF                  string
	VNI                  uint32
	AdvertiseIPv4Unicast bool // type-5 routes of the VRF's IPv4 BGP table
	RD                   string
	Import, Export       []string
}

var rtRE = regexp.MustCompile(`^(?:[0-9]{1,10}|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):[0-9]{1,10}$`)

// vniLines are the lines of a VNI's (or an L3 VNI's) RD and route
// targets, in the order FRR prints them. A target equal to the one FRR
// derives itself (AS:VNI, for a 2-byte AS) is the automatic one: FRR keeps
// no line for it, so none is rendered.
func vniLines(what string, asn, vni uint32, rd string, imp, exp []string) ([]string, error) {
	auto := ""
	if asn <= 65535 {
		auto = fmt.Sprintf("%d:%d", asn, vni)
	}
	var lines []string
	if rd != "" {
		if !rtRE.MatchString(rd) {
			return nil, fmt.Errorf("%s: route distinguisher %q: use ASN:NN or A.B.C.D:NN", what, rd)
		}
		lines = append(lines, "rd "+rd)
	}
	for _, l := range []struct {
		dir string
		rts []string
	}{{"import", imp}, {"export", exp}} {
		for _, rt := range l.rts {
			if !rtRE.MatchString(rt) {
				return nil, fmt.Errorf("%s: route target %q: use ASN:NN or A.B.C.D:NN", what, rt)
			}
			if rt != auto {
				lines = append(lines, "route-target "+l.dir+" "+rt)
			}
		}
	}
	return lines, nil
}

// vniBlock is an L2 VNI's `vni N ... exit-vni` sub-block held as one line
// of the family: its header and its sorted lines joined by NUL (a byte no
// command carries), so that the diff compares and replaces it whole.
const vniSep = "\x00"

func vniBlock(vni uint32, lines []string) string {
	sorted := slices.Clone(lines)
	sort.Strings(sorted)
	return strings.Join(append([]string{fmt.Sprintf("vni %d", vni)}, sorted...), vniSep)
}

// expandVNIBlocks turns the family's lines into commands: a VNI block
// becomes its header, its lines and exit-vni; its removal `no vni N`.
func expandVNIBlocks(lines []string) []string {
	var out []string
	for _, l := range lines {
		parts := strings.Split(l, vniSep)
		switch {
		case len(parts) == 1:
			out = append(out, l)
		case strings.HasPrefix(parts[0], "no "):
			out = append(out, parts[0])
		default:
			out = append(out, parts[0])
			out = append(out, parts[1:]...)
			out = append(out, "exit-vni")
		}
	}
	return out
}

// render adds the EVPN lines to the instances' blocks: the default
// instance's family, and each L3 VNI's in its VRF's instance (where the
// VRF has one: without a BGP instance the VRF has no routes to advertise).
func (e EVPN) render(byVRF map[string]*block) error {
	def := byVRF[DefaultVRF]
	if def == nil {
		return nil
	}
	var errs []error
	for _, n := range e.Neighbors {
		if !wordRE.MatchString(n.Name) {
			errs = append(errs, fmt.Errorf("EVPN neighbor %q: not a neighbor's or peer group's name", n.Name))
			continue
		}
		if !definedIn(def, n.Name) {
			// A neighbour not (yet) configured, or a group no neighbour
			// uses (FRR defines a group where it is used): nothing to
			// activate until it is.
			continue
		}
		def.evpn = append(def.evpn, "neighbor "+n.Name+" activate")
		if n.RouteReflectorClient {
			def.evpn = append(def.evpn, "neighbor "+n.Name+" route-reflector-client")
		}
	}
	if e.AdvertiseAllVNI {
		def.evpn = append(def.evpn, "advertise-all-vni")
	}
	if e.AdvertiseDefaultGw {
		def.evpn = append(def.evpn, "advertise-default-gw")
	}
	for _, v := range e.VNIs {
		lines, err := vniLines(fmt.Sprintf("VNI %d", v.VNI), def.asn, v.VNI, v.RD, v.Import, v.Export)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(lines) > 0 {
			def.evpn = append(def.evpn, vniBlock(v.VNI, lines))
		}
	}
	for _, l := range e.L3VNIs {
		if l.VRF == DefaultVRF || !wordRE.MatchString(l.VRF) {
			errs = append(errs, fmt.Errorf("L3 VNI %d: VRF %q is not a tenant VRF", l.VNI, l.VRF))
			continue
		}
		b := byVRF[l.VRF]
		if b == nil {
			continue
		}
		lines, err := vniLines(fmt.Sprintf("L3 VNI %d of VRF %s", l.VNI, l.VRF), b.asn, l.VNI, l.RD, l.Import, l.Export)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if l.AdvertiseIPv4Unicast {
			b.evpn = append(b.evpn, "advertise ipv4 unicast")
		}
		b.evpn = append(b.evpn, lines...)
	}
	return errors.Join(errs...)
}

// definedIn says whether the instance defines a neighbour or a peer group
// (one of its neighbours is a member) of that name.
func definedIn(b *block, name string) bool {
	for _, l := range b.router {
		if neighborOf(l) == name || strings.HasSuffix(l, " peer-group "+name) {
			return true
		}
	}
	return false
}

// vrfVNIRE is zebra's `vrf X` line; its ` vni N` line follows.
var vrfVNIRE = regexp.MustCompile(`^vrf (\S+)$`)

// parseVRFVNIs reads the L3 VNIs of zebra's running configuration: VRF
// name to VNI.
func parseVRFVNIs(text string) map[string]uint32 {
	out := map[string]uint32{}
	vrf := ""
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \r")
		if m := vrfVNIRE.FindStringSubmatch(line); m != nil {
			vrf = m[1]
			continue
		}
		if !strings.HasPrefix(line, " ") {
			vrf = ""
			continue
		}
		if f := strings.Fields(line); vrf != "" && len(f) >= 2 && f[0] == "vni" {
			if n, err := strconv.ParseUint(f[1], 10, 32); err == nil {
				out[vrf] = uint32(n)
			}
		}
	}
	return out
}

// diffVRFVNIs returns zebra's commands that turn the running L3 VNIs into
// the wanted ones: a VNI leaves its VRF before another VRF takes it.
func diffVRFVNIs(running, want map[string]uint32) []string {
	var drop, add []string
	for _, vrf := range sortedVRFs(running) {
		if want[vrf] != running[vrf] {
			drop = append(drop, "vrf "+vrf, fmt.Sprintf("no vni %d", running[vrf]), "exit-vrf")
		}
	}
	for _, vrf := range sortedVRFs(want) {
		if want[vrf] != running[vrf] {
			add = append(add, "vrf "+vrf, fmt.Sprintf("vni %d", want[vrf]), "exit-vrf")
		}
	}
	return append(drop, add...)
}

func sortedVRFs(m map[string]uint32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// l3VNIs is the wanted VRF-to-VNI map.
func (e EVPN) l3VNIs() map[string]uint32 {
	out := map[string]uint32{}
	for _, l := range e.L3VNIs {
		out[l.VRF] = l.VNI
	}
	return out
}

// applyVRFVNIs makes zebra map each tenant VRF to its L3 VNI, and returns
// the mapping it found (what a failed apply puts back).
func (r *Router) applyVRFVNIs(ctx context.Context, want map[string]uint32) (map[string]uint32, error) {
	return applyOnZebra(ctx, r, want, parseVRFVNIs, diffVRFVNIs)
}

// applyOnZebra makes zebra run want, one part of its configuration that
// parse reads from its running configuration and diff turns into
// commands, and returns the part as it found it (what a failed apply puts
// back).
func applyOnZebra[T any](ctx context.Context, r *Router, want T, parse func(running string) T, diff func(have, want T) []string) (T, error) {
	text, err := r.show(ctx, "zebra", "show running-config")
	if err != nil {
		var none T
		return none, fmt.Errorf("frr: reading zebra's running configuration: %w", err)
	}
	before := parse(text)
	if cmds := diff(before, want); len(cmds) > 0 {
		if err := r.configureOn(ctx, "zebra", cmds); err != nil {
			return before, err
		}
	}
	return before, nil
}

// VNIState is a VNI as zebra's EVPN runs it (show evpn vni detail).
type VNIState struct {
	VNI         uint32
	Type        string // L2, L3
	VxlanIntf   string
	VRF         string
	LocalVTEP   string
	RemoteVTEPs []string
	NumMACs     uint32
	NumArpNd    uint32
}

// MACState is a MAC of a VNI (show evpn mac vni all).
type MACState struct {
	VNI        uint32
	MAC        string
	Type       string // local, remote
	Intf       string
	VlanID     uint32
	RemoteVTEP string
	Sequence   uint32
}

// EVPNRoute is one path of BGP's EVPN table (show bgp l2vpn evpn).
type EVPNRoute struct {
	RD        string
	Prefix    string
	RouteType uint32
	MAC       string
	IP        string
	NextHop   string
	VNI       uint32
	Best      bool
	Local     bool
}

// EVPNPeer is a neighbour's session in the EVPN family (show bgp l2vpn
// evpn summary).
type EVPNPeer struct {
	Name          string
	PeerAS        string
	State         uint32
	UptimeMsec    int64
	PfxRcd        uint32
	Established   bool
	StateDuration string
}

// VNIs reports zebra's VNIs, in VNI order.
func (r *Router) VNIs(ctx context.Context) ([]VNIState, error) {
	var raw json.RawMessage
	if err := r.showJSON(ctx, "zebra", "show evpn vni detail json", &raw); err != nil {
		return nil, err
	}
	return parseVNIs(raw)
}

// parseVNIs reads `show evpn vni detail json`: a list of VNIs (FRR 8.4),
// whose numRemoteVteps is the list of the remote VTEPs (an L2 VNI's) or
// absent (an L3 VNI's).
func parseVNIs(raw []byte) ([]VNIState, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	var list []struct {
		VNI         uint32          `json:"vni"`
		Type        string          `json:"type"`
		VRF         string          `json:"vrf"`
		VxlanIntf   string          `json:"vxlanInterface"`
		VxlanIntfL3 string          `json:"vxlanIntf"`
		LocalVTEP   string          `json:"vtepIp"`
		LocalVTEPL3 string          `json:"localVtepIp"`
		NumMACs     uint32          `json:"numMacs"`
		NumArpNd    uint32          `json:"numArpNd"`
		Remote      json.RawMessage `json:"numRemoteVteps"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("frr: show evpn vni detail json: %w", err)
	}
	out := make([]VNIState, 0, len(list))
	for _, v := range list {
		s := VNIState{VNI: v.VNI, Type: v.Type, VRF: v.VRF, VxlanIntf: v.VxlanIntf, LocalVTEP: v.LocalVTEP, NumMACs: v.NumMACs, NumArpNd: v.NumArpNd, RemoteVTEPs: []string{}}
		if s.VxlanIntf == "" {
			s.VxlanIntf = v.VxlanIntfL3
		}
		if s.LocalVTEP == "" {
			s.LocalVTEP = v.LocalVTEPL3
		}
		var remote []string
		if json.Unmarshal(v.Remote, &remote) == nil && remote != nil {
			s.RemoteVTEPs = remote
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VNI < out[j].VNI })
	return out, nil
}

// MACs reports the MACs of every VNI, in VNI and MAC order.
func (r *Router) MACs(ctx context.Context) ([]MACState, error) {
	var raw map[string]struct {
		MACs map[string]struct {
			Type       string `json:"type"`
			Intf       string `json:"intf"`
			VLAN       uint32 `json:"vlan"`
			RemoteVTEP string `json:"remoteVtep"`
			LocalSeq   uint32 `json:"localSequence"`
			RemoteSeq  uint32 `json:"remoteSequence"`
		} `json:"macs"`
	}
	if err := r.showJSON(ctx, "zebra", "show evpn mac vni all json", &raw); err != nil {
		return nil, err
	}
	var out []MACState
	for vni, v := range raw {
		n, err := strconv.ParseUint(vni, 10, 32)
		if err != nil {
			continue
		}
		for mac, m := range v.MACs {
			seq := m.LocalSeq
			if m.Type == "remote" {
				seq = m.RemoteSeq
			}
			out = append(out, MACState{VNI: uint32(n), MAC: mac, Type: m.Type, Intf: m.Intf, VlanID: m.VLAN, RemoteVTEP: m.RemoteVTEP, Sequence: seq})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].VNI != out[j].VNI {
			return out[i].VNI < out[j].VNI
		}
		return out[i].MAC < out[j].MAC
	})
	return out, nil
}

// EVPNRoutes reports BGP's EVPN table: every path, by RD and prefix.
func (r *Router) EVPNRoutes(ctx context.Context) ([]EVPNRoute, error) {
	var raw map[string]json.RawMessage
	if err := r.showJSON(ctx, "bgpd", "show bgp l2vpn evpn json", &raw); err != nil {
		return nil, err
	}
	return parseEVPNRoutes(raw)
}

// parseEVPNRoutes reads `show bgp l2vpn evpn json`: the table's totals
// beside one object per RD, which holds one object per prefix.
func parseEVPNRoutes(raw map[string]json.RawMessage) ([]EVPNRoute, error) {
	type path struct {
		Best      bool   `json:"bestpath"`
		RouteType uint32 `json:"routeType"`
		MAC       string `json:"mac"`
		IP        string `json:"ip"`
		IPLen     int    `json:"ipLen"`
		VNI       uint32 `json:"vni"`
		PeerID    string `json:"peerId"`
		NextHops  []struct {
			IP string `json:"ip"`
		} `json:"nexthops"`
	}
	var out []EVPNRoute
	for rd, msg := range raw {
		if !strings.Contains(rd, ":") {
			continue // bgpTableVersion, localAS, numPrefix...
		}
		var byPrefix map[string]json.RawMessage
		if err := json.Unmarshal(msg, &byPrefix); err != nil {
			continue // a scalar
		}
		for prefix, pm := range byPrefix {
			var entry struct {
				Paths []path `json:"paths"`
			}
			if prefix == "rd" || json.Unmarshal(pm, &entry) != nil {
				continue
			}
			for _, p := range entry.Paths {
				rt := EVPNRoute{RD: rd, Prefix: prefix, RouteType: p.RouteType, MAC: p.MAC, IP: p.IP, VNI: p.VNI, Best: p.Best, Local: p.PeerID == "(unspec)"}
				if p.RouteType == 5 {
					rt.IP = type5Prefix(prefix, p.IP)
				}
				if len(p.NextHops) > 0 {
					rt.NextHop = p.NextHops[0].IP
				}
				out = append(out, rt)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].RD != out[j].RD {
			return out[i].RD < out[j].RD
		}
		if out[i].Prefix != out[j].Prefix {
			return out[i].Prefix < out[j].Prefix
		}
		return out[i].NextHop < out[j].NextHop
	})
	return out, nil
}

// type5Prefix is a type-5 route's prefix with its length: FRR (8.4) gives
// the address as the path's ip and the length only in the route's key,
// [5]:[<tag>]:[<length>]:[<address>].
func type5Prefix(key, ip string) string {
	parts := strings.Split(strings.NewReplacer("[", "", "]", "").Replace(key), ":")
	if len(parts) >= 4 && ip != "" {
		return ip + "/" + parts[2]
	}
	return ip
}

// EVPNPeers reports the sessions of the EVPN family, by neighbour name.
func (r *Router) EVPNPeers(ctx context.Context) (map[string]EVPNPeer, error) {
	var raw struct {
		Peers map[string]struct {
			RemoteAS   uint32 `json:"remoteAs"`
			UptimeMsec int64  `json:"peerUptimeMsec"`
			PfxRcd     uint32 `json:"pfxRcd"`
			State      string `json:"state"`
		} `json:"peers"`
	}
	if err := r.showJSON(ctx, "bgpd", "show bgp l2vpn evpn summary json", &raw); err != nil {
		return nil, err
	}
	out := map[string]EVPNPeer{}
	for name, p := range raw.Peers {
		st := SessionStateOf(p.State)
		e := EVPNPeer{Name: name, PeerAS: strconv.FormatUint(uint64(p.RemoteAS), 10), State: st, PfxRcd: p.PfxRcd, StateDuration: "0s"}
		if st == SessionEstablished {
			e.UptimeMsec = p.UptimeMsec
			e.StateDuration = (time.Duration(p.UptimeMsec) * time.Millisecond).Truncate(time.Second).String()
		}
		out[name] = e
	}
	return out, nil
}
