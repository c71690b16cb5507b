package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend/linux"
	"github.com/swmgr/swmgr/internal/dhcrelay/dhcptest"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// envFabricVM must be "1" for TestFabricInVM to run: the fabric in the VM
// takes minutes of a CPU, so `go test ./...` leaves it to .ci/run, which
// runs it beside the suite.
const envFabricVM = "SWMGR_FABRICVM"

// envFabricVMAnsible, set to 1 beside envFabricVM, has TestFabricInVM
// build the fabric a second time through the Ansible collection
// (TestFabricOverlayThroughAnsible, about 3 more minutes). CI does not
// set it yet: one run in three lost the ping across VRF red after that
// build (docs/linux-backend.md).
const envFabricVMAnsible = "SWMGR_FABRICVM_ANSIBLE"

// TestFabricInVM runs TestFabricOverlay, and with SWMGR_FABRICVM_ANSIBLE=1
// then TestFabricOverlayThroughAnsible (the same fabric built again, from
// fresh namespaces and data directories, with the collection's playbooks),
// in one VM booting Debian's stock kernel (bonding, VRF devices, 802.1Q,
// VLAN-filtering bridges), with the swmgr binary this package built on
// the host and the Ansible collection built and installed on the host
// (ansibleEnv: in the VM the build took 47 s). The VM gets 2 GB: four
// switches' swmgr, FRR, lldpd and dhcrelay.
func TestFabricInVM(t *testing.T) {
	if os.Getenv(envFabricVM) != "1" {
		t.Skipf("the fabric in the VM takes minutes: .ci/run runs it (%s=1 go test -run TestFabricInVM -timeout 20m ./test)", envFabricVM)
	}
	needFabricTools(t)
	env := []string{envSwmgrBinary + "=" + swmgrBin}
	for _, e := range ansibleEnv(t) {
		if strings.HasPrefix(e, envAnsibleDir+"=") {
			env = append(env, e)
		}
	}
	pattern := "^TestFabricOverlay$"
	if os.Getenv(envFabricVMAnsible) == "1" {
		pattern = "^TestFabricOverlay(ThroughAnsible)?$"
	}
	vmtest.RunTestsWith(t, pattern, 20*time.Minute, vmtest.Options{MemoryMB: 2048, Env: env})
}

// inTheVM is the fabric in the VM: each host bonded to its leaf by two
// links, BFD at 1 s (the emulated CPU runs every daemon of the four
// switches, and on a loaded machine 3 x 300 ms has passed without a
// packet: a session flapped and the overlay's routes with it; the sub-second failover is TestFabricUnderlay's, on this
// machine's kernel), and starts that may take minutes (the four switches
// start together on the VM's one emulated CPU: about a minute on a loaded
// machine).
func inTheVM() fabricShape {
	return fabricShape{bonded: true, bfdInterval: 1000, startWait: 4 * time.Minute}
}

// TestFabricOverlay is the fabric an operator builds for tenants, over
// the underlay of TestFabricUnderlay (the same builder and REST calls),
// configured only through each switch's REST interface, on a kernel with
// bonding, VRF devices and 802.1Q (TestFabricInVM runs it in the VM):
//
//   - each host is bonded to its leaf (802.3ad on the host, an LACP
//     LaPortChannel of fpPort3 and fpPort4 on the leaf), with two VLANs
//     tagged on the bond;
//   - VLAN 10 is L2 VNI 100 on both leaves (no gateway: one subnet,
//     10.10.0.0/24, bridged across the fabric, EVPN type-2);
//   - each leaf's own VLAN (21, 22) has its SVI in tenant VRF red as the
//     host's gateway (10.21.0.1/24, 10.22.0.1/24), and red is routed
//     between the leaves over L3 VNI 4001 (symmetric IRB, EVPN type-5 for
//     the subnets);
//   - the VTEP's source is Loopback1, EVPN runs over the unnumbered
//     underlay's peer group, the spines carry EVPN and have no VNI.
//
// It passes when the underlay's sessions are up (BGP, LLDP, BFD), both
// bonds have both members collecting and distributing, the hosts reach
// each other in VNI 100 with the other's MAC a remote type-2 MAC of the
// VNI, they reach each other across VRF red with the other's subnet a
// type-5 route, and host2's DHCP request, relayed by leaf2 in VRF red,
// reaches a server on host1 in leaf1's part of red and brings host2 its
// lease (the L3 VNI's VLAN interface borrowing a loopback's address: see
// proveRelayInVRF).
func TestFabricOverlay(t *testing.T) {
	buildOverlay(t, false)
}

// TestFabricOverlayThroughAnsible builds the fabric of TestFabricOverlay
// from the same steps with playbooks of the collection, each switch's
// steps one swmgr_config commit (the underlay and overlay as one play, the
// relay in red as another when proveRelayInVRF comes to it), proves it with the same checks, and runs
// the whole play again: nothing changes. TestFabricInVM runs it in the
// same VM, after TestFabricOverlay.
func TestFabricOverlayThroughAnsible(t *testing.T) {
	buildOverlay(t, true)
}

// buildOverlay builds the fabric with its overlay (over REST, or with
// the collection's playbooks) and proves it.
func buildOverlay(t *testing.T, throughAnsible bool) {
	begin := time.Now()
	f := newFabric(t, inTheVM())
	f.needOverlayKernel()
	if throughAnsible {
		f.ansible = ansibleEnv(t)
		// A task per step ran for 11.5 minutes in the VM (a module's
		// Python per task and switch under the emulated CPU); one
		// swmgr_config commit per switch is one module run per switch.
		f.ansibleOneCommit = true
		t.Logf("the collection built and installed %s after the test began", time.Since(begin).Round(100*time.Millisecond))
	}
	for _, h := range []string{"host1", "host2"} {
		f.bondHost(h)
	}
	f.start()
	t.Logf("4 switches started %s after the test began", time.Since(begin).Round(100*time.Millisecond))
	f.apply(append(f.underlaySteps(), f.overlaySteps()...))
	f.proveSessions(3 * time.Minute)
	f.proveBonds()
	f.proveL2VNI()
	f.proveL3VNI()
	f.proveRelayInVRF()
	if f.ansible != nil {
		f.provePlayIdempotent()
	}
	t.Logf("the fabric proved %s after the test began", time.Since(begin).Round(100*time.Millisecond))
}

// needOverlayKernel skips the test on a kernel without what the overlay
// is built of (fails in the VM, whose kernel has it all).
func (f *fabric) needOverlayKernel() {
	k, err := linux.OpenKernel(linux.KernelOptions{Netns: f.switches["leaf1"].ns})
	if err != nil {
		f.t.Fatal(err)
	}
	feat := k.Features()
	k.Close()
	if feat.Bond && feat.VRFDevice && feat.VLAN && feat.BridgeVLAN && feat.Dummy {
		return
	}
	if vmtest.InVM() {
		f.t.Fatalf("the VM's kernel lacks what the overlay needs: %s", feat)
	}
	f.t.Skipf("this kernel lacks bonding, VRF devices, 802.1Q, VLAN filtering or dummy devices (%s); TestFabricInVM runs this test in a VM with Debian's stock kernel", feat)
}

// hostNumber is the digit of a host's or leaf's name.
func hostNumber(name string) string { return name[len(name)-1:] }

// bondHost bonds hostN's eth0 and eth1 (802.3ad, fast LACP) and tags its
// two VLANs on the bond: VLAN 10 (10.10.0.1N/24, VNI 100) and VLAN 2N
// (10.2N.0.10/24, its leaf's subnet of VRF red, the default route).
func (f *fabric) bondHost(host string) {
	ns, n := f.hostNS[host], hostNumber(host)
	f.ip("-n", ns, "link", "add", "bond0", "type", "bond", "mode", "802.3ad", "miimon", "100", "lacp_rate", "fast")
	for _, port := range f.hostPorts() {
		f.ip("-n", ns, "link", "set", hostEnd(port), "master", "bond0")
	}
	f.ip("-n", ns, "link", "set", "bond0", "up")
	for vlan, addr := range map[string]string{"10": "10.10.0.1" + n + "/24", "2" + n: "10.2" + n + ".0.10/24"} {
		dev := "bond0." + vlan
		f.ip("-n", ns, "link", "add", "link", "bond0", "name", dev, "type", "vlan", "id", vlan)
		f.ip("-n", ns, "addr", "add", addr, "dev", dev)
		f.ip("-n", ns, "link", "set", dev, "up")
	}
	f.ip("-n", ns, "route", "add", "default", "via", "10.2"+n+".0.1")
}

// proveBonds: on each leaf both members of PortChannel1 are collecting
// and distributing (LACP agreed with the host's bond).
func (f *fabric) proveBonds() {
	took := f.waitOn([]string{"leaf1", "leaf2"}, "both LAG members collecting and distributing", time.Minute, func(sw *fabricSwitch) (bool, string) {
		var inBundle, states []string
		for _, m := range objects(sw.s.listAll(f.t, "/state/LaPortChannelIntfRefLists", 100)) {
			states = append(states, fmt.Sprintf("%v=%v", m["IntfRef"], m["OperState"]))
			if m["LagIntfRef"] == "PortChannel1" && m["Collecting"] == true && m["Distributing"] == true {
				inBundle = append(inBundle, fmt.Sprint(m["IntfRef"]))
			}
		}
		return len(inBundle) == 2, strings.Join(states, " ")
	})
	f.t.Logf("both leaves' LAGs have both members collecting and distributing %s later", took.Round(100*time.Millisecond))
}

// hostMAC is the MAC of a host's bond (its VLAN devices share it).
func (f *fabric) hostMAC(host string) string {
	out := f.ip("-n", f.hostNS[host], "-br", "link", "show", "bond0")
	return strings.Fields(out)[2]
}

// proveL2VNI: host1 reaches host2 in VLAN 10 across VNI 100, and each
// leaf knows the other host's MAC as a remote MAC of VNI 100 behind the
// other leaf's VTEP (a type-2 route).
func (f *fabric) proveL2VNI() {
	t := f.t
	start := time.Now()
	for deadline := time.Now().Add(time.Minute); f.ping("host1", "10.10.0.12", 1) != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("host1 does not reach host2 in VNI 100: %v\n%s", f.ping("host1", "10.10.0.12", 1), f.vtysh("leaf1", "show evpn vni detail"))
		}
	}
	t.Logf("host1 reaches host2 in VNI 100 %s after the bonds were up", time.Since(start).Round(100*time.Millisecond))
	took := f.waitOn([]string{"leaf1", "leaf2"}, "the other host's MAC a remote MAC of VNI 100", 30*time.Second, func(sw *fabricSwitch) (bool, string) {
		other := map[string]string{"leaf1": "2", "leaf2": "1"}[sw.name]
		mac, vtep := f.hostMAC("host"+other), "10.255.1."+other
		var seen []string
		for _, m := range objects(sw.s.listAll(t, "/state/EvpnMacs", 100)) {
			seen = append(seen, fmt.Sprintf("%v/%v %v %v", m["Vni"], m["MacAddr"], m["Type"], m["RemoteVtep"]))
			if m["Vni"] == float64(100) && m["MacAddr"] == mac && m["Type"] == "remote" && m["RemoteVtep"] == vtep {
				return true, ""
			}
		}
		return false, fmt.Sprintf("want %s remote behind %s; EvpnMacs %s", mac, vtep, strings.Join(seen, ", "))
	})
	t.Logf("each leaf has the other host's MAC as a remote type-2 MAC of VNI 100 %s later", took.Round(100*time.Millisecond))
}

// proveL3VNI: each leaf has the other leaf's subnet of VRF red as a type-5
// route behind the other's VTEP, and host1 reaches host2 across red.
func (f *fabric) proveL3VNI() {
	t := f.t
	took := f.waitOn([]string{"leaf1", "leaf2"}, "the other leaf's subnet of red a type-5 route", time.Minute, func(sw *fabricSwitch) (bool, string) {
		other := map[string]string{"leaf1": "2", "leaf2": "1"}[sw.name]
		prefix, vtep := "10.2"+other+".0.0/24", "10.255.1."+other
		var seen []string
		for _, r := range objects(sw.s.listAll(t, "/state/EvpnRoutes", 200)) {
			if r["RouteType"] != float64(5) {
				continue
			}
			seen = append(seen, fmt.Sprintf("%v via %v", r["IpAddr"], r["NextHop"]))
			if r["IpAddr"] == prefix && r["NextHop"] == vtep {
				return true, ""
			}
		}
		return false, fmt.Sprintf("want %s via %s; type-5 routes: %s", prefix, vtep, strings.Join(seen, ", "))
	})
	t.Logf("each leaf has the other's subnet of red as a type-5 route %s later", took.Round(100*time.Millisecond))
	start := time.Now()
	for deadline := time.Now().Add(time.Minute); f.ping("host1", "10.22.0.10", 1) != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("host1 does not reach host2 across VRF red: %v\n%s", f.ping("host1", "10.22.0.10", 1), f.vtysh("leaf1", "show ip route vrf red"))
		}
	}
	t.Logf("host1 (10.21.0.10) reaches host2 (10.22.0.10) across VRF red over L3 VNI 4001 %s later", time.Since(start).Round(100*time.Millisecond))
}

// vtysh is FRR's view on a switch, for a failure's message.
func (f *fabric) vtysh(name, cmd string) string {
	sw := f.switches[name]
	out, _ := f.in(sw.ns, "vtysh", "--vty_socket", sw.frrDir, "-c", cmd)
	return out
}

// proveRelayInVRF: host2's DHCP request on VLAN 22 is relayed by leaf2 in
// VRF red to a server on host1 (in leaf1's part of red, across the L3
// VNI), which sees option 82 naming vlan22 and offers an address of
// host2's subnet; host2 gets its lease. The offer comes back to leaf2 over
// the L3 VNI, whose devices have no IPv4 address of their own in
// symmetric IRB, and dhcrelay takes an answer only on an interface with
// one: so the L3 VNI's VLAN interface borrows the address of a loopback
// of red (IPv4Unnumbered), as the leaves' uplinks borrow Loopback1's.
func (f *fabric) proveRelayInVRF() {
	t := f.t
	server := dhcptest.StartServer(t, f.hostNS["host1"], "10.22.0.100", "10.22.0.150", "255.255.255.0")
	relayLog := func() string {
		b, _ := os.ReadFile(filepath.Join(f.dir, "leaf2", "dhcrelay", "dhcrelay-red.log"))
		return string(b)
	}
	f.apply(relayInRedSteps())
	// A lease is tried three times: the emulated CPU under load can delay
	// an exchange past udhcpc's few seconds.
	var out string
	for try := 0; try < 3 && !strings.Contains(out, "obtained"); try++ {
		out = dhcptest.Lease(t, f.hostNS["host2"], "bond0.22")
	}
	offered := regexp.MustCompile(`DHCPOFFER\(\S+\) 10\.22\.0\.\d+`).FindString(server.Log())
	if offered == "" || !strings.Contains(server.Log(), "option: 82 agent-id  01:06:76:6c:61:6e:32:32") { // circuit id "vlan22"
		t.Fatalf("host2's request did not reach host1's server through leaf2's relay in red with option 82 vlan22:\n%s\ndnsmasq:\n%s\ndhcrelay:\n%s", out, tail(server.Log(), 3000), tail(relayLog(), 2000))
	}
	t.Logf("host2's request relayed by leaf2 in VRF red reached host1's server across L3 VNI 4001 (circuit id vlan22): %s", offered)
	if !strings.Contains(out, "obtained") {
		t.Fatalf("host2 got no lease through leaf2's relay in red (vlan4001 borrowing LoopbackRed's 10.254.2.1):\n%s\ndhcrelay:\n%s\ndnsmasq:\n%s", out, tail(relayLog(), 2000), tail(server.Log(), 2000))
	}
	t.Logf("host2's lease through leaf2's relay in red, vlan4001 borrowing LoopbackRed's address: %q", strings.TrimSpace(out))
}
