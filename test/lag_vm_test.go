package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/vmtest"
)

// TestTwoSwitchLAGInVM runs TestVMTwoSwitchLAG in the stock-kernel VM
// (the host kernel has no bonding driver), with the binary this run built.
func TestTwoSwitchLAGInVM(t *testing.T) {
	vmtest.RunTests(t, "^TestVMTwoSwitchLAG$", 4*time.Minute, envSwmgrBinary+"="+swmgrBin) // ~1.5 min on an idle machine
}

// TestVMTwoSwitchLAG: two `swmgr serve --backend linux --lldp lldpd`, each
// managing a switch namespace, joined by two veth pairs (fpPort1 to
// fpPort1, fpPort2 to fpPort2), with a host behind each one's fpPort3.
// PortChannel1 of both links with LACP active on each side comes up
// (both members collecting and distributing on both sides); the hosts,
// in VLAN 10 untagged with PortChannel1 tagged, reach each other; each
// switch learns the far host's MAC in VLAN 10 on PortChannel1; each
// side's lldpd hears the other's (system name, port id) on both members
// within 35 s, and `show lldp neighbors` in the CLI says so; a member cut
// (its Port DOWN on one side) leaves the LAG up on one member; MinLinks 2
// then takes it down.
func TestVMTwoSwitchLAG(t *testing.T) {
	if !vmtest.InVM() {
		t.Skip("needs the bonding driver: runs in the stock-kernel VM (TestTwoSwitchLAGInVM)")
	}
	for _, p := range []string{"/usr/sbin/lldpd", "/usr/sbin/lldpcli", "/bin/busybox"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: %v", p, err)
		}
	}
	prefix := fmt.Sprintf("lag%05d", rand.IntN(100000))
	swA, swB, hA, hB := prefix+"a", prefix+"b", prefix+"ha", prefix+"hb"
	ip := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
		return string(out)
	}
	for _, ns := range []string{swA, swB, hA, hB} {
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		ip("netns", "add", ns)
		ip("-n", ns, "link", "set", "lo", "up")
	}
	for _, p := range []string{"fpPort1", "fpPort2"} {
		ip("-n", swA, "link", "add", p, "type", "veth", "peer", "name", p, "netns", swB)
	}
	for _, sh := range [][2]string{{swA, hA}, {swB, hB}} {
		ip("-n", sh[0], "link", "add", "fpPort3", "type", "veth", "peer", "name", "eth0", "netns", sh[1])
		ip("-n", sh[1], "link", "set", "eth0", "up")
	}
	ip("-n", hA, "addr", "add", "10.40.0.1/24", "dev", "eth0")
	ip("-n", hB, "addr", "add", "10.40.0.2/24", "dev", "eth0")

	// lldpcli runs as _lldpd: it must reach the sockets' directory.
	dir, err := os.MkdirTemp("", "swmgr-lag-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	// lldpOn is when the later of the two switches enabled LLDP: each
	// hears the other within 35 s of that.
	var lldpOn time.Time
	start := func(name, ns string) *server {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(d, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		// A start under the VM's emulation is slower than on a host.
		s := startServerWithin(t, 90*time.Second, filepath.Join(d, "data"), "--backend", "linux", "--netns", ns, "--bgp", "sim", "--ntp", "sim",
			"--system", "host", "--etc-dir", filepath.Join(d, "etc"), "--lldp", "lldpd", "--lldp-dir", filepath.Join(d, "lldpd"))
		s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"`+name+`"}`)
		for _, p := range []string{"fpPort1", "fpPort2", "fpPort3"} {
			s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"`+p+`","AdminState":"UP"}`)
		}
		s.expect(t, 200, "PATCH", "/config/LLDPGlobal", `{"Enable":true,"TranmitInterval":5}`)
		lldpOn = time.Now()
		s.expect(t, 201, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort1","fpPort2"],"LacpMode":0,"Interval":0}`)
		s.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":10,"IntfList":["PortChannel1"],"UntagIntfList":["fpPort3"]}`)
		return s
	}
	a := start("lag-sw-a", swA)
	b := start("lag-sw-b", swB)
	sides := []struct {
		name, peer string
		s          *server
	}{{"lag-sw-a", "lag-sw-b", a}, {"lag-sw-b", "lag-sw-a", b}}

	// members is LaPortChannelIntfRefListState by member port.
	members := func(s *server) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, o := range objects(s.listAll(t, "/state/LaPortChannelIntfRefLists", 100)) {
			out[fmt.Sprint(o["IntfRef"])] = o
		}
		return out
	}
	inBundle := func(m map[string]any) bool {
		return m["LagIntfRef"] == "PortChannel1" && m["Collecting"] == true && m["Distributing"] == true && m["OperState"] == "UP IN BUNDLE"
	}
	waitFor := func(what string, d time.Duration, cond func() bool, show func() any) {
		t.Helper()
		for deadline := time.Now().Add(d); !cond(); time.Sleep(500 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s within %v: %v", what, d, show())
			}
		}
	}
	lagState := func(s *server) map[string]any {
		return s.expect(t, 200, "GET", "/state/LaPortChannel", `{"IntfRef":"PortChannel1"}`).object()
	}
	for _, side := range sides {
		waitFor(side.name+": both members collecting and distributing", 30*time.Second, func() bool {
			m := members(side.s)
			return inBundle(m["fpPort1"]) && inBundle(m["fpPort2"])
		}, func() any { return members(side.s) })
		waitFor(side.name+": PortChannel1 up", 10*time.Second, func() bool { return lagState(side.s)["OperState"] == "UP" }, func() any { return lagState(side.s) })
	}

	ping := func(ns, addr string) bool {
		return exec.Command("ip", "netns", "exec", ns, "busybox", "ping", "-c", "1", "-W", "2", addr).Run() == nil
	}
	waitFor("host A reaches host B over PortChannel1", 20*time.Second, func() bool { return ping(hA, "10.40.0.2") && ping(hB, "10.40.0.1") },
		func() any { return ip("-n", swA, "-d", "link", "show", "PortChannel1") })

	// Each switch learned the far host in VLAN 10 on PortChannel1.
	mac := func(ns string) string {
		out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/eth0/address").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, c := range []struct {
		s       *server
		farHost string
	}{{a, hB}, {b, hA}} {
		far := mac(c.farHost)
		var entry map[string]any
		waitFor("the far host "+far+" learned", 10*time.Second, func() bool {
			ping(hA, "10.40.0.2")
			for _, o := range objects(c.s.listAll(t, "/state/MacTableEntrys", 100)) {
				if strings.EqualFold(fmt.Sprint(o["MacAddr"]), far) && o["VlanId"] == 10.0 {
					entry = o
					return true
				}
			}
			return false
		}, func() any { return objects(c.s.listAll(t, "/state/MacTableEntrys", 100)) })
		if entry["Port"] != "PortChannel1" || entry["Type"] != "learned" {
			t.Errorf("MAC table entry of the far host %s: %v, want learned on PortChannel1 in VLAN 10", far, entry)
		}
	}

	// LLDP: each side hears the other on both members, within 35 s of
	// being enabled; the CLI shows it.
	for _, side := range sides {
		heard := func() bool {
			for _, o := range objects(side.s.listAll(t, "/state/LLDPIntfs", 100)) {
				p := fmt.Sprint(o["IntfRef"])
				if (p == "fpPort1" || p == "fpPort2") && (o["PeerHostName"] != side.peer || o["PeerPort"] != p) {
					return false
				}
			}
			return true
		}
		waitFor(side.name+" hears "+side.peer+" on fpPort1 and fpPort2", 35*time.Second-time.Since(lldpOn), heard,
			func() any { return objects(side.s.listAll(t, "/state/LLDPIntfs", 100)) })
		out, code := runCLI(t, side.s, "show lldp neighbors\n")
		rows := 0
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && (f[0] == "fpPort1" || f[0] == "fpPort2") && f[1] == side.peer && f[2] == f[0] {
				rows++
			}
		}
		if code != 0 || rows != 2 {
			t.Errorf("%s: show lldp neighbors (exit %d) lacks a row of %s per member:\n%s", side.name, code, side.peer, out)
		}
	}
	t.Logf("LLDP heard both ways %v after both switches enabled it", time.Since(lldpOn).Round(time.Second))

	// One member cut: fpPort2 DOWN on switch B. PortChannel1 stays up on
	// fpPort1 on both sides and carries traffic.
	b.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"DOWN"}`)
	for _, side := range sides {
		waitFor(side.name+": fpPort2 out of the bundle, fpPort1 in", 15*time.Second, func() bool {
			m := members(side.s)
			return inBundle(m["fpPort1"]) && !inBundle(m["fpPort2"]) && m["fpPort2"]["OperState"] == "DOWN"
		}, func() any { return members(side.s) })
		if st := lagState(side.s); st["OperState"] != "UP" {
			t.Errorf("%s: PortChannel1 with one member left: %v", side.name, st)
		}
	}
	waitFor("host A reaches host B over the one member left", 10*time.Second, func() bool { return ping(hA, "10.40.0.2") }, func() any { return members(a) })

	// MinLinks 2 with one member left takes PortChannel1 down on A.
	a.expect(t, 200, "PATCH", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","MinLinks":2}`)
	waitFor("lag-sw-a: PortChannel1 down with MinLinks 2", 10*time.Second, func() bool { return lagState(a)["OperState"] == "DOWN" }, func() any { return lagState(a) })
	if ping(hA, "10.40.0.2") {
		t.Error("host A still reaches host B through a LAG MinLinks took down")
	}
}
