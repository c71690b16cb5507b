package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/dhcrelay/dhcptest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// TestDHCPRelayThroughTheBinary: swmgr serve --backend linux --dhcp-relay
// dhcrelay, configured through REST, relays a client's DHCP behind
// fpPort1 to a dnsmasq behind fpPort2: the client gets an address of its
// subnet, dnsmasq's lease script sees option 82's circuit id fpPort1,
// state/DhcpRelayIntfs, state/DhcpRelayIntfServers and
// state/DhcpRelayHostDhcps count the exchange,
// /metrics exports them, SystemStatus lists the dhcrelay; a server in a VRF that does not exist
// and a multicast server are 400s.
func TestDHCPRelayThroughTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	testneed.Program(t, "isc-dhcp-relay", "/usr/sbin/dhcrelay")
	testneed.Program(t, "nftables", "/usr/sbin/nft")
	prefix := fmt.Sprintf("drb%05d", rand.IntN(100000))
	sw, client, server := prefix+"sw", prefix+"h1", prefix+"h2"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		for _, ns := range []string{sw, client, server} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for i, host := range []string{client, server} {
		ip("netns", "add", host)
		if i == 0 {
			ip("netns", "add", sw)
		}
		ip("-n", sw, "link", "add", fmt.Sprintf("fpPort%d", i+1), "type", "veth", "peer", "name", "eth0", "netns", host)
		ip("-n", host, "link", "set", "eth0", "up")
	}
	ip("-n", server, "addr", "add", "10.0.2.1/24", "dev", "eth0")
	ip("-n", server, "route", "add", "10.0.1.0/24", "via", "10.0.2.254")

	dhcp := dhcptest.StartServer(t, server, "10.0.1.100", "10.0.1.150", "255.255.255.0")
	dir := t.TempDir()
	s := startServer(t, filepath.Join(dir, "data"), "--backend", "linux", "--netns", sw, "--bgp", "sim", "--ntp", "sim", "--system", "sim",
		"--dhcp-relay", "dhcrelay", "--dhcp-relay-dir", filepath.Join(dir, "dhcrelay"))
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.1.1/24"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort2","IpAddr":"10.0.2.254/24"}`)
	s.expect(t, 200, "PATCH", "/config/DhcpRelayGlobal", `{"Enable":true}`)
	s.expect(t, 400, "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["10.0.2.1"],"Vrf":"blue"}`)
	s.expect(t, 400, "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["239.1.1.1"]}`)
	s.expect(t, 201, "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["10.0.2.1"]}`)

	if out := dhcptest.Lease(t, client, "eth0"); !strings.Contains(out, "lease of 10.0.1.") || !strings.Contains(out, "obtained from 10.0.2.1") {
		t.Fatalf("udhcpc: %s\ndnsmasq: %s", out, dhcp.Log())
	}
	if ids := dhcp.CircuitIDs(); !slices.Equal(ids, []string{"fpPort1"}) {
		t.Errorf("circuit ids %q in dnsmasq's lease script, want fpPort1", ids)
	}
	st := s.expect(t, 200, "GET", "/state/DhcpRelayIntf", `{"IntfRef":"fpPort1"}`).object()
	if n, _ := st["TotalDhcpClientRx"].(float64); n < 2 {
		t.Errorf("state/DhcpRelayIntf fpPort1: %v, want 2 requests or more", st)
	}
	if hosts := objects(s.listAll(t, "/state/DhcpRelayHostDhcps", 100)); len(hosts) != 1 || hosts[0]["IntfRef"] != "fpPort1" || hosts[0]["ClientResponses"].(float64) < 2 {
		t.Errorf("state/DhcpRelayHostDhcps: %v", hosts)
	}
	servers := objects(s.listAll(t, "/state/DhcpRelayIntfServers", 100))
	if len(servers) != 1 || servers[0]["ServerIp"] != "10.0.2.1" || servers[0]["Responses"].(float64) < 2 {
		t.Errorf("state/DhcpRelayIntfServers: %v", servers)
	}
	if !regexp.MustCompile(`(?m)^swmgr_dhcp_relay_client_requests_total\{interface="fpPort1"\} [1-9]`).Match(scrape(t, s)) {
		t.Error("/metrics: no swmgr_dhcp_relay_client_requests_total of fpPort1 above 0")
	}
	found := false
	for _, d := range s.expect(t, 200, "GET", "/state/SystemStatus", "").object()["FlexDaemons"].([]any) {
		if m, _ := d.(map[string]any); m["Name"] == "dhcrelay-default" && m["State"] == "up" {
			found = true
		}
	}
	if !found {
		t.Error("SystemStatus FlexDaemons has no dhcrelay-default up")
	}
}
