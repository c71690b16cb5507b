package frr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// FlexSwitch's BGP FSM numbering (BGPFSMState in its bgp config package).
const (
	SessionNone uint32 = iota
	SessionIdle
	SessionConnect
	SessionActive
	SessionOpenSent
	SessionOpenConfirm
	SessionEstablished
)

// SessionStateOf maps FRR's state name to FlexSwitch's number.
func SessionStateOf(frr string) uint32 {
	switch strings.ToLower(frr) {
	case "idle", "idle (admin)", "idle (pfx)", "clearing", "deleted":
		return SessionIdle
	case "connect":
		return SessionConnect
	case "active":
		return SessionActive
	case "opensent":
		return SessionOpenSent
	case "openconfirm":
		return SessionOpenConfirm
	case "established":
		return SessionEstablished
	}
	if strings.HasPrefix(strings.ToLower(frr), "idle") {
		return SessionIdle
	}
	return SessionNone
}

// GlobalState is BGPGlobalState's live part for one instance.
type GlobalState struct {
	VRF             string
	AS              string
	RouterID        string
	TotalPaths      uint32 // paths received from all neighbors
	Totalv4Prefixes uint32 // IPv4 destinations in BGP's table
}

// NeighborState is BGPv4NeighborState's live part.
type NeighborState struct {
	VRF                  string
	NeighborAddress      string
	IntfRef              string
	PeerAS               string
	LocalAS              string
	PeerType             int8 // 0 internal, 1 external (FlexSwitch's PeerTypeInternal/External)
	SessionState         uint32
	SessionStateName     string
	SessionStateDuration string // Go duration, since the session came up (Established only)
	UptimeMsec           int64
	UpdatesSent          uint64
	UpdatesReceived      uint64
	NotificationsSent    uint64
	NotificationsRecv    uint64
	InputQueue           uint32
	OutputQueue          uint32
	TotalPrefixes        uint32 // prefixes accepted from the neighbor
	ConnectionsUp        uint32 // sessions established so far: a reset shows as an increase
	// The timers in force, in seconds: negotiated with the peer while the
	// session is Established (the lower hold time of the two), else what
	// is configured or FRR's default (configured 0).
	HoldTime      uint32
	KeepaliveTime uint32
	// ConnectRetryTime is the connect retry interval in force, seconds.
	ConnectRetryTime uint32
	// The prefix counts per address family (bgp6.go).
	IPv4Unicast, IPv6Unicast PrefixCounts
	// PeerAddress is the address the session runs to: an unnumbered
	// neighbor's link-local one, which BGP's table names its paths by.
	PeerAddress string
}

// Route is one entry of zebra's RIB.
type Route struct {
	VRF       string
	Prefix    string
	Protocol  string // FRR's name: bgp, connected, kernel, static…
	NextHops  []NextHop
	Selected  bool
	Installed bool // in the kernel's table
	Distance  uint32
	Metric    uint32
}

// NextHop is one way to a route's destination.
type NextHop struct {
	Address string
	IntfRef string
}

type frrSummary map[string]struct {
	IPv4Unicast *struct {
		RouterID string `json:"routerId"`
		AS       uint32 `json:"as"`
		RIBCount uint32 `json:"ribCount"`
		Peers    map[string]struct {
			PfxRcd uint32 `json:"pfxRcd"`
		} `json:"peers"`
	} `json:"ipv4Unicast"`
}

type frrNeighbor struct {
	RemoteAS                uint32 `json:"remoteAs"`
	LocalAS                 uint32 `json:"localAs"`
	NbrExternalLink         bool   `json:"nbrExternalLink"`
	BGPState                string `json:"bgpState"`
	BGPTimerUpEstablishedMs int64  `json:"bgpTimerUpMsec"`
	ConnectionsEstablished  uint32 `json:"connectionsEstablished"`
	NeighborAddr            string `json:"bgpNeighborAddr"`
	HoldTimeMsecs           int64  `json:"bgpTimerHoldTimeMsecs"`
	KeepaliveMsecs          int64  `json:"bgpTimerKeepAliveIntervalMsecs"`
	ConnectRetrySecs        uint32 `json:"connectRetryTimer"`
	MessageStats            struct {
		DepthInq          uint32 `json:"depthInq"`
		DepthOutq         uint32 `json:"depthOutq"`
		NotificationsSent uint64 `json:"notificationsSent"`
		NotificationsRecv uint64 `json:"notificationsRecv"`
		UpdatesSent       uint64 `json:"updatesSent"`
		UpdatesRecv       uint64 `json:"updatesRecv"`
	} `json:"messageStats"`
	AddressFamilyInfo struct {
		IPv4Unicast frrPrefixCounts `json:"ipv4Unicast"`
		IPv6Unicast frrPrefixCounts `json:"ipv6Unicast"`
	} `json:"addressFamilyInfo"`
}

// showJSON runs a show command that answers JSON.
func (r *Router) showJSON(ctx context.Context, daemon, command string, v any) error {
	out, err := r.show(ctx, daemon, command)
	if err != nil {
		return fmt.Errorf("frr: %s: %w", command, err)
	}
	if strings.TrimSpace(out) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("frr: %s: parsing FRR's JSON: %w", command, err)
	}
	return nil
}

// Globals reports every BGP instance's totals.
func (r *Router) Globals(ctx context.Context) ([]GlobalState, error) {
	var sum frrSummary
	if err := r.showJSON(ctx, "bgpd", "show bgp vrf all summary json", &sum); err != nil {
		return nil, err
	}
	return parseGlobals(sum), nil
}

func parseGlobals(sum frrSummary) []GlobalState {
	var out []GlobalState
	for vrf, s := range sum {
		g := GlobalState{VRF: vrf}
		if s.IPv4Unicast != nil {
			g.AS = fmt.Sprint(s.IPv4Unicast.AS)
			g.RouterID = s.IPv4Unicast.RouterID
			g.Totalv4Prefixes = s.IPv4Unicast.RIBCount
			for _, p := range s.IPv4Unicast.Peers {
				g.TotalPaths += p.PfxRcd
			}
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VRF < out[j].VRF })
	return out
}

// Neighbors reports every neighbor of every instance.
func (r *Router) Neighbors(ctx context.Context) ([]NeighborState, error) {
	var raw map[string]map[string]json.RawMessage
	if err := r.showJSON(ctx, "bgpd", "show bgp vrf all neighbors json", &raw); err != nil {
		return nil, err
	}
	ns, err := parseNeighbors(raw)
	if err != nil {
		return nil, err
	}
	return ns, r.addWalkCounts(ctx, ns)
}

func parseNeighbors(raw map[string]map[string]json.RawMessage) ([]NeighborState, error) {
	var out []NeighborState
	for vrf, peers := range raw {
		for name, msg := range peers {
			if name == "vrfId" || name == "vrfName" {
				continue
			}
			var n frrNeighbor
			if err := json.Unmarshal(msg, &n); err != nil {
				return nil, fmt.Errorf("frr: neighbor %s: %w", name, err)
			}
			s := NeighborState{
				VRF: vrf, NeighborAddress: name,
				PeerAS: fmt.Sprint(n.RemoteAS), LocalAS: fmt.Sprint(n.LocalAS),
				SessionState: SessionStateOf(n.BGPState), SessionStateName: n.BGPState,
				UpdatesSent: n.MessageStats.UpdatesSent, UpdatesReceived: n.MessageStats.UpdatesRecv,
				NotificationsSent: n.MessageStats.NotificationsSent, NotificationsRecv: n.MessageStats.NotificationsRecv,
				InputQueue: n.MessageStats.DepthInq, OutputQueue: n.MessageStats.DepthOutq,
				ConnectionsUp: n.ConnectionsEstablished,
				HoldTime:      uint32(n.HoldTimeMsecs / 1000), KeepaliveTime: uint32(n.KeepaliveMsecs / 1000),
				ConnectRetryTime: n.ConnectRetrySecs,
				IPv4Unicast:      n.AddressFamilyInfo.IPv4Unicast.counts(),
				IPv6Unicast:      n.AddressFamilyInfo.IPv6Unicast.counts(),
				PeerAddress:      n.NeighborAddr,
			}
			s.TotalPrefixes = s.IPv4Unicast.Accepted
			if n.NbrExternalLink {
				s.PeerType = 1
			}
			if s.SessionState == SessionEstablished {
				s.UptimeMsec = n.BGPTimerUpEstablishedMs
				s.SessionStateDuration = (time.Duration(n.BGPTimerUpEstablishedMs) * time.Millisecond).String()
			}
			// FRR (8.4) keys an unnumbered neighbor by its interface and
			// says no more of it (bgpNeighborAddr is the peer's link-local
			// address): a key that is no address is an interface.
			if _, err := netip.ParseAddr(name); err != nil {
				s.NeighborAddress, s.IntfRef = "", name
			}
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].VRF != out[j].VRF {
			return out[i].VRF < out[j].VRF
		}
		return out[i].NeighborAddress < out[j].NeighborAddress
	})
	return out, nil
}

type frrRoute struct {
	Prefix    string `json:"prefix"`
	Protocol  string `json:"protocol"`
	VRFName   string `json:"vrfName"`
	Selected  bool   `json:"selected"`
	Installed bool   `json:"installed"`
	Distance  uint32 `json:"distance"`
	Metric    uint32 `json:"metric"`
	NextHops  []struct {
		IP            string `json:"ip"`
		InterfaceName string `json:"interfaceName"`
		Active        bool   `json:"active"`
	} `json:"nexthops"`
}

// Routes reports zebra's IPv4 RIB for a VRF (the default one when "").
func (r *Router) Routes(ctx context.Context, vrf string) ([]Route, error) {
	var raw map[string][]frrRoute
	if err := r.showJSON(ctx, "zebra", "show ip route vrf "+vrfOf(vrf)+" json", &raw); err != nil {
		return nil, err
	}
	return parseRoutes(raw), nil
}

func parseRoutes(raw map[string][]frrRoute) []Route {
	var out []Route
	for _, entries := range raw {
		for _, e := range entries {
			rt := Route{VRF: vrfOf(e.VRFName), Prefix: e.Prefix, Protocol: e.Protocol,
				Selected: e.Selected, Installed: e.Installed, Distance: e.Distance, Metric: e.Metric}
			for _, nh := range e.NextHops {
				if nh.Active {
					rt.NextHops = append(rt.NextHops, NextHop{Address: nh.IP, IntfRef: nh.InterfaceName})
				}
			}
			out = append(out, rt)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Prefix != out[j].Prefix {
			return out[i].Prefix < out[j].Prefix
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
}
