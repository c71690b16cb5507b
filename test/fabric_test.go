package test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/dhcrelay/dhcptest"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/testneed"
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
	shape    fabricShape
	prefix   string
	dir      string
	switches map[string]*fabricSwitch
	hostNS   map[string]string // host name → namespace
	// ansible is the environment of the collection's ansible-playbook
	// when the fabric is built with Ansible (nil: over REST), applied the
	// steps its plays applied (see apply).
	ansible []string
	applied []fabricStep
	// ansibleOneCommit: the play commits each switch's steps as one
	// revision (swmgr_config) rather than a task per step.
	ansibleOneCommit bool
}

// fabricShape is what differs between the fabric on this machine's
// kernel and the one in the VM, whose kernel has bonding, VRF devices and
// 802.1Q.
type fabricShape struct {
	// bonded: each host joins its leaf by two links (the leaf's fpPort3
	// and fpPort4 to the host's eth0 and eth1), an LACP bond on both
	// ends, addressed by the overlay; else by one routed link (fpPort3 to
	// eth0, the host's subnet on it).
	bonded bool
	// bfdInterval is BFD's transmit and receive interval on every
	// session, in ms.
	bfdInterval int
	// startWait is how long a switch's swmgr may take to start.
	startWait time.Duration
}

// onThisKernel is the fabric on the machine's own kernel: one routed
// link per host, BFD at 100 ms.
func onThisKernel() fabricShape {
	return fabricShape{bfdInterval: 100, startWait: 20 * time.Second}
}

func needFabricTools(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	frrtest.Need(t)
	testneed.Program(t, "lldpd", "/usr/sbin/lldpd")
	testneed.Program(t, "lldpd", "/usr/sbin/lldpcli")
	testneed.Program(t, "iputils-ping", "ping")
}

func (f *fabric) ip(args ...string) string {
	f.t.Helper()
	return run(f.t, "ip", args...)
}

func (f *fabric) in(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}

// newFabric makes the namespaces and links: leaf N's fpPort1 to spine1's
// fpPortN, its fpPort2 to spine2's fpPortN, its fpPort3 to hostN's eth0
// (bonded: and its fpPort4 to hostN's eth1).
func newFabric(t *testing.T, shape fabricShape) *fabric {
	needFabricTools(t)
	dir, err := os.MkdirTemp("", "swmgr-fabric-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // lldpcli runs as _lldpd and must reach its socket
	f := &fabric{t: t, shape: shape, prefix: fmt.Sprintf("fb%04d", rand.IntN(10000)), dir: dir,
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
	for _, c := range f.cables() {
		if c.b == "host" {
			f.ip("-n", f.switches[c.a].ns, "link", "add", c.aPort, "type", "veth", "peer", "name", hostEnd(c.aPort), "netns", f.hostNS["host"+hostNumber(c.a)])
		} else {
			f.ip("-n", f.switches[c.a].ns, "link", "add", c.aPort, "type", "veth", "peer", "name", c.bPort, "netns", f.switches[c.b].ns)
		}
		f.wire(c)
	}
	for n := range 2 {
		host := fmt.Sprintf("host%d", n+1)
		f.ip("-n", f.hostNS[host], "link", "set", "lo", "up")
		if shape.bonded {
			continue
		}
		f.ip("-n", f.hostNS[host], "link", "set", "eth0", "up")
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

// fabricCable joins switch a's port aPort to switch b's port bPort, or
// (b "host") to the host of leaf a.
type fabricCable struct{ a, aPort, b, bPort string }

// cables: leaf N's fpPort1 to spine1's fpPortN, its fpPort2 to spine2's
// fpPortN, its host ports (hostPorts) to hostN.
func (f *fabric) cables() []fabricCable {
	var out []fabricCable
	for n, leaf := range []string{"leaf1", "leaf2"} {
		port := fmt.Sprintf("fpPort%d", n+1)
		out = append(out, fabricCable{leaf, "fpPort1", "spine1", port}, fabricCable{leaf, "fpPort2", "spine2", port})
		for _, hp := range f.hostPorts() {
			out = append(out, fabricCable{leaf, hp, "host", ""})
		}
	}
	return out
}

// wire records a cable in its switches' links.
func (f *fabric) wire(c fabricCable) {
	if c.b == "host" {
		f.switches[c.a].links[c.aPort] = "host"
		return
	}
	f.switches[c.a].links[c.aPort] = c.b + " " + c.bPort
	f.switches[c.b].links[c.bPort] = c.a + " " + c.aPort
}

// hostPorts are a leaf's ports to its host.
func (f *fabric) hostPorts() []string {
	if f.shape.bonded {
		return []string{"fpPort3", "fpPort4"}
	}
	return []string{"fpPort3"}
}

// hostEnd is the host's interface at the other end of a leaf's host
// port: eth0 for fpPort3, eth1 for fpPort4.
func hostEnd(port string) string {
	return map[string]string{"fpPort3": "eth0", "fpPort4": "eth1"}[port]
}

// start runs every switch's swmgr, the four starting together (a start
// waits on its daemons), and waits until each answers; a switch whose
// port was taken meanwhile starts again on another.
func (f *fabric) start() {
	t := f.t
	began := time.Now()
	names := []string{"spine1", "spine2", "leaf1", "leaf2"}
	for _, name := range names {
		s, err := launchServer(t, filepath.Join(f.dir, name, "data"), f.serveArgs(name)...)
		if err != nil {
			t.Fatal(err)
		}
		f.switches[name].s = s
	}
	for _, name := range names {
		sw := f.switches[name]
		if err := sw.s.awaitReady(f.shape.startWait); err != nil {
			if !strings.Contains(sw.s.logs.String(), "address already in use") {
				t.Fatalf("%s: %v", name, err)
			}
			sw.s = startServerWithin(t, f.shape.startWait, filepath.Join(f.dir, name, "data"), f.serveArgs(name)...)
		}
	}
	t.Logf("4 switches answer %s after their start", time.Since(began).Round(100*time.Millisecond))
}

// serveArgs are a switch's `swmgr serve` flags: the Linux backend in its
// namespace with FRR, lldpd and dhcrelay of its own.
func (f *fabric) serveArgs(name string) []string {
	sw := f.switches[name]
	return []string{"--backend", "linux", "--netns", sw.ns,
		"--bgp", "frr", "--frr-dir", sw.frrDir, "--ntp", "sim", "--system", "sim",
		"--lldp", "lldpd", "--lldp-dir", filepath.Join(f.dir, name, "lldpd"),
		"--dhcp-relay", "dhcrelay", "--dhcp-relay-dir", filepath.Join(f.dir, name, "dhcrelay")}
}

// identity is the switch's AS number and router id: the spines share AS
// 65100, each leaf has its own.
func (sw *fabricSwitch) identity() (as, routerID string) {
	n := sw.name[len(sw.name)-1:]
	if strings.HasPrefix(sw.name, "spine") {
		return "65100", "10.255.0." + n
	}
	return "6510" + n, "10.255.1." + n
}

// gateway is a leaf's address on its host's subnet.
func (sw *fabricSwitch) gateway() string { return "10.1." + sw.name[len(sw.name)-1:] + ".1/24" }

// waitAll polls until cond holds for every switch, or fails naming the
// switches it does not hold for and what they said.
func (f *fabric) waitAll(what string, timeout time.Duration, cond func(sw *fabricSwitch) (bool, string)) time.Duration {
	f.t.Helper()
	return f.waitOn([]string{"spine1", "spine2", "leaf1", "leaf2"}, what, timeout, cond)
}

// waitOn is waitAll for the switches named.
func (f *fabric) waitOn(names []string, what string, timeout time.Duration, cond func(sw *fabricSwitch) (bool, string)) time.Duration {
	f.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		var missing []string
		for _, name := range names {
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

// TestFabricUnderlay builds the fabric's underlay (underlaySteps) through
// swmgr alone (REST, as an operator's script does) on this machine's kernel, and
// proves it (see proveUnderlay).
func TestFabricUnderlay(t *testing.T) {
	f := newFabric(t, onThisKernel())
	f.start()
	f.apply(f.underlaySteps())
	f.proveUnderlay()
	f.proveEdge()
}

// proveEdge: an ACL on leaf1's host port drops host1's TCP to port 8080
// (and counts it) while port 8081 answers; a DHCP request of host2 is
// relayed by leaf2 across the fabric to a server on host1, which leases
// an address of host2's subnet to the port named in option 82.
func (f *fabric) proveEdge() {
	t := f.t
	testneed.Program(t, "curl", "curl")
	testneed.Program(t, "python3", "python3")
	for _, port := range []string{"8080", "8081"} {
		srv := exec.Command("ip", "netns", "exec", f.hostNS["host2"], "python3", "-m", "http.server", port, "--bind", "10.1.2.2")
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	}
	get := func(port string) error {
		out, err := f.in(f.hostNS["host1"], "curl", "-s", "-o", "/dev/null", "-m", "2", "http://10.1.2.2:"+port+"/")
		if err != nil {
			return fmt.Errorf("curl :%s: %v %s", port, err, out)
		}
		return nil
	}
	for deadline := time.Now().Add(10 * time.Second); get("8080") != nil || get("8081") != nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("host2's servers do not answer host1 before the ACL: %v %v", get("8080"), get("8081"))
		}
	}
	leaf1 := f.switches["leaf1"].s
	leaf1.expect(t, 201, "POST", "/config/AclRule", `{"RuleName":"no-8080","Proto":"TCP","L4DstPort":8080,"L4PortMatch":"EQ","Action":"Deny"}`)
	leaf1.expect(t, 201, "POST", "/config/AclRule", `{"RuleName":"rest","Action":"Allow"}`)
	leaf1.expect(t, 201, "POST", "/config/Acl", `{"AclName":"host1","Direction":"IN","AclType":"IP","IntfList":["fpPort3"],"RuleNameList":["no-8080","rest"]}`)
	if err := get("8080"); err == nil {
		t.Errorf("host1 reaches host2's port 8080 through the ACL that denies it")
	}
	// Port 8081 passes. The routes may still be settling from the
	// failover just before (a connect then fails with no route), so it is
	// tried for a few seconds; 8080 was refused above, and its packets are
	// counted below.
	allowed := get("8081")
	for deadline := time.Now().Add(10 * time.Second); allowed != nil && time.Now().Before(deadline); allowed = get("8081") {
		time.Sleep(200 * time.Millisecond)
	}
	if allowed != nil {
		t.Errorf("the ACL denies what it allows: %v", allowed)
	}
	var matched float64
	for _, o := range objects(leaf1.listAll(t, "/state/AclRules", 100)) {
		if o["RuleName"] == "no-8080" {
			matched, _ = o["MatchedPackets"].(float64)
		}
	}
	if matched < 1 {
		t.Errorf("the deny rule counted %v packets", matched)
	}
	t.Logf("leaf1's ACL dropped host1's TCP to port 8080 (%v packets counted) and passed port 8081", matched)

	// DHCP: the server on host1, the relay on leaf2.
	server := dhcptest.StartServer(t, f.hostNS["host1"], "10.1.2.100", "10.1.2.150", "255.255.255.0")
	leaf2 := f.switches["leaf2"].s
	leaf2.expect(t, 200, "PATCH", "/config/DhcpRelayGlobal", `{"Vrf":"default","Enable":true}`)
	leaf2.expect(t, 201, "POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort3","ServerIp":["10.1.1.2"]}`)
	// The request crosses the fabric with option 82 naming fpPort3, the
	// server offers an address of host2's subnet to leaf2's gateway
	// address, and the offer comes back to leaf2 over its unnumbered
	// uplinks, which borrow the loopback's address: dhcrelay takes it
	// there (it discards what arrives on an interface with no IPv4
	// address) and relays it to host2, which gets its lease.
	out := dhcptest.Lease(t, f.hostNS["host2"], "eth0")
	offered := regexp.MustCompile(`DHCPOFFER\(eth0\) 10\.1\.2\.\d+`).FindString(server.Log())
	if offered == "" || !strings.Contains(server.Log(), "option: 82 agent-id  01:07:66:70:50:6f:72:74:33") { // circuit id "fpPort3"
		t.Fatalf("host2's request did not reach host1's server through leaf2's relay with option 82 fpPort3:\n%s\ndnsmasq:\n%s", out, tail(server.Log(), 3000))
	}
	lease := regexp.MustCompile(`lease of (10\.1\.2\.\d+) obtained`).FindStringSubmatch(out)
	if lease == nil {
		relayLog, _ := os.ReadFile(filepath.Join(f.dir, "leaf2", "dhcrelay", "dhcrelay-default.log"))
		t.Fatalf("host2 got no lease through leaf2's relay (the server offered: %s):\n%s\nleaf2's dhcrelay:\n%s", offered, out, tail(string(relayLog), 2000))
	}
	if ids := server.CircuitIDs(); !slices.Equal(ids, []string{"fpPort3"}) {
		t.Errorf("the server leased with circuit ids %q, want [fpPort3]", ids)
	}
	var relayed float64
	for _, o := range objects(leaf2.listAll(t, "/state/DhcpRelayIntfs", 100)) {
		if o["IntfRef"] == "fpPort3" {
			relayed, _ = o["TotalDhcpClientTx"].(float64)
		}
	}
	if relayed < 2 { // the offer and the ack
		t.Errorf("leaf2's relay counts %v answers relayed to host2, want the offer and the ack", relayed)
	}
	t.Logf("host2's request relayed by leaf2 across the fabric reached host1's server (option 82 circuit id fpPort3): %s; host2 leased %s over leaf2's unnumbered uplinks (%v answers relayed)", offered, lease[1], relayed)
}

// TestFabricUnderlayThroughAnsible builds the same fabric, from the same
// steps (underlaySteps), with a playbook of the collection's resource
// modules (each switch's objects are its inventory variables) and proves
// it the same way; the play run again changes nothing.
func TestFabricUnderlayThroughAnsible(t *testing.T) {
	env := ansibleEnv(t)
	f := newFabric(t, onThisKernel())
	f.ansible = env
	f.start()
	f.apply(f.underlaySteps())
	f.proveUnderlay()
	f.provePlayIdempotent()
}

// proveSessions: every BGP unnumbered session is Established, LLDP names
// every link right on every switch, BFD is up on every session.
func (f *fabric) proveSessions(within time.Duration) {
	t := f.t
	took := f.waitAll("BGP unnumbered Established", within, f.bgpEstablished)
	t.Logf("all 8 sessions Established %s after the configuration", took.Round(100*time.Millisecond))
	took = f.waitAll("LLDP neighbours right", within, f.lldpRight)
	t.Logf("LLDP right on every link %s later", took.Round(100*time.Millisecond))
	took = f.waitAll("BFD up on every session", within/2, f.bfdUp)
	t.Logf("BFD up on every session %s later", took.Round(100*time.Millisecond))
}

// proveUnderlay: the sessions (proveSessions), the leaves' uplinks
// borrow their loopback's address, the hosts reach each
// other across the spines over both paths, and when every frame on
// spine1's links is dropped (the links up) BFD takes its sessions down
// and the hosts still reach each other through spine2 (the times are
// logged).
func (f *fabric) proveUnderlay() {
	t := f.t
	f.proveSessions(90 * time.Second)

	// A leaf's uplinks carry its loopback's address, borrowed.
	for _, name := range []string{"leaf1", "leaf2"} {
		sw := f.switches[name]
		_, id := sw.identity()
		for _, port := range []string{"fpPort1", "fpPort2"} {
			if out, _ := f.in(sw.ns, "ip", "-4", "-o", "addr", "show", "dev", port); !strings.Contains(out, "inet "+id+"/32 scope global "+port) {
				t.Errorf("%s's uplink %s does not borrow the loopback's %s: %q", name, port, id, out)
			}
		}
	}

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

	// Every frame on spine1's links is dropped while the links stay up (a
	// failed optic, a hung line card): only BFD can tell. The leaves' BFD
	// sessions with spine1 go down within 300 ms (3 x 100 ms), BGP with
	// them, and host traffic continues through spine2. The times from the
	// drop to leaf1's route losing spine1's path and to the BFD event on
	// leaf1's change feed are logged.
	events := followStates(t, f.switches["leaf1"].s)
	pinger := exec.Command("ip", "netns", "exec", f.hostNS["host1"], "ping", "-i", "0.01", "-w", "20", "10.1.2.2")
	var pings strings.Builder
	pinger.Stdout = &pings
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	spine1 := f.switches["spine1"]
	var chains []string
	for _, port := range slices.Sorted(maps.Keys(spine1.links)) {
		for _, hook := range []string{"ingress", "egress"} {
			chains = append(chains, fmt.Sprintf("chain %s-%s { type filter hook %s device %s priority -500; policy drop; }", port, hook, hook, port))
		}
	}
	drop := time.Now()
	f.ip("netns", "exec", spine1.ns, "nft", "add table netdev fabricdrop { "+strings.Join(chains, " ; ")+" ; }")
	var lostPath, bfdEvent time.Duration
	for lostPath == 0 || bfdEvent == 0 {
		time.Sleep(5 * time.Millisecond)
		if ev, ok := events.first(drop, "", "down"); ok && bfdEvent == 0 {
			bfdEvent = ev.at.Sub(drop)
		}
		if lostPath == 0 {
			if out, _ := f.in(f.switches["leaf1"].ns, "ip", "route", "show", "10.1.2.0/24"); !strings.Contains(out, "nexthop") && strings.Contains(out, "via") {
				lostPath = time.Since(drop)
			}
		}
		if time.Since(drop) > 20*time.Second {
			t.Fatalf("20 s after the drop: leaf1's path lost after %v, BFD down event after %v (0: not seen); hold time is 9 s", lostPath, bfdEvent)
		}
	}
	t.Logf("from the drop on spine1's links: leaf1's route lost spine1's path after %v, leaf1's feed said BFD down after %v", lostPath.Round(time.Millisecond), bfdEvent.Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	pinger.Process.Signal(os.Interrupt)
	pinger.Wait()
	if err := f.ping("host1", "10.1.2.2", 3); err != nil {
		t.Fatalf("with spine1's links dropping everything: %v", err)
	}
	sent, received := pingCounts(pings.String())
	t.Logf("pings every 10 ms across the drop: %d sent, %d received: about %d ms of traffic lost", sent, received, (sent-received)*10)
	f.ip("netns", "exec", spine1.ns, "nft", "delete table netdev fabricdrop")
	took := f.waitAll("BGP Established again after the drop ended", 60*time.Second, f.bgpEstablished)
	t.Logf("all sessions Established again %s after the drop ended", took.Round(100*time.Millisecond))
}

// bfdUp: every fabric link of the switch has its BFD session up.
func (f *fabric) bfdUp(sw *fabricSwitch) (bool, string) {
	want := 0
	for _, peer := range sw.links {
		if peer != "host" {
			want++
		}
	}
	up := 0
	var states []string
	for _, o := range objects(sw.s.listAll(f.t, "/state/BfdSessions", 100)) {
		states = append(states, fmt.Sprintf("%v=%v", o["IfName"], o["SessionState"]))
		if o["SessionState"] == "up" {
			up++
		}
	}
	return up == want, fmt.Sprintf("%d of %d up: %s", up, want, strings.Join(states, " "))
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
