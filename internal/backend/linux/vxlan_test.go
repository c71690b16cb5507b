package linux

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// TestEVPNInVM runs the two-switch EVPN test in the stock-kernel VM (it
// needs VLAN-filtering bridges, 802.1Q and dummy loopbacks).
func TestEVPNInVM(t *testing.T) {
	vmtest.RunTests(t, "^TestEVPNTwoSwitchesOnLinux$", 5*time.Minute) // 78 s with the boot on a quiet machine, 119 s under load
}

// TestEVPNTwoSwitchesOnLinux: two switches, each swmgr's engine on the
// Linux backend with its own FRR, joined by a veth underlay (fpPort3 on
// both) with eBGP and the EVPN family; each has a host on fpPort1,
// untagged in VLAN 10, which is VNI 100 from the VTEP on Loopback1. The
// hosts reach each other across VXLAN; the remote host's MAC is a remote
// MAC of VNI 100 and a type-2 route in the switch's state, the VNI's
// remote VTEP is the other switch's loopback; the EVPN session's state
// is Established. Each also has a host in VRF red (VLAN 20, a subnet of
// its own): they reach each other across L3 VNI 4001, the other's subnet
// a type-5 route. Deleting the VNI removes its device.
func TestEVPNTwoSwitchesOnLinux(t *testing.T) {
	frrtest.Need(t)
	var labs [2]*lab
	for i := range labs {
		labs[i] = newLabNamed(t, fmt.Sprintf("ev%c", 'a'+i), 2, KernelOptions{})
		k := labs[i].k
		needFeature(t, k, k.Features().BridgeVLAN && k.Features().VLAN && k.Features().Dummy, "VLAN-filtering bridges, 802.1Q and dummy loopbacks")
		labs[i].k.Close()
		labs[i].k = nil
	}
	run(t, "ip", "-n", labs[0].sw, "link", "add", "fpPort3", "type", "veth", "peer", "name", "fpPort3", "netns", labs[1].sw)
	var sws [2]*sw
	var dirs [2]string
	for i, l := range labs {
		dir := daemonDir(t, l.prefix)
		dirs[i] = dir
		s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) { o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")} })
		sws[i] = s
		me, peer := i+1, 2-i
		l.host(1, "ip", "addr", "add", fmt.Sprintf("10.100.0.%d/24", me), "dev", "eth0")
		l.host(2, "ip", "addr", "add", fmt.Sprintf("10.2%d.0.10/24", me), "dev", "eth0")
		l.host(2, "ip", "route", "add", "default", "via", fmt.Sprintf("10.2%d.0.1", me))
		// Routing across the L3 VNI needs forwarding, whoever turns it on.
		run(t, "ip", "netns", "exec", l.sw, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		s.mustCommit(
			s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
			s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort3", "AdminState": "UP"}),
			s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort3", "IpAddr": fmt.Sprintf("10.203.0.%d/30", me)}),
			s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
			s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": fmt.Sprintf("10.255.0.%d/32", me)}),
			s.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort1"}}),
			s.edit(backend.Update, "VxlanEndpoint", model.Object{"Vrf": "default", "SourceInterface": "Loopback1"}),
			s.edit(backend.Create, "VxlanInstance", model.Object{"Vni": int64(100), "VlanId": int64(10)}),
			s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": fmt.Sprint(65000 + me), "RouterId": fmt.Sprintf("10.255.0.%d", me),
				"Redistribution": []model.Object{{"Sources": "CONNECTED"}}}),
			s.edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": fmt.Sprintf("10.203.0.%d", peer), "PeerAS": fmt.Sprint(65000 + peer),
				"HoldTime": int64(9), "KeepaliveTime": int64(3), "ConnectRetryTime": int64(1)}),
			s.edit(backend.Update, "BGPL2vpnEvpn", model.Object{"Vrf": "default", "AdvertiseAllVni": true}),
			s.edit(backend.Create, "BGPL2vpnEvpnNeighbor", model.Object{"Neighbor": fmt.Sprintf("10.203.0.%d", peer)}),
			// Tenant VRF red: a host subnet of its own on each switch (VLAN
			// 20 on fpPort2), routed across L3 VNI 4001 (VLAN 4001) with
			// type-5 routes.
			s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
			s.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
			s.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(20), "UntagIntfList": []string{"fpPort2"}}),
			s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "vlan20", "IpAddr": fmt.Sprintf("10.2%d.0.1/24", me), "Vrf": "red"}),
			s.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(4001), "AutoState": "DOWN"}),
			s.edit(backend.Create, "EvpnL3Vni", model.Object{"Vrf": "red", "Vni": int64(4001), "VlanId": int64(4001)}),
			s.edit(backend.Create, "BGPVrf", model.Object{"Name": "red", "Redistribution": []model.Object{{"Sources": "CONNECTED"}}}),
		)
	}
	a := sws[0]
	if dev := run(t, "ip", "-n", labs[0].sw, "-o", "link", "show", "dev", "vxlan100"); !strings.Contains(dev, "master bridge") {
		t.Errorf("vxlan100: %s", dev)
	}
	if !eventually(90*time.Second, func() bool { return labs[0].ping(1, "10.100.0.2") }) {
		t.Fatalf("host 1 cannot reach host 2 across VXLAN:\n%s", frrtest.Run(t, "ip", "netns", "exec", labs[0].sw, "bridge", "fdb", "show", "dev", "vxlan100"))
	}
	peerMAC := strings.Fields(strings.TrimSpace(run(t, "ip", "-n", labs[1].hosts[0], "-br", "link", "show", "eth0")))[2]
	ctx := context.Background()
	list := func(kind string) []model.Object {
		objs, err := a.be.Dataplane()[kind].List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	var macs []model.Object
	if !eventually(30*time.Second, func() bool {
		macs = list("EvpnMacState")
		for _, m := range macs {
			if m.Int("Vni") == 100 && m.Str("MacAddr") == peerMAC && m.Str("Type") == "remote" && m.Str("RemoteVtep") == "10.255.0.2" {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no remote MAC %s in VNI 100: %v", peerMAC, macs)
	}
	found := false
	for _, r := range list("EvpnRouteState") {
		found = found || (r.Int("RouteType") == 2 && r.Str("Mac") == peerMAC && r.Str("NextHop") == "10.255.0.2")
	}
	if !found {
		t.Errorf("no type-2 route of %s: %v", peerMAC, list("EvpnRouteState"))
	}
	vnis := list("EvpnVniState")
	if len(vnis) < 1 || vnis[0].Int("Vni") != 100 || vnis[0].Str("LocalVtep") != "10.255.0.1" || strings.Join(vnis[0].List("RemoteVteps"), ",") != "10.255.0.2" {
		t.Errorf("VNIs %v", vnis)
	}
	if st := a.stateOf("BGPL2vpnEvpnNeighbor", model.Object{"Neighbor": "10.203.0.2"}); num(st["SessionState"]) != 6 || num(st["PrefixesReceived"]) == 0 {
		t.Errorf("EVPN neighbour's state %v", st)
	}
	if st := a.stateOf("VxlanInstance", model.Object{"Vni": int64(100)}); st["OperState"] != "UP" || st["VxlanIntf"] != "vxlan100" {
		t.Errorf("VxlanInstance state %v", st)
	}
	// Across VRF red: type-5 routes over the L3 VNI.
	vtysh := func(cmd string) string {
		return frrtest.Run(t, "ip", "netns", "exec", labs[0].sw, "vtysh", "--vty_socket", filepath.Join(dirs[0], "frr"), "-c", cmd)
	}
	if !eventually(60*time.Second, func() bool { return labs[0].ping(2, "10.22.0.10") }) {
		t.Errorf("host 2 of switch 1 cannot reach host 2 of switch 2 across L3 VNI 4001:\n%s\n%s\n%s", vtysh("show evpn vni detail json"), vtysh("show bgp l2vpn evpn"), vtysh("show ip route vrf red"))
	}
	found = false
	for _, r := range list("EvpnRouteState") {
		found = found || (r.Int("RouteType") == 5 && r.Str("IpAddr") == "10.22.0.0/24" && r.Str("NextHop") == "10.255.0.2")
	}
	if !found {
		t.Errorf("no type-5 route of 10.22.0.0/24: %v", list("EvpnRouteState"))
	}
	l3 := false
	for _, v := range list("EvpnVniState") {
		l3 = l3 || (v.Int("Vni") == 4001 && v.Str("Type") == "L3" && v.Str("Vrf") == "red" && v.Str("VxlanIntf") == "vxlan4001")
	}
	if !l3 {
		t.Errorf("no L3 VNI 4001 of VRF red: %v\n%s", list("EvpnVniState"), vtysh("show evpn vni detail json"))
	}
	a.mustCommit(a.edit(backend.Delete, "VxlanInstance", model.Object{"Vni": int64(100)}))
	if dev := linkShow(t, labs[0].sw); strings.Contains(dev, "vxlan100") {
		t.Errorf("vxlan100 outlived its VNI:\n%s", dev)
	}
}

// TestL3VNINeedsVRFDevices: where VRFs are namespaces (no VRF devices),
// an L3 VNI is refused by the check phase, saying why: FRR maps an L3
// VNI to a VRF device.
func TestL3VNINeedsVRFDevices(t *testing.T) {
	l := newLab(t, 1, KernelOptions{ForceVRFNetns: true})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) { o.Kernel.ForceVRFNetns = true })
	err := drivers["EvpnL3Vni"].check(s.be, changeOf{After: model.Object{"Vrf": "red", "Vni": int64(4001), "VlanId": int64(4001)}})
	if err == nil || !strings.Contains(err.Error(), "needs VRF devices") {
		t.Fatalf("an L3 VNI without VRF devices: %v", err)
	}
	if err := drivers["VxlanInstance"].check(s.be, changeOf{After: model.Object{"Vni": int64(100), "VlanId": int64(10)}}); err != nil {
		t.Errorf("an L2 VNI needs no VRF device: %v", err)
	}
}
