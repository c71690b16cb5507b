package test

import "testing"

// TestCLIDhcpRelay: the CLI's dhcp_relay mode enables the relay and sets
// its hop limit (show run prints them), and show dhcp_relay servers lists
// a relay interface's servers, on the simulated switch.
func TestCLIDhcpRelay(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/24"}`)
	s.expect(t, 201, "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["192.0.2.67","192.0.2.68"]}`)
	out, code := runCLI(t, s, "enable\nconfig\ndhcp_relay\nenable\nHopCountLimit 8\nexit\napply\nexit\nshow run\nshow dhcp_relay servers\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	mustContain(t, out, "(config-dhcp_relay)#", "dhcp_relay\n  enable\n  HopCountLimit 8\n", "192.0.2.67", "192.0.2.68")
	checkFields(t, "DhcpRelayGlobal", s.expect(t, 200, "GET", "/config/DhcpRelayGlobal", "").object(), map[string]any{"Enable": true, "HopCountLimit": float64(8)})
}
