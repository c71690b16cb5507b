package test

import (
	"strings"
	"testing"
)

// TestBGPv6ThroughTheFrontDoors: the IPv6 BGP kinds and the neighbour
// tables through REST (FlexSwitch's SDK calls: createBGPv6PeerGroup,
// createBGPv6Neighbor with every field at its default, createBGPv6Aggregate,
// executeResetBGPv6NeighborByIPAddr, executeNdpDeleteByIPv6Addr) and the
// CLI's shows (show ip route with both families), on the simulated switch; bad input is a clear 4xx that
// changes nothing.
func TestBGPv6ThroughTheFrontDoors(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	s.expect(t, 201, "POST", "/config/IPv6Intf", `{"IntfRef":"fpPort1","IpAddr":"2001:db8:12::1/64"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.12.0.1/30"}`)
	s.expect(t, 201, "POST", "/config/BGPv6PeerGroup", `{"Name":"SPINES6","PeerAS":"","LocalAS":"","UpdateSource":"","Description":"","AdjRIBInFilter":"","AdjRIBOutFilter":"","MaxPrefixesRestartTimer":0,"MultiHopEnable":false,"NextHopSelf":false,"MaxPrefixesDisconnect":false,"MultiHopTTL":0,"KeepaliveTime":0,"RouteReflectorClusterId":0,"AddPathsMaxTx":0,"AddPathsRx":false,"RouteReflectorClient":false,"MaxPrefixesThresholdPct":80,"HoldTime":0,"MaxPrefixes":0,"ConnectRetryTime":0}`)
	s.expect(t, 201, "POST", "/config/BGPv6Neighbor", `{"IntfRef":"","NeighborAddress":"2001:DB8:12:0:0::2","Description":"","PeerGroup":"SPINES6","PeerAS":"65002","LocalAS":"","UpdateSource":"","AdjRIBInFilter":"","AdjRIBOutFilter":"","BfdEnable":false,"MultiHopTTL":0,"KeepaliveTime":0,"AddPathsRx":false,"RouteReflectorClient":false,"MaxPrefixesRestartTimer":0,"MultiHopEnable":false,"RouteReflectorClusterId":0,"MaxPrefixesDisconnect":false,"AddPathsMaxTx":0,"MaxPrefixes":0,"MaxPrefixesThresholdPct":80,"BfdSessionParam":"default","NextHopSelf":false,"Disabled":false,"HoldTime":0,"ConnectRetryTime":0}`)
	s.expect(t, 201, "POST", "/config/BGPv6Aggregate", `{"IpPrefix":"2001:DB8:FF00::/40","GenerateASSet":false,"SendSummaryOnly":true}`)
	// One canonical form (RFC 5952): the neighbor is found by it.
	got := s.expect(t, 200, "GET", "/state/BGPv6Neighbor?NeighborAddress=2001:db8:12::2", "")
	for _, want := range []string{`"NeighborAddress":"2001:db8:12::2"`, `"PrefixesAccepted":0`, `"SessionState":1`} {
		if !strings.Contains(string(got.raw), want) {
			t.Errorf("state lacks %s: %s", want, got.raw)
		}
	}
	text := scrape(t, s)
	for _, want := range []string{
		`swmgr_bgp6_peer_state{interface="",peer="2001:db8:12::2",peer_as="65002",vrf="default"} 1`,
		`swmgr_bgp6_peer_prefixes_accepted{interface="",peer="2001:db8:12::2",peer_as="65002",vrf="default"} 0`,
		`swmgr_bgp6_peer_prefixes_advertised{`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	s.expect(t, 200, "POST", "/action/ResetBGPv6NeighborByIPAddr", `{"IPAddr":"2001:db8:12::2"}`)
	s.expect(t, 404, "POST", "/action/ResetBGPv6NeighborByIPAddr", `{"IPAddr":"2001:db8:12::9"}`)
	s.expect(t, 404, "POST", "/action/NdpDeleteByIPv6Addr", `{"IpAddr":"2001:db8:12::2"}`)
	s.expect(t, 200, "POST", "/action/ArpRefreshByIfName", `{"IfName":"fpPort1"}`)
	for _, bad := range []struct{ path, body string }{
		{"/config/BGPv6Neighbor", `{"NeighborAddress":"2001:db8:12::3","PeerGroup":"NOPE"}`},
		{"/config/BGPv6Neighbor", `{"NeighborAddress":"::ffff:10.0.0.1","PeerAS":"65002"}`},
		{"/config/BGPv6Neighbor", `{"NeighborAddress":"fe80::1%fpPort1","PeerAS":"65002"}`},
		{"/config/BGPv6Neighbor", `{"IntfRef":"fpPort2","PeerAS":"external"}`},
		{"/config/BGPv6Aggregate", `{"IpPrefix":"2001:db8:ff00::1/40"}`},
		{"/config/BGPv4Aggregate", `{"IpPrefix":"10.0.0.0/33"}`},
		{"/action/ResetBGPv4NeighborByIPAddr", `{"IPAddr":"2001:db8::1"}`},
	} {
		r := s.do(t, "POST", bad.path, bad.body)
		if r.code < 400 || r.code >= 500 {
			t.Errorf("POST %s %s: %d %s, want a 4xx", bad.path, bad.body, r.code, r.raw)
		}
	}
	if r := s.expect(t, 200, "GET", "/config/BGPv6Neighbors", ""); strings.Count(string(r.raw), `"NeighborAddress"`) != 1 {
		t.Errorf("refused neighbors were stored: %s", r.raw)
	}

	out, code := runCLI(t, s, "", "-c", "show bgp ipv6 summary; show bgp ipv6 unicast; show ip arp; show ipv6 neighbors; show ipv6 interface; show ip bgp aggregate; show bgp ipv6 aggregate; show ip route")
	if code != 0 {
		t.Fatalf("cli: %d\n%s", code, out)
	}
	wantIn(t, "the shows", out,
		"Neighbor          Interface    VRF        AS       UpdRcvd", "2001:db8:12::2", "Idle",
		"No Data To Display for BGPv6RouteState", "No Data To Display for ArpEntryState", "No Data To Display for NDPEntryState",
		"2001:db8:12::1/64", "2001:db8:ff00::/40")
	// show ip route: both families, in one table.
	_, routes, _ := strings.Cut(out, "show ip route")
	wantIn(t, "show ip route", routes, "10.12.0.0/30", "2001:db8:12::/64", "CONNECTED")
}
