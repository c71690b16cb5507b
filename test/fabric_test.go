package test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// fabricSwitch is one swmgr of the fabric: its namespace, its server and
// the links it has (port → the switch and port at the other end).
type fabricSwitch struct {
	name   string
	ns     string
	frrDir string
	s      *server
	links  map[string]string // fpPortN → "peer-name fpPortM" ("host" for a host port)
	macs   map[string]string // fpPortN → its MAC address
}

// fabric is two spines and two leaves, each a `swmgr serve --backend
// linux` in its own network namespace with its own FRR and lldpd, and a
// host behind each leaf. The switches are joined by veth pairs named as
// their front-panel ports; nothing is configured on them but through
// swmgr's REST interface.
type fabric struct {
	t        *testing.T
	prefix   string
	dir      string
	switches map[string]*fabricSwitch
	hostNS   map[string]string // host name → namespace
}

func needFabricTools(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	frrtest.Need(t)
	for _, p := range []string{"/usr/sbin/lldpd", "/usr/sbin/lldpcli", "/usr/bin/ping"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run installs it", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

func (f *fabric) ip(args ...string) string {
	f.t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (f *fabric) in(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}

// newFabric makes the namespaces and links: leaf N's fpPort1 to spine1's
// fpPortN, its fpPort2 to spine2's fpPortN, its fpPort3 to hostN's eth0.
func newFabric(t *testing.T) *fabric {
	needFabricTools(t)
	dir, err := os.MkdirTemp("", "swmgr-fabric-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // lldpcli runs as _lldpd and must reach its socket
	f := &fabric{t: t, prefix: fmt.Sprintf("fb%04d", rand.IntN(10000)), dir: dir,
		switches: map[string]*fabricSwitch{}, hostNS: map[string]string{}}
	t.Cleanup(func() {
		for _, sw := range f.switches {
			if sw.s != nil {
				sw.s.stop(t)
			}
			killDaemonsOf(sw.frrDir)
			exec.Command("ip", "netns", "del", sw.ns).Run()
		}
		for _, ns := range f.hostNS {
			exec.Command("ip", "netns", "del", ns).Run()
		}
		os.RemoveAll(dir)
	})
	for _, name := range []string{"spine1", "spine2", "leaf1", "leaf2"} {
		sw := &fabricSwitch{name: name, ns: f.prefix + name, frrDir: filepath.Join(dir, name, "frr"), links: map[string]string{}, macs: map[string]string{}}
		f.switches[name] = sw
		f.ip("netns", "add", sw.ns)
	}
	for _, h := range []string{"host1", "host2"} {
		f.hostNS[h] = f.prefix + h
		f.ip("netns", "add", f.hostNS[h])
	}
	link := func(a, aPort, b, bPort string) {
		f.ip("-n", f.switches[a].ns, "link", "add", aPort, "type", "veth", "peer", "name", bPort, "netns", f.switches[b].ns)
		f.switches[a].links[aPort] = b + " " + bPort
		f.switches[b].links[bPort] = a + " " + aPort
	}
	for n, leaf := range []string{"leaf1", "leaf2"} {
		port := fmt.Sprintf("fpPort%d", n+1)
		link(leaf, "fpPort1", "spine1", port)
		link(leaf, "fpPort2", "spine2", port)
		host := fmt.Sprintf("host%d", n+1)
		f.ip("-n", f.switches[leaf].ns, "link", "add", "fpPort3", "type", "veth", "peer", "name", "eth0", "netns", f.hostNS[host])
		f.switches[leaf].links["fpPort3"] = "host"
		f.ip("-n", f.hostNS[host], "link", "set", "eth0", "up")
		f.ip("-n", f.hostNS[host], "link", "set", "lo", "up")
		f.ip("-n", f.hostNS[host], "addr", "add", fmt.Sprintf("10.1.%d.2/24", n+1), "dev", "eth0")
		f.ip("-n", f.hostNS[host], "route", "add", "default", "via", fmt.Sprintf("10.1.%d.1", n+1))
	}
	for _, sw := range f.switches {
		for port := range sw.links {
			out := f.ip("-n", sw.ns, "-o", "link", "show", port)
			if i := strings.Index(out, "link/ether "); i >= 0 {
				sw.macs[port] = strings.Fields(out[i:])[1]
			}
		}
	}
	return f
}

// start runs every switch's swmgr.
func (f *fabric) start() {
	for _, name := range []string{"spine1", "spine2", "leaf1", "leaf2"} {
		sw := f.switches[name]
		sw.s = startServer(f.t, filepath.Join(f.dir, name, "data"), "--backend", "linux", "--netns", sw.ns,
			"--bgp", "frr", "--frr-dir", sw.frrDir, "--ntp", "sim", "--system", "sim",
			"--lldp", "lldpd", "--lldp-dir", filepath.Join(f.dir, name, "lldpd"))
	}
}

// configureOverREST configures the underlay the way an operator's script
// would, one REST call per object: fabric ports up with their IPv6
// link-local addresses, a loopback, eBGP unnumbered to every neighbour
// switch in one peer group (spines share AS 65100, each leaf has its own),
// multipath, LLDP; a leaf's host port gets the host's gateway address.
func (f *fabric) configureOverREST() {
	t := f.t
	for name, sw := range f.switches {
		s := sw.s
		as, id := "65100", ""
		switch name {
		case "spine1":
			id = "10.255.0.1"
		case "spine2":
			id = "10.255.0.2"
		case "leaf1":
			as, id = "65101", "10.255.1.1"
		case "leaf2":
			as, id = "65102", "10.255.1.2"
		}
		s.expect(t, 200, "PATCH", "/config/SystemParam", fmt.Sprintf(`{"Vrf":"default","Hostname":%q}`, name))
		s.expect(t, 200, "PATCH", "/config/LLDPGlobal", `{"Enable":true,"TranmitInterval":5}`)
		s.expect(t, 201, "POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`)
		s.expect(t, 201, "POST", "/config/IPv4Intf", fmt.Sprintf(`{"IntfRef":"Loopback1","IpAddr":"%s/32"}`, id))
		s.expect(t, 200, "PATCH", "/config/BGPGlobal", fmt.Sprintf(`{"Vrf":"default","ASNum":%q,"RouterId":%q,"UseMultiplePaths":true,"EBGPMaxPaths":4,"Redistribution":[{"Sources":"CONNECTED"}]}`, as, id))
		s.expect(t, 201, "POST", "/config/BGPv4PeerGroup", `{"Name":"FABRIC","PeerAS":"external","HoldTime":9,"KeepaliveTime":3,"ConnectRetryTime":1}`)
		for port, peer := range sw.links {
			s.expect(t, 200, "PATCH", "/config/Port", fmt.Sprintf(`{"IntfRef":%q,"AdminState":"UP"}`, port))
			if peer == "host" {
				n := strings.TrimPrefix(name, "leaf")
				s.expect(t, 201, "POST", "/config/IPv4Intf", fmt.Sprintf(`{"IntfRef":%q,"IpAddr":"10.1.%s.1/24"}`, port, n))
				continue
			}
			s.expect(t, 201, "POST", "/config/IPv6Intf", fmt.Sprintf(`{"IntfRef":%q}`, port))
			s.expect(t, 201, "POST", "/config/BGPv4Neighbor", fmt.Sprintf(`{"IntfRef":%q,"PeerGroup":"FABRIC"}`, port))
		}
	}
}

// waitAll polls until cond holds for every switch, or fails naming the
// switches it does not hold for and what they said.
func (f *fabric) waitAll(what string, timeout time.Duration, cond func(sw *fabricSwitch) (bool, string)) time.Duration {
	f.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		var missing []string
		for _, name := range []string{"spine1", "spine2", "leaf1", "leaf2"} {
			if ok, why := cond(f.switches[name]); !ok {
				missing = append(missing, name+": "+why)
			}
		}
		if len(missing) == 0 {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: not after %s on\n%s", what, timeout, strings.Join(missing, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// lldpRight: every fabric port of the switch hears the switch and port
// the fabric wired to it: the port by its name, the switch by its chassis
// id (lldpd's is the MAC address of one of the switch's ports).
func (f *fabric) lldpRight(sw *fabricSwitch) (bool, string) {
	got := map[string][2]string{}
	for _, o := range objects(sw.s.listAll(f.t, "/state/LLDPIntfs", 100)) {
		ref, _ := o["IntfRef"].(string)
		port, _ := o["PeerPort"].(string)
		mac, _ := o["PeerMac"].(string)
		got[ref] = [2]string{port, mac}
	}
	for port, peer := range sw.links {
		if peer == "host" {
			continue
		}
		peerSwitch, peerPort, _ := strings.Cut(peer, " ")
		heard := got[port]
		if heard[0] != peerPort || !slices.Contains(slices.Collect(maps.Values(f.switches[peerSwitch].macs)), heard[1]) {
			return false, fmt.Sprintf("%s hears port %q of chassis %q, want %s", port, heard[0], heard[1], peer)
		}
	}
	return true, ""
}

// bgpEstablished: every neighbour of the switch is Established.
func (f *fabric) bgpEstablished(sw *fabricSwitch) (bool, string) {
	list := objects(sw.s.listAll(f.t, "/state/BGPv4Neighbors", 100))
	want := 0
	for _, peer := range sw.links {
		if peer != "host" {
			want++
		}
	}
	up := 0
	var states []string
	for _, o := range list {
		states = append(states, fmt.Sprintf("%v=%v", o["IntfRef"], o["SessionState"]))
		if o["SessionState"] == float64(6) {
			up++
		}
	}
	return up == want, fmt.Sprintf("%d of %d Established: %s", up, want, strings.Join(states, " "))
}

func (f *fabric) ping(from, to string, count int) error {
	out, err := f.in(f.hostNS[from], "ping", "-c", fmt.Sprint(count), "-i", "0.2", "-W", "1", to)
	if err != nil {
		return fmt.Errorf("ping %s from %s: %v\n%s", to, from, err, out)
	}
	return nil
}

// TestFabricUnderlay builds the fabric's underlay through swmgr alone
// (REST, as an operator's script does) on this machine's kernel: LLDP
// names every link right on every switch, every BGP unnumbered session is
// Established, the hosts reach each other across the spines over both
// paths, and when spine1 loses all its links the hosts still reach each
// other through spine2 (the time traffic was lost is logged).
func TestFabricUnderlay(t *testing.T) {
	f := newFabric(t)
	f.start()
	begin := time.Now()
	f.configureOverREST()
	t.Logf("configured 4 switches over REST in %s", time.Since(begin).Round(time.Millisecond))

	took := f.waitAll("BGP unnumbered Established", 90*time.Second, f.bgpEstablished)
	t.Logf("all 8 sessions Established %s after the configuration", took.Round(100*time.Millisecond))
	took = f.waitAll("LLDP neighbours right", 60*time.Second, f.lldpRight)
	t.Logf("LLDP right on every link %s later", took.Round(100*time.Millisecond))

	// Both leaves learned the other's host subnet over both spines.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := f.in(f.switches["leaf1"].ns, "ip", "route", "show", "10.1.2.0/24")
		if strings.Count(out, "nexthop") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaf1 has no two-path route to host2's subnet:\n%s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := f.ping("host1", "10.1.2.2", 3); err != nil {
		t.Fatal(err)
	}

	// spine1 loses its links: the leaves see their ports go down, drop the
	// sessions and the paths through it; host traffic continues via spine2.
	pinger := exec.Command("ip", "netns", "exec", f.hostNS["host1"], "ping", "-i", "0.01", "-w", "20", "10.1.2.2")
	var pings strings.Builder
	pinger.Stdout = &pings
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cut := time.Now()
	for port := range f.switches["spine1"].links {
		f.ip("-n", f.switches["spine1"].ns, "link", "set", port, "down")
	}
	for {
		out, _ := f.in(f.switches["leaf1"].ns, "ip", "route", "show", "10.1.2.0/24")
		if strings.Contains(out, "via inet6") && !strings.Contains(out, "nexthop") || strings.Count(out, "via") == 1 {
			t.Logf("leaf1's route to host2 lost spine1's path %s after the cut: %s", time.Since(cut).Round(time.Millisecond), strings.TrimSpace(out))
			break
		}
		if time.Since(cut) > 20*time.Second {
			t.Fatalf("leaf1 kept spine1's path 20 s after the cut:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	pinger.Process.Signal(os.Interrupt)
	pinger.Wait()
	if err := f.ping("host1", "10.1.2.2", 3); err != nil {
		t.Fatalf("after spine1's links were cut: %v", err)
	}
	sent, received := pingCounts(pings.String())
	t.Logf("pings every 10 ms across the cut: %d sent, %d received: about %d ms of traffic lost", sent, received, (sent-received)*10)
}

// pingCounts reads ping's summary line.
func pingCounts(out string) (sent, received int) {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "packets transmitted") {
			fmt.Sscanf(line, "%d packets transmitted, %d received", &sent, &received)
		}
	}
	return sent, received
}
