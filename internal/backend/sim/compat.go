package sim

import (
	"context"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// FlexSwitch's state fields, filled from what the simulated switch
// simulates: traffic of 500-byte unicast frames while a port is up, a BGP
// session that stays Idle because there is no peer. What it does not
// simulate (errors, multicast, BGP messages) stays zero, as docs/objects.md
// says.

// defaultVlan carries the untagged frames of a port that is no VLAN's
// untagged member (802.1Q's default VLAN).
const defaultVlan = 1

// objectTimes are when an object was created and last changed.
type objectTimes struct{ created, updated time.Time }

// timed are the kinds whose state reports times: a BGP neighbor's session
// state duration, the times of routes.
var timed = map[string]bool{"BGPv4Neighbor": true, "IPv4Intf": true, "IPv4Route": true, "IPv6Intf": true, "IPv6Route": true}

// noteChange records when objects of timed kinds were created and changed.
func (s *Sim) noteChange(c backend.Change) {
	s.kinds[c.Kind.Name] = c.Kind
	if c.Kind.Name == "LogicalIntf" {
		s.noteLogical(c)
	}
	if !timed[c.Kind.Name] {
		return
	}
	id := c.Kind.Name + "\x00" + c.Key
	now := time.Now().UTC().Round(0)
	switch c.Op {
	case backend.Delete:
		delete(s.times, id)
	case backend.Create:
		s.times[id] = &objectTimes{created: now, updated: now}
	case backend.Update:
		if t := s.times[id]; t != nil {
			t.updated = now
		} else {
			s.times[id] = &objectTimes{created: now, updated: now}
		}
	}
}

// FlexSwitch's interface indexes carry the interface's type in their high
// bits, above a 24-bit id: a loopback's is 5<<24 | id, its ids allocated
// from 0 as loopbacks are created (83886080 is the first, Loopback1 in
// its labs).
const (
	ifTypeShift    = 24
	ifTypeLoopback = 5
)

// logicalIfIndex is the IfIndex of the LogicalIntf of interface id id.
func logicalIfIndex(id int64) int64 { return ifTypeLoopback<<ifTypeShift | id }

// noteLogical gives a new LogicalIntf the least id no other one has, kept
// while it exists; the caller holds s.mu.
func (s *Sim) noteLogical(c backend.Change) {
	switch c.Op {
	case backend.Delete:
		delete(s.logical, c.Key)
	case backend.Create:
		used := make(map[int64]bool, len(s.logical))
		for _, id := range s.logical {
			used[id] = true
		}
		var id int64
		for used[id] {
			id++
		}
		s.logical[c.Key] = id
	}
}

// compatStateKinds are the kinds fillCompatState adds fields to.
var compatStateKinds = []string{"Port", "LogicalIntf", "BGPv4Neighbor"}

// fillCompatState adds FlexSwitch's fields to st, the state of o; the
// caller holds s.mu.
func (s *Sim) fillCompatState(kind *model.Kind, o, st model.Object) {
	switch kind.Name {
	case "Port":
		pkts := st.Int("IfInUcastPkts") + st.Int("IfOutUcastPkts")
		st["IfEtherPkts"] = pkts
		st["IfEtherPkts256To511Octets"] = pkts // every simulated frame is simFrameSize bytes
		st["Pvid"] = int64(defaultVlan)
		for _, v := range s.applied["Vlan"] {
			if slices.Contains(v.List("UntagIntfList"), o.Str("IntfRef")) {
				st["Pvid"] = v.Int("VlanId")
			}
		}
		st["ConfigMode"] = "L2"
		for _, in := range s.applied["IPv4Intf"] {
			if in.Str("IntfRef") == o.Str("IntfRef") {
				st["ConfigMode"] = "L3"
			}
		}
	case "LogicalIntf":
		st["OperState"] = "UP" // a loopback does not go down
		if id, ok := s.logical[o.Str("Name")]; ok {
			st["IfIndex"] = logicalIfIndex(id)
		}
	case "BGPv4Neighbor":
		if t := s.times[kind.Name+"\x00"+kind.Key(o)]; t != nil {
			st["SessionStateDuration"] = time.Since(t.created).Round(time.Second).String()
		}
		if o.Bool("BfdEnable") || s.applied["BGPv4PeerGroup"][o.Str("PeerGroup")].Bool("BfdEnable") {
			st["BfdNeighborState"] = "down" // no peer answers
		}
	}
}

// Routes is the simulated switch's routing table: the connected subnet of
// every IPv4Intf and every static route, each usable when its interface
// is up or, for a static route, when a next hop lies in a usable connected
// subnet (a NullRoute always is).
func (s *Sim) Routes(ctx context.Context) ([]model.Object, error) {
	return s.routes(ipv4)
}

// RoutesV6 is the simulated switch's IPv6 routing table
// (state/IPv6Routes), made as Routes makes the IPv4 one, from IPv6Intf
// and IPv6Route.
func (s *Sim) RoutesV6(ctx context.Context) ([]model.Object, error) {
	return s.routes(ipv6)
}

// family is what a routing table is made of, per address family: the
// interface and route kinds, and the empty next hop.
type family struct {
	intf, route, anyAddr string
}

var (
	ipv4 = family{"IPv4Intf", "IPv4Route", "0.0.0.0"}
	ipv6 = family{"IPv6Intf", "IPv6Route", "::"}
)

func (s *Sim) routes(fam family) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type connected struct {
		prefix netip.Prefix
		intf   string
		up     bool
	}
	var conn []connected
	var out []model.Object
	stamp := func(kind, key string, o model.Object) {
		o["RouteCreatedTime"], o["RouteUpdatedTime"] = "", ""
		if t := s.times[kind+"\x00"+key]; t != nil {
			o["RouteCreatedTime"], o["RouteUpdatedTime"] = t.created.String(), t.updated.String()
		}
	}
	for key, in := range s.applied[fam.intf] {
		p, err := netip.ParsePrefix(in.Str("IpAddr"))
		if err != nil {
			continue
		}
		up := in.Str("AdminState") == "UP" && s.intf(in.Str("IntfRef")).up
		c := connected{p.Masked(), in.Str("IntfRef"), up}
		conn = append(conn, c)
		r := model.Object{"DestinationNw": c.prefix.String(), "Protocol": "CONNECTED", "IsNetworkReachable": up, "PolicyList": []string{},
			"NextHopList": []model.Object{{"NextHopIp": fam.anyAddr, "NextHopIntRef": c.intf, "Weight": int64(0)}}}
		withMask(r, c.prefix)
		stamp(fam.intf, key, r)
		out = append(out, r)
	}
	for key, rt := range s.applied[fam.route] {
		p, ok := model.RoutePrefix(rt)
		if !ok {
			continue
		}
		reachable := rt.Bool("NullRoute")
		hops := []model.Object{}
		for _, h := range rt.Records("NextHop") {
			ip, _ := netip.ParseAddr(h.Str("NextHopIp"))
			intf := h.Str("NextHopIntRef")
			for _, c := range conn {
				if c.prefix.Contains(ip) && (intf == "" || intf == c.intf) {
					intf = c.intf
					reachable = reachable || c.up
				}
			}
			hops = append(hops, model.Object{"NextHopIp": h.Str("NextHopIp"), "NextHopIntRef": intf, "Weight": h.Int("Weight")})
		}
		r := model.Object{"DestinationNw": p.String(), "Protocol": "STATIC", "IsNetworkReachable": reachable, "PolicyList": []string{}, "NextHopList": hops}
		withMask(r, p)
		stamp(fam.route, key, r)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := netip.MustParsePrefix(out[i].Str("DestinationNw")), netip.MustParsePrefix(out[j].Str("DestinationNw"))
		if a != b {
			if c := a.Addr().Compare(b.Addr()); c != 0 {
				return c < 0
			}
			return a.Bits() < b.Bits()
		}
		return out[i].Str("Protocol") < out[j].Str("Protocol")
	})
	return out, nil
}

// withMask sets an IPv4 route's NetworkMask (IPv4RouteState has one;
// IPv6RouteState has the prefix only).
func withMask(r model.Object, p netip.Prefix) {
	if p.Addr().Is4() {
		r["NetworkMask"] = mask(p)
	}
}

// mask renders a prefix length as a dotted mask.
func mask(p netip.Prefix) string {
	m := ^uint32(0) << (32 - p.Bits())
	if p.Bits() == 0 {
		m = 0
	}
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}
