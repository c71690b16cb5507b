// Package frrtest builds the test lab every BGP test shares: a "switch"
// network namespace, a "peer" namespace joined to it by a veth, and in the
// peer a second, independent, real FRR that announces a prefix and expects
// the switch as its eBGP neighbor. Everything is removed when the test
// ends, also when it fails (a failed test's FRR logs are printed).
//
// The FRR package's own tests run a second FRR in the switch namespace;
// the Linux backend's and the binary's tests run swmgr there instead.
package frrtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/frr"
)

// Need skips the test where FRR cannot run (not root, FRR not installed)
// and fails it in CI, which installs FRR (.ci/run).
func Need(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs FRR in network namespaces")
	}
	for _, p := range []string{"/usr/lib/frr/bgpd", "/usr/lib/frr/zebra", "/usr/bin/vtysh"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("FRR is missing (%s) although .ci/run installs it", p)
			}
			t.Skipf("FRR is not installed (%s missing): apt-get install frr (.ci/run does)", p)
		}
	}
}

// Run runs a command and fails the test with its output if it fails.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// FastNeighbor has short timers, so sessions come up and fail over quickly
// and a loaded machine does not flap them.
func FastNeighbor(addr, as string) frr.Neighbor {
	return frr.Neighbor{NeighborAddress: addr, PeerAS: as, KeepaliveTime: 3, HoldTime: 9, ConnectRetryTime: 1}
}

// Dir makes a temporary directory the FRR user can reach (MkdirTemp's is
// 0700), removed when the test ends.
func Dir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// StartRouter starts an FRR (zebra, bgpd) with its files in dir, in the
// named namespace; it is stopped when the test ends, and its logs are
// printed if the test failed.
func StartRouter(t testing.TB, dir, netns string) *frr.Router {
	t.Helper()
	r, err := frr.New(frr.Options{Dir: dir, Netns: netns})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Stop()
		if t.Failed() {
			for _, f := range []string{"bgpd.log", "zebra.log"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				t.Logf("%s:\n%s", filepath.Join(dir, f), tail(string(b), 2000))
			}
		}
	})
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Peer is the second speaker: an FRR in its own namespace, on the far end
// of the switch's port.
type Peer struct {
	Netns      string
	Port       string // its end of the link
	Addr       string // its address on Port (a /30)
	SwitchAddr string // the switch's address on the /30, its neighbor
	Announce   string // an address with prefix length on its lo, announced (redistribute connected)
	AS         string
	Router     *frr.Router
}

// Announced is the prefix the peer originates, like 192.0.2.0/24.
func (p *Peer) Announced() string {
	i := strings.LastIndexByte(p.Announce, '.')
	j := strings.LastIndexByte(p.Announce, '/')
	return p.Announce[:i] + ".0" + p.Announce[j:]
}

// StartPeer addresses p's port and loopback in p.Netns, starts its FRR with
// its files in dir and has it expect the switch with AS switchAS. Netns and
// Port must exist; the port is brought up.
func StartPeer(t testing.TB, dir string, p *Peer, switchAS string) *Peer {
	t.Helper()
	Run(t, "ip", "-n", p.Netns, "link", "set", "lo", "up")
	Run(t, "ip", "-n", p.Netns, "addr", "add", p.Addr+"/30", "dev", p.Port)
	Run(t, "ip", "-n", p.Netns, "addr", "add", p.Announce, "dev", "lo")
	Run(t, "ip", "-n", p.Netns, "link", "set", p.Port, "up")
	p.Router = StartRouter(t, dir, p.Netns)
	p.Expect(t, switchAS)
	return p
}

// Config is the peer's configuration when it expects the switch with AS
// switchAS.
func (p *Peer) Config(switchAS string) frr.Config {
	return frr.Config{
		Instances: []frr.Instance{{ASNum: p.AS, RouterID: p.Addr, Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{FastNeighbor(p.SwitchAddr, switchAS)},
	}
}

// Expect reconfigures the peer for a switch with AS switchAS.
func (p *Peer) Expect(t testing.TB, switchAS string) {
	t.Helper()
	if err := p.Router.Apply(context.Background(), p.Config(switchAS)); err != nil {
		t.Fatal(err)
	}
}

// Lab is the switch namespace with its port, and the peer behind it.
type Lab struct {
	ID         string // unique: the namespaces' and devices' prefix
	SwitchNS   string
	SwitchPort string // the switch's end of the link
	Dir        string // 0755, for the FRR directories (the peer's is Dir/peer)
	Peer       *Peer
}

// Options shape a Lab; zero values take the defaults.
type Options struct {
	Prefix     string // of the namespaces and devices, plus a random part; default "rt"
	SwitchPort string // name of the switch's end of the link; default <ID>a
	PeerPort   string // name of the peer's end; default <ID>b
	Subnet     string // the link's /30 as its first three octets: the switch is .1, the peer .2; default "10.201.0"
	Announce   string // the peer's loopback address with length; default "192.0.2.1/24"
	PeerAS     string // default "65002"
	SwitchAS   string // what the peer expects; default "65001"
}

// New builds the lab; see the package comment.
func New(t testing.TB, o Options) *Lab {
	t.Helper()
	Need(t)
	if o.Prefix == "" {
		o.Prefix = "rt"
	}
	buf := make([]byte, 3)
	rand.Read(buf)
	id := o.Prefix + hex.EncodeToString(buf)
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.SwitchPort, id+"a")
	def(&o.PeerPort, id+"b")
	def(&o.Subnet, "10.201.0")
	def(&o.Announce, "192.0.2.1/24")
	def(&o.PeerAS, "65002")
	def(&o.SwitchAS, "65001")
	l := &Lab{ID: id, SwitchNS: id + "s", SwitchPort: o.SwitchPort}
	peerNS := id + "p"
	for _, ns := range []string{l.SwitchNS, peerNS} {
		Run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	Run(t, "ip", "-n", l.SwitchNS, "link", "set", "lo", "up")
	Run(t, "ip", "link", "add", o.SwitchPort, "netns", l.SwitchNS, "type", "veth", "peer", "name", o.PeerPort, "netns", peerNS)
	l.Dir = Dir(t, id)
	l.Peer = StartPeer(t, filepath.Join(l.Dir, "peer"), &Peer{Netns: peerNS, Port: o.PeerPort,
		Addr: o.Subnet + ".2", SwitchAddr: o.Subnet + ".1", Announce: o.Announce, AS: o.PeerAS}, o.SwitchAS)
	return l
}

// RunningBGP is the `router bgp` part of r's running configuration.
func RunningBGP(t testing.TB, r *frr.Router) string {
	t.Helper()
	text, err := r.RunningConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "router bgp") {
			in = true
		}
		if in {
			keep = append(keep, line)
		}
		if line == "exit" {
			in = false
		}
	}
	return strings.Join(keep, "\n")
}

// BGPv6Config is a switch's configuration with an IPv6 neighbor of its
// own, an IPv6 peer group with a member by address and one by interface
// (eth9), an IPv4 neighbor beside them, and an aggregate of each family.
func BGPv6Config() frr.Config {
	return frr.Config{
		Instances: []frr.Instance{{ASNum: "65001", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{
			{NeighborAddress: "10.0.0.2", PeerAS: "65003"},
			{NeighborAddress: "2001:db8::2", PeerAS: "65002", NextHopSelf: true, IPv6: true},
			{NeighborAddress: "2001:db8::3", PeerGroup: "LEAVES6", IPv6: true},
			{IntfRef: "eth9", PeerGroup: "LEAVES6", IPv6: true},
		},
		PeerGroups: []frr.Neighbor{{Name: "LEAVES6", PeerAS: "external", HoldTime: 9, KeepaliveTime: 3, IPv6: true}},
		Aggregates: []frr.Aggregate{{Prefix: "10.0.0.0/8", ASSet: true, SummaryOnly: true}, {Prefix: "2001:db8::/32", SummaryOnly: true}},
	}
}

// LastReset is why the bgpd whose vty sockets are in vtyDir, in netns,
// last reset its session with addr: its reason ("BFD down received") and
// the notification it sent ("Cease/BFD Down"), as far as it says them.
func LastReset(t testing.TB, netns, vtyDir, addr string) string {
	t.Helper()
	out := Run(t, "ip", "netns", "exec", netns, "vtysh", "--vty_socket", vtyDir, "-c", "show bgp neighbors "+addr+" json")
	var m map[string]struct {
		LastResetDueTo         string `json:"lastResetDueTo"`
		LastNotificationReason string `json:"lastNotificationReason"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("show bgp neighbors json: %v\n%s", err, out)
	}
	return m[addr].LastResetDueTo + "; " + m[addr].LastNotificationReason
}

// DropAll makes netns drop every packet in and out (nftables) while its
// links stay up, as a failed link in between would; undo lets traffic
// through again.
func DropAll(t testing.TB, netns string) (undo func()) {
	t.Helper()
	Run(t, "ip", "netns", "exec", netns, "nft", "add table inet swmgrdrop { chain in { type filter hook input priority -300; policy drop; } ; chain out { type filter hook output priority -300; policy drop; } ; }")
	return func() { Run(t, "ip", "netns", "exec", netns, "nft", "delete table inet swmgrdrop") }
}
