package test

import (
	"strings"
	"testing"
)

// TestEVPNOnSimulatedSwitch: VXLAN and EVPN declared over REST on the
// simulated switch. Bad input (a VNI on two VLANs, a VLAN with two VNIs,
// a VTEP source with no address, a VNI out of range, an L3 VNI of a VRF
// that does not exist, an EVPN neighbour that is no neighbour) is refused
// with the right status and a message naming what is wrong, and changes
// nothing; the state shows the VNIs with the VTEP's address.
func TestEVPNOnSimulatedSwitch(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/config/Vlan", `{"VlanId":10,"UntagIntfList":["fpPort1"]}`},
		{"POST", "/config/Vlan", `{"VlanId":20}`},
		{"POST", "/config/Vlan", `{"VlanId":4000}`},
		{"POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback2"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`},
		{"PATCH", "/config/BGPGlobal", `{"ASNum":"65001"}`},
		{"POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2","PeerAS":"65002"}`},
	} {
		s.expect(t, map[string]int{"POST": 201, "PATCH": 200}[c.method], c.method, c.path, c.body)
	}
	bad := []struct {
		status             int
		method, path, body string
		says               []string
	}{
		{409, "POST", "/config/VxlanInstance", `{"Vni":100,"VlanId":10}`, []string{"VNI 100 has no VTEP source", "SourceInterface"}},
		{409, "PATCH", "/config/VxlanEndpoint", `{"SourceInterface":"Loopback2"}`, []string{"Loopback2 has no IPv4 address"}},
		{400, "PATCH", "/config/VxlanEndpoint", `{"SourceInterface":"Loopback9"}`, []string{"Loopback9"}},
	}
	check := func(when string) {
		for _, tt := range bad {
			r := s.do(t, tt.method, tt.path, tt.body)
			if r.code != tt.status {
				t.Errorf("%s: %s %s %s: %s; want %d", when, tt.method, tt.path, tt.body, r, tt.status)
				continue
			}
			for _, w := range tt.says {
				if !strings.Contains(string(r.raw), w) {
					t.Errorf("%s: %s %s %s: %s; want it to say %q", when, tt.method, tt.path, tt.body, r, w)
				}
			}
		}
	}
	check("without a VTEP")
	if n := len(s.listAll(t, "/config/VxlanInstances", 10)); n != 0 {
		t.Fatalf("refused VNIs were kept: %d", n)
	}
	s.expect(t, 200, "PATCH", "/config/VxlanEndpoint", `{"SourceInterface":"Loopback1"}`)
	s.expect(t, 201, "POST", "/config/VxlanInstance", `{"Vni":100,"VlanId":10,"ImportRouteTargets":["65000:100"],"ExportRouteTargets":["65000:100"]}`)
	s.expect(t, 201, "POST", "/config/EvpnL3Vni", `{"Vrf":"red","Vni":4001,"VlanId":4000}`)
	s.expect(t, 200, "PATCH", "/config/BGPL2vpnEvpn", `{"AdvertiseAllVni":true}`)
	s.expect(t, 201, "POST", "/config/BGPL2vpnEvpnNeighbor", `{"Neighbor":"10.0.0.2"}`)
	before := jsonOf(s.listAll(t, "/config/VxlanInstances", 10)) + jsonOf(s.listAll(t, "/config/EvpnL3Vnis", 10)) +
		jsonOf(s.expect(t, 200, "GET", "/config/VxlanEndpoint", "").object())
	bad = []struct {
		status             int
		method, path, body string
		says               []string
	}{
		{409, "PATCH", "/config/EvpnL3Vni", `{"Vrf":"red","Vni":100,"VlanId":20}`, []string{"VNI 100 would be used twice", "VLAN 10", "VLAN 20", "a VNI is on one VLAN"}},
		{409, "POST", "/config/VxlanInstance", `{"Vni":200,"VlanId":10}`, []string{"VLAN 10 would carry two VNIs", "VNI 100", "VNI 200"}},
		{409, "PATCH", "/config/VxlanInstance", `{"Vni":100,"VlanId":4000}`, []string{"VLAN 4000 would carry two VNIs"}},
		{409, "PATCH", "/config/VxlanEndpoint", `{"SourceInterface":"Loopback2"}`, []string{"Loopback2 has no IPv4 address"}},
		{409, "DELETE", "/config/IPv4Intf", `{"IntfRef":"Loopback1"}`, []string{"Loopback1 has no IPv4 address"}},
		{400, "POST", "/config/VxlanInstance", `{"Vni":16777216,"VlanId":20}`, []string{"Vni", "16777215"}},
		{400, "POST", "/config/VxlanInstance", `{"Vni":0,"VlanId":20}`, []string{"Vni"}},
		{400, "POST", "/config/EvpnL3Vni", `{"Vrf":"blue","Vni":5001,"VlanId":20}`, []string{"Vrf", "blue", "does not exist"}},
		{400, "POST", "/config/EvpnL3Vni", `{"Vrf":"default","Vni":5001,"VlanId":20}`, []string{"default VRF"}},
		{400, "POST", "/config/VxlanInstance", `{"Vni":300,"VlanId":30}`, []string{"Vlan", "30", "does not exist"}},
		{400, "POST", "/config/VxlanInstance", `{"Vni":300,"VlanId":20,"ImportRouteTargets":["65000"]}`, []string{"ImportRouteTargets", "65000:100"}},
		{409, "POST", "/config/BGPL2vpnEvpnNeighbor", `{"Neighbor":"192.0.2.9"}`, []string{"192.0.2.9", "no BGPv4Neighbor"}},
		{409, "DELETE", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.0.0.2"}`, []string{"10.0.0.2", "EVPN neighbour"}},
	}
	check("with a VTEP")
	after := jsonOf(s.listAll(t, "/config/VxlanInstances", 10)) + jsonOf(s.listAll(t, "/config/EvpnL3Vnis", 10)) +
		jsonOf(s.expect(t, 200, "GET", "/config/VxlanEndpoint", "").object())
	if before != after {
		t.Errorf("refused changes changed the configuration:\n%s\n%s", before, after)
	}

	vnis := objects(s.listAll(t, "/state/EvpnVnis", 10))
	if len(vnis) != 2 || vnis[0]["Vni"] != float64(100) || vnis[0]["Type"] != "L2" || vnis[0]["LocalVtep"] != "10.255.0.1" ||
		vnis[1]["Vni"] != float64(4001) || vnis[1]["Type"] != "L3" || vnis[1]["Vrf"] != "red" {
		t.Errorf("EvpnVniState: %v", vnis)
	}
	if st := s.expect(t, 200, "GET", "/state/VxlanInstance", `{"Vni":100}`).object(); st["OperState"] != "UP" || st["VxlanIntf"] != "vxlan100" {
		t.Errorf("VxlanInstance state: %v", st)
	}
	if st := s.expect(t, 200, "GET", "/state/VxlanEndpoint", "").object(); st["SourceAddress"] != "10.255.0.1" || st["Vnis"] != float64(2) {
		t.Errorf("VxlanEndpoint state: %v", st)
	}
	// The CLI's views of them, declared with the kinds.
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"show vxlan vtep", []string{"SourceInterface", "Loopback1", "SourceAddress", "10.255.0.1"}},
		{"show evpn vni", []string{"Vni", "VxlanIntf", "NumRemoteVteps", "100", "L2", "vxlan100", "4001", "L3", "red"}},
		{"show bgp l2vpn evpn summary", []string{"Neighbor", "PfxRcd", "10.0.0.2", "65002"}},
	} {
		out, code := runCLI(t, s, "", "-c", c.cmd)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", c.cmd, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.cmd, w, out)
			}
		}
	}
}
