package frr_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// TestEVPNWithRealFRR: the FRR under test and the peer FRR exchange EVPN
// routes over their eBGP session for VNI 100, each VNI a VXLAN device
// (from the VTEP's loopback address) in a bridge with a host's veth (a
// bridge without VLAN filtering: FRR maps the VNI to it just the same, and
// the test machines' kernel has no VLAN filtering). The hosts reach each
// other across VXLAN, the peer's host's MAC is a remote MAC of VNI 100
// and a type-2 route, its VTEP is a remote VTEP of the VNI, and applying
// the configuration again sends nothing.
func TestEVPNWithRealFRR(t *testing.T) {
	frrtest.Need(t)
	fl := frrtest.New(t, frrtest.Options{Prefix: "ev", Subnet: "10.202.0", Announce: "10.255.0.2/32"})
	p := fl.Peer
	run(t, "ip", "-n", fl.SwitchNS, "addr", "add", p.SwitchAddr+"/30", "dev", fl.SwitchPort)
	run(t, "ip", "-n", fl.SwitchNS, "link", "set", fl.SwitchPort, "up")
	run(t, "ip", "-n", fl.SwitchNS, "addr", "add", "10.255.0.1/32", "dev", "lo")
	hosts := map[string]string{}
	for i, ns := range []string{fl.SwitchNS, p.Netns} {
		h := fmt.Sprintf("%sh%d", fl.ID, i+1)
		hosts[ns] = h
		run(t, "ip", "netns", "add", h)
		t.Cleanup(func() { run(t, "ip", "netns", "del", h) })
		run(t, "ip", "-n", ns, "link", "add", "br100", "type", "bridge")
		run(t, "ip", "-n", ns, "link", "add", "vxlan100", "type", "vxlan", "id", "100", "local", fmt.Sprintf("10.255.0.%d", i+1), "dstport", "4789", "nolearning")
		run(t, "ip", "-n", ns, "link", "add", "hostport", "type", "veth", "peer", "name", "eth0", "netns", h)
		for _, d := range []string{"vxlan100", "hostport"} {
			run(t, "ip", "-n", ns, "link", "set", d, "master", "br100")
		}
		for _, d := range []string{"br100", "vxlan100", "hostport"} {
			run(t, "ip", "-n", ns, "link", "set", d, "up")
		}
		run(t, "ip", "-n", h, "link", "set", "eth0", "up")
		run(t, "ip", "-n", h, "addr", "add", fmt.Sprintf("10.100.0.%d/24", i+1), "dev", "eth0")
	}
	evpn := func(neighbor string) frr.EVPN {
		return frr.EVPN{AdvertiseAllVNI: true, Neighbors: []frr.EVPNNeighbor{{Name: neighbor}},
			VNIs: []frr.VNI{{VNI: 100, Import: []string{"65000:100"}, Export: []string{"65000:100"}}}}
	}
	ctx := context.Background()
	peerCfg := p.Config("65001")
	peerCfg.EVPN = evpn(p.SwitchAddr)
	if err := p.Router.Apply(ctx, peerCfg); err != nil {
		t.Fatal(err)
	}
	sw := frrtest.StartRouter(t, fl.Dir+"/switch", fl.SwitchNS)
	cfg := frr.Config{
		Instances: []frr.Instance{{ASNum: "65001", RouterID: "10.255.0.1", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{frrtest.FastNeighbor(p.Addr, "65002")},
		EVPN:      evpn(p.Addr),
	}
	if err := sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if plan, err := sw.Plan(ctx, cfg); err != nil || len(plan) != 0 {
		t.Fatalf("applying the same EVPN configuration again should send nothing, plan=%q err=%v", plan, err)
	}
	running := frrtest.RunningBGP(t, sw)
	for _, want := range []string{"address-family l2vpn evpn", "neighbor " + p.Addr + " activate", "advertise-all-vni", "vni 100", "route-target import 65000:100"} {
		if !strings.Contains(running, want) {
			t.Errorf("FRR runs no %q:\n%s", want, running)
		}
	}
	needPing(t)
	waitFor(t, "host 1 to reach host 2 across VXLAN", 60*time.Second, func() bool {
		return exec1(hosts[fl.SwitchNS], "busybox", "ping", "-c", "1", "-W", "1", "10.100.0.2") == nil
	})
	peerMAC := strings.TrimSpace(run(t, "ip", "-n", hosts[p.Netns], "-br", "link", "show", "eth0"))
	peerMAC = strings.Fields(peerMAC)[2]
	var macs []frr.MACState
	waitFor(t, "the peer host's MAC as a remote MAC of VNI 100", 30*time.Second, func() bool {
		var err error
		if macs, err = sw.MACs(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range macs {
			if m.VNI == 100 && m.MAC == peerMAC && m.Type == "remote" && m.RemoteVTEP == "10.255.0.2" {
				return true
			}
		}
		return false
	})
	routes, err := sw.EVPNRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range routes {
		if r.RouteType == 2 && r.MAC == peerMAC && r.NextHop == "10.255.0.2" && !r.Local {
			found = true
		}
	}
	if !found {
		t.Errorf("no type-2 route of %s via 10.255.0.2 in %+v", peerMAC, routes)
	}
	vnis, err := sw.VNIs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(vnis) != 1 || vnis[0].VNI != 100 || vnis[0].LocalVTEP != "10.255.0.1" || len(vnis[0].RemoteVTEPs) != 1 || vnis[0].RemoteVTEPs[0] != "10.255.0.2" {
		t.Errorf("VNIs %+v", vnis)
	}
	peers, err := sw.EVPNPeers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := peers[p.Addr]; st.State != frr.SessionEstablished || st.PfxRcd == 0 {
		t.Errorf("EVPN session %+v", st)
	}
	// A VRF's L3 VNI is zebra's vrf/vni (the VRF need not exist yet), and
	// goes with it.
	zebra := func() string {
		return run(t, "ip", "netns", "exec", fl.SwitchNS, "vtysh", "--vty_socket", fl.Dir+"/switch", "-d", "zebra", "-c", "show running-config")
	}
	cfg.EVPN.L3VNIs = []frr.L3VNI{{VRF: "red", VNI: 4001, AdvertiseIPv4Unicast: true}}
	if err := sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if z := zebra(); !strings.Contains(z, "vrf red\n vni 4001\n") {
		t.Errorf("zebra has no L3 VNI 4001 for red:\n%s", z)
	}
	// EVPN off: the family goes, the L3 VNI with it.
	cfg.EVPN = frr.EVPN{}
	if err := sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if running := frrtest.RunningBGP(t, sw); strings.Contains(running, "l2vpn evpn") {
		t.Errorf("EVPN still configured:\n%s", running)
	}
	if z := zebra(); strings.Contains(z, "vni 4001") {
		t.Errorf("zebra kept L3 VNI 4001:\n%s", z)
	}
}

// needPing skips the test (fails it in CI) without busybox, whose ping it
// sends.
func needPing(t testing.TB) {
	t.Helper()
	testneed.Program(t, "busybox-static", "busybox")
}

// exec1 runs a command in a namespace, quietly.
func exec1(ns string, args ...string) error {
	return exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).Run()
}

// BenchmarkEVPNApply4000VNIsToFRR applies 4,000 VNIs with their RD and
// route targets to a real FRR in one apply (read its running
// configuration, diff, send about 20,000 commands over the vty) and
// removes them again, untimed.
func BenchmarkEVPNApply4000VNIsToFRR(b *testing.B) {
	fl := frrtest.New(b, frrtest.Options{Prefix: "eb", Subnet: "10.204.0"})
	r := frrtest.StartRouter(b, fl.Dir+"/switch", fl.SwitchNS)
	ctx := context.Background()
	base := frr.Config{Instances: []frr.Instance{{ASNum: "65001", RouterID: "10.255.0.1"}},
		Neighbors: []frr.Neighbor{frrtest.FastNeighbor(fl.Peer.Addr, "65002")},
		EVPN:      frr.EVPN{AdvertiseAllVNI: true, Neighbors: []frr.EVPNNeighbor{{Name: fl.Peer.Addr}}}}
	full := base
	for i := 1; i <= 4000; i++ {
		vni := uint32(10000 + i)
		rt := fmt.Sprintf("65000:%d", vni)
		full.EVPN.VNIs = append(full.EVPN.VNIs, frr.VNI{VNI: vni, RD: fmt.Sprintf("10.255.0.1:%d", i), Import: []string{rt}, Export: []string{rt}})
	}
	if err := r.Apply(ctx, base); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := r.Apply(ctx, full); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if plan, err := r.Plan(ctx, full); err != nil || len(plan) != 0 {
			b.Fatalf("after the apply FRR differs: %d commands, %v", len(plan), err)
		}
		if err := r.Apply(ctx, base); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
