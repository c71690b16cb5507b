package linux

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// needProgram skips a test whose daemon is not installed, except in CI
// (CI=1), where .ci/run installs it and its absence is a failure.
func needProgram(t testing.TB, pkg string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing (%s); .ci/run installs Debian's %s", p, err, pkg)
			}
			t.Skipf("Debian's %s is not installed (%s missing): apt-get install %s (.ci/run does)", pkg, p, pkg)
		}
	}
}

// daemonDir is a directory the daemons' unprivileged users can traverse,
// removed when the test ends.
func daemonDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// stateOf is the state form of an object, decoded.
func (s *sw) stateOf(kind string, key model.Object) map[string]any {
	s.t.Helper()
	var out struct{ Object map[string]any }
	if err := json.Unmarshal([]byte(s.state(kind, key)), &out); err != nil {
		s.t.Fatal(err)
	}
	return out.Object
}

// revision commits and returns the new revision.
func (s *sw) revision(edits ...engine.Edit) uint64 {
	s.t.Helper()
	out, err := s.e.Apply(context.Background(), edits, engine.Meta{Source: "test"}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return out.Revision
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

// TestBGPOnLinux runs BGP through the engine and the Linux backend: the
// switch's FRR (started by the backend in the switch namespace) peers over
// fpPort1 with a second, independent FRR in the host namespace behind it.
// The steps share one lab because bringing sessions up is the slow part.
func TestBGPOnLinux(t *testing.T) {
	frrtest.Need(t)
	l := newLabNamed(t, "rt", 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := daemonDir(t, l.prefix)
	ctx := context.Background()
	// The peer FRR in the host namespace behind fpPort1.
	peer := frrtest.StartPeer(t, filepath.Join(dir, "peer"), &frrtest.Peer{Netns: l.hosts[0], Port: "eth0",
		Addr: "10.201.0.2", SwitchAddr: "10.201.0.1", Announce: "192.0.2.1/24", AS: "65002"}, "65001")

	var failUsers atomic.Bool
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
		o.Simulated = sim.Options{Ports: 4, Fault: func(c backend.Change) error {
			if c.Kind.Name == "ConfigArchiveServer" && failUsers.Load() {
				return errors.New("injected failure after FRR was changed")
			}
			return nil
		}}
	})
	sw := s.be.FRR()
	// Timers longer than the peer's 9/3: the session runs the lower hold
	// time, and the state form says so.
	first := model.Object{"NeighborAddress": "10.201.0.2", "PeerAS": "65002", "HoldTime": int64(30), "KeepaliveTime": int64(10), "ConnectRetryTime": int64(1), "Description": "peer one"}
	firstKey := model.Object{"Vrf": "default", "NeighborAddress": "10.201.0.2"}
	oneRev := s.revision(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.201.0.1/30"}),
		s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.201.0.1"}),
		s.edit(backend.Create, "BGPv4Neighbor", first.Clone()),
	)
	established := func() map[string]any {
		t.Helper()
		var st map[string]any
		if !eventually(40*time.Second, func() bool {
			st = s.stateOf("BGPv4Neighbor", firstKey)
			return num(st["SessionState"]) == 6
		}) {
			t.Fatalf("session with 10.201.0.2 not Established: %v", st)
		}
		return st
	}

	t.Run("established, routes learned into the kernel, state from FRR", func(t *testing.T) {
		established()
		var st map[string]any
		if !eventually(20*time.Second, func() bool {
			st = s.stateOf("BGPv4Neighbor", firstKey)
			return num(st["TotalPrefixes"]) >= 1 && strings.Contains(run(t, "ip", "-n", l.sw, "route", "show", "192.0.2.0/24"), "proto bgp")
		}) {
			t.Fatalf("192.0.2.0/24 not learned: state %v, kernel %q", st, run(t, "ip", "-n", l.sw, "route", "show", "192.0.2.0/24"))
		}
		if num(st["HoldTime"]) != 9 || num(st["KeepaliveTime"]) != 3 {
			t.Errorf("state timers %v/%v, want the negotiated 9/3 (configured 30/10)", st["HoldTime"], st["KeepaliveTime"])
		}
		if num(st["PeerType"]) != 1 || num(field(st, "Messages", "Received", "Update")) < 1 || num(st["ConnectionsEstablished"]) < 1 {
			t.Errorf("neighbor state %v: want external, updates received, a connection", st)
		}
		if r := run(t, "ip", "-n", l.sw, "route", "show", "192.0.2.0/24"); !strings.Contains(r, "via 10.201.0.2") {
			t.Errorf("kernel route %q", r)
		}
		// The global totals are summed from FRR's summary, which may trail
		// the neighbor's own counters by a moment.
		var g map[string]any
		if !eventually(10*time.Second, func() bool {
			g = s.stateOf("BGPGlobal", model.Object{"Vrf": "default"})
			return g["AS"] == "65001" && num(g["TotalPaths"]) >= 1 && num(g["Totalv4Prefixes"]) >= 1
		}) {
			t.Errorf("BGPGlobal state %v", g)
		}
	})

	// The revision with one neighbor: rollback target below.
	var oneNeighbor string
	t.Run("a second neighbor does not reset the first", func(t *testing.T) {
		before := established()
		oneNeighbor = frrtest.RunningBGP(t, sw)
		s.mustCommit(s.edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.201.9.9", "PeerAS": "65009", "AuthPassword": "s3cret-pw"}))
		s.mustCommit(s.edit(backend.Update, "BGPv4Neighbor", model.Object{"Vrf": "default", "NeighborAddress": "10.201.9.9", "Description": "nobody home"}))
		if rc := frrtest.RunningBGP(t, sw); !strings.Contains(rc, "neighbor 10.201.9.9 description nobody home") {
			t.Fatalf("second neighbor not in FRR:\n%s", rc)
		}
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !info.IsDir() && strings.Contains(string(b), "s3cret-pw") {
				t.Errorf("%s holds a neighbor's password in clear", path)
			}
			return nil
		})
		time.Sleep(2100 * time.Millisecond)
		after := s.stateOf("BGPv4Neighbor", firstKey)
		if num(after["SessionState"]) != 6 || num(after["ConnectionsEstablished"]) != num(before["ConnectionsEstablished"]) ||
			duration(t, after["SessionStateDuration"]) <= duration(t, before["SessionStateDuration"]) {
			t.Errorf("first session disturbed: before %v, after %v", before, after)
		}
	})

	t.Run("FRR's refusal fails the commit and leaves FRR and the store as they were", func(t *testing.T) {
		before := frrtest.RunningBGP(t, sw)
		err := s.commit(
			s.edit(backend.Update, "BGPv4Neighbor", model.Object{"Vrf": "default", "NeighborAddress": "10.201.9.9", "Description": "changed first"}),
			s.edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.201.9.10", "PeerAS": "65010", "RouteReflectorClient": true, "AuthPassword": "other-secret"}))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "Not an internal neighbor") {
			t.Fatalf("want a 400 with FRR's message, got %v", err)
		}
		if strings.Contains(err.Error(), "other-secret") || strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error shows a password: %v", err)
		}
		if after := frrtest.RunningBGP(t, sw); after != before {
			t.Errorf("FRR changed:\nbefore\n%s\nafter\n%s", before, after)
		}
		if _, _, err := s.e.GetByKey(ctx, s.reg.Lookup(model.Config, "BGPv4Neighbor"), model.Object{"Vrf": "default", "NeighborAddress": "10.201.9.10"}, false, nil); err == nil {
			t.Error("the refused neighbor is in the store")
		}
	})

	t.Run("a failure after FRR was changed puts FRR back", func(t *testing.T) {
		before := frrtest.RunningBGP(t, sw)
		failUsers.Store(true)
		defer failUsers.Store(false)
		err := s.commit(
			s.edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.201.9.11", "PeerAS": "65011"}),
			s.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "127.0.0.1"}))
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("want the injected failure, got %v", err)
		}
		if after := frrtest.RunningBGP(t, sw); after != before {
			t.Errorf("FRR not put back:\nbefore\n%s\nafter\n%s", before, after)
		}
	})

	t.Run("rollback restores FRR's running configuration", func(t *testing.T) {
		if _, err := s.hist.Rollback(ctx, oneRev, engine.Request{}); err != nil {
			t.Fatal(err)
		}
		if got := frrtest.RunningBGP(t, sw); got != oneNeighbor {
			t.Errorf("after rollback\n%s\nwant\n%s", got, oneNeighbor)
		}
		established()
	})

	t.Run("a killed bgpd is restarted with its configuration", func(t *testing.T) {
		pid := sw.Pid("bgpd")
		syscall.Kill(pid, syscall.SIGKILL)
		if !eventually(20*time.Second, func() bool {
			for _, d := range s.be.Daemons() {
				if d.Name == "bgpd" && d.State == "up" && d.RestartCount == 1 && d.Pid != pid {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("bgpd not restarted: %+v", s.be.Daemons())
		}
		established()
		if got := frrtest.RunningBGP(t, sw); got != oneNeighbor {
			t.Errorf("after the restart\n%s\nwant\n%s", got, oneNeighbor)
		}
	})

	t.Run("deleting the neighbor tears the session down", func(t *testing.T) {
		s.mustCommit(s.edit(backend.Delete, "BGPv4Neighbor", firstKey.Clone()))
		if !eventually(15*time.Second, func() bool {
			return !strings.Contains(run(t, "ip", "-n", l.sw, "route", "show", "192.0.2.0/24"), "proto bgp")
		}) {
			t.Error("the learned route stayed in the kernel")
		}
		ns, err := peer.Router.Neighbors(ctx)
		if err != nil || len(ns) != 1 || ns[0].SessionState == frr.SessionEstablished {
			t.Errorf("the peer still has the session: %+v %v", ns, err)
		}
	})

	t.Run("changing ASNum restarts cleanly", func(t *testing.T) {
		peer.Expect(t, "65101")
		s.mustCommit(
			s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65101"}),
			s.edit(backend.Create, "BGPv4Neighbor", first.Clone()))
		if rc := frrtest.RunningBGP(t, sw); !strings.Contains(rc, "router bgp 65101\n") || strings.Contains(rc, "65001") {
			t.Fatalf("FRR after the AS change:\n%s", rc)
		}
		established()
	})

	t.Run("a VRF neighbor", func(t *testing.T) {
		s.mustCommit(
			s.edit(backend.Create, "Vrf", model.Object{"Vrf": "rtred"}),
			s.edit(backend.Create, "BGPVrf", model.Object{"Name": "rtred", "UseMultiplePaths": true, "EBGPMaxPaths": int64(4)}),
			s.edit(backend.Create, "BGPv4Neighbor", model.Object{"Vrf": "rtred", "NeighborAddress": "10.202.0.2", "PeerAS": "65202"}))
		rc := frrtest.RunningBGP(t, sw)
		if !strings.Contains(rc, "router bgp 65101 vrf rtred\n") || !strings.Contains(rc, " neighbor 10.202.0.2 remote-as 65202\n") || !strings.Contains(rc, "maximum-paths 4") {
			t.Errorf("the VRF instance is not in FRR:\n%s", rc)
		}
		st := s.stateOf("BGPv4Neighbor", model.Object{"Vrf": "rtred", "NeighborAddress": "10.202.0.2"})
		if num(st["SessionState"]) < 1 {
			t.Errorf("VRF neighbor state %v: FRR does not report it", st)
		}
		s.mustCommit(
			s.edit(backend.Delete, "BGPv4Neighbor", model.Object{"Vrf": "rtred", "NeighborAddress": "10.202.0.2"}),
			s.edit(backend.Delete, "BGPVrf", model.Object{"Name": "rtred"}),
			s.edit(backend.Delete, "Vrf", model.Object{"Vrf": "rtred"}))
		if strings.Contains(frrtest.RunningBGP(t, sw), "vrf rtred") {
			t.Error("the VRF instance stayed in FRR")
		}
		// The session itself needs a VRF device for FRR's VRF; where the
		// kernel has none (this host's), the backend makes VRFs as
		// namespaces, which FRR's default VRF backend does not follow.
	})
	t.Run("a batch of BGP commits is one FRR apply; the commit FRR refuses fails alone", func(t *testing.T) {
		kind := s.reg.Lookup(model.Config, "BGPv4Neighbor")
		neighbor := func(op backend.Op, addr, as string, rrClient bool) *backend.Commit {
			o := kind.Defaults()
			o["Vrf"], o["NeighborAddress"], o["PeerAS"], o["RouteReflectorClient"] = "default", addr, as, rrClient
			c := backend.Change{Kind: kind, Op: op, Key: "default/" + addr, After: o}
			if op == backend.Delete {
				c.Before, c.After = o, nil
			}
			return &backend.Commit{Changes: []backend.Change{c}}
		}
		applies, passes := sw.Applies(), s.be.OnePassBatches()
		n, err := s.be.ApplyBatch(ctx, []*backend.Commit{neighbor(backend.Create, "10.201.7.1", "65071", false), neighbor(backend.Create, "10.201.7.2", "65072", false)})
		if n != 2 || err != nil {
			t.Fatalf("ApplyBatch: %d %v", n, err)
		}
		if got := sw.Applies() - applies; got != 1 || s.be.OnePassBatches() != passes+1 {
			t.Errorf("two BGP commits in a batch cost %d FRR applies (want 1)", got)
		}
		if rc := frrtest.RunningBGP(t, sw); !strings.Contains(rc, "neighbor 10.201.7.1 remote-as 65071") || !strings.Contains(rc, "neighbor 10.201.7.2 remote-as 65072") {
			t.Fatalf("the batch's neighbors are not in FRR:\n%s", rc)
		}
		n, err = s.be.ApplyBatch(ctx, []*backend.Commit{neighbor(backend.Create, "10.201.7.3", "65073", false),
			neighbor(backend.Create, "10.201.7.4", "65074", true), neighbor(backend.Create, "10.201.7.5", "65075", false)})
		if n != 1 || err == nil || !strings.Contains(err.Error(), "Not an internal neighbor") {
			t.Fatalf("ApplyBatch with FRR refusing the second commit: %d %v; want 1 applied and FRR's message", n, err)
		}
		rc := frrtest.RunningBGP(t, sw)
		if !strings.Contains(rc, "neighbor 10.201.7.3 ") || strings.Contains(rc, "10.201.7.4") || strings.Contains(rc, "10.201.7.5") {
			t.Errorf("after the batch FRR refused a commit of, FRR runs:\n%s", rc)
		}
		if n, err := s.be.ApplyBatch(ctx, []*backend.Commit{{Changes: append(append(neighbor(backend.Delete, "10.201.7.1", "65071", false).Changes,
			neighbor(backend.Delete, "10.201.7.2", "65072", false).Changes...), neighbor(backend.Delete, "10.201.7.3", "65073", false).Changes...)}}); n != 1 || err != nil {
			t.Fatalf("deleting the batch's neighbors: %d %v", n, err)
		}
	})
	t.Run("FRR not answering: 503, nothing stored", func(t *testing.T) {
		sw.Stop() // no supervisor left to restart it: the rest of the test cannot use FRR
		err := s.commit(s.edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.201.9.12", "PeerAS": "65012"}))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != 503 {
			t.Fatalf("want a 503, got %v", err)
		}
		if _, _, err := s.e.GetByKey(ctx, s.reg.Lookup(model.Config, "BGPv4Neighbor"), model.Object{"Vrf": "default", "NeighborAddress": "10.201.9.12"}, false, nil); err == nil {
			t.Error("the neighbor FRR never got is in the store")
		}
		_, _, err = s.e.GetByKey(ctx, s.reg.Lookup(model.Config, "BGPv4Neighbor"), firstKey, true, nil)
		if !errors.As(err, &ae) || ae.Status != 503 {
			t.Errorf("state read with FRR down: want a 503, got %v", err)
		}
	})
}

// newUTS makes a UTS namespace on a thread kept for the test, so the
// switch's host name can be set without renaming the machine.
func newUTS(t *testing.T) string {
	t.Helper()
	path := make(chan string)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWUTS); err != nil {
			path <- ""
			return
		}
		path <- fmt.Sprintf("/proc/%d/task/%d/ns/uts", os.Getpid(), unix.Gettid())
		<-release
	}()
	p := <-path
	t.Cleanup(func() { close(release) })
	if p == "" {
		t.Skip("cannot make a UTS namespace")
	}
	return p
}

// TestNTPAndSystemOnLinux: NtpServer through the switch's chronyd (never
// touching the clock) against a chronyd serving time in the host namespace
// behind fpPort1; SystemParam's Hostname and Timezone in a UTS namespace
// and an /etc of the test's; and a failure after both leaves both as before.
func TestNTPAndSystemOnLinux(t *testing.T) {
	needProgram(t, "chrony", "/usr/sbin/chronyd", "/usr/bin/chronyc")
	l := newLabNamed(t, "rt", 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := daemonDir(t, l.prefix)
	host := l.hosts[0]
	run(t, "ip", "-n", host, "addr", "add", "10.211.0.2/30", "dev", "eth0")

	// The server: a chronyd of the test's own in the host namespace.
	srv := filepath.Join(dir, "server")
	os.MkdirAll(srv, 0o750)
	run(t, "chown", "_chrony:_chrony", srv)
	conf := fmt.Sprintf("bindaddress 10.211.0.2\nallow all\nlocal stratum 8\ncmdport 0\nbindcmdaddress %[1]s/chronyd.sock\npidfile %[1]s/chronyd.pid\ndriftfile %[1]s/drift\n", srv)
	if err := os.WriteFile(filepath.Join(dir, "server.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	server := exec.Command("ip", "netns", "exec", host, "chronyd", "-x", "-d", "-u", "_chrony", "-f", filepath.Join(dir, "server.conf"))
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })

	etc := filepath.Join(dir, "etc")
	os.MkdirAll(etc, 0o755)
	os.WriteFile(filepath.Join(etc, "hostname"), []byte("before\n"), 0o644)
	uts := newUTS(t)
	machine, _ := os.Hostname()

	var failUsers atomic.Bool
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.Chrony = &chrony.Options{Dir: filepath.Join(dir, "chrony"), NoClock: true}
		o.System = &SystemOptions{EtcDir: etc, UTSNamespace: uts}
		o.Simulated = sim.Options{Ports: 4, Fault: func(c backend.Change) error {
			if c.Kind.Name == "ConfigArchiveServer" && failUsers.Load() {
				return errors.New("injected failure after chrony and the host name were changed")
			}
			return nil
		}}
	})
	// A new store takes the host's name (discovered): the first start
	// does not rename the switch to the model's default.
	sys := s.be.opts.System
	if h, _ := sys.Hostname(); h != machine {
		t.Errorf("host name after start %q, want the machine's %q", h, machine)
	}
	if b, _ := os.ReadFile(filepath.Join(etc, "hostname")); string(b) != machine+"\n" {
		t.Errorf("/etc/hostname after start %q", b)
	}
	ntpKey := model.Object{"IpAddr": "10.211.0.2"}
	ntpRev := s.revision(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.211.0.1/30"}),
		s.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.211.0.2", "MinPoll": int64(4), "MaxPoll": int64(5), "Prefer": true}),
	)

	t.Run("chrony selects the server and the state says so", func(t *testing.T) {
		var st map[string]any
		if !eventually(40*time.Second, func() bool {
			st = s.stateOf("NtpServer", ntpKey)
			return st["Selected"] == true
		}) {
			t.Fatalf("not selected: %v", st)
		}
		if st["Status"] != "selected" || num(st["Stratum"]) != 8 || num(st["Reach"]) == 0 || num(st["DelayUsec"]) <= 0 {
			t.Errorf("state %v: want selected, the server's stratum 8, reached, a delay", st)
		}
		// Polled every 2^4 or 2^5 s; a server of local stratum has no
		// root delay of its own: the root delay through it is the round
		// trip to it.
		if p := num(st["PollSec"]); p != 16 && p != 32 {
			t.Errorf("PollSec %v: want 16 or 32 (MinPoll 4, MaxPoll 5)", st["PollSec"])
		}
		if num(st["RootDelayUsec"]) < num(st["DelayUsec"]) || num(st["RootDelayUsec"]) <= 0 || num(st["RootDispersionUsec"]) < 0 {
			t.Errorf("state %v: want a root delay of at least the round trip, a root dispersion", st)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "chrony", "sources.d", "swmgr-10.211.0.2.sources"))
		if string(b) != "server 10.211.0.2 iburst minpoll 4 maxpoll 5 prefer\n" {
			t.Errorf("source file %q", b)
		}
	})

	t.Run("SourceIntf binds chrony's client sockets to that device", func(t *testing.T) {
		confPath := filepath.Join(dir, "chrony", "chrony.conf")
		bound := func() string {
			b, _ := os.ReadFile(confPath)
			for _, line := range strings.Split(string(b), "\n") {
				if dev, ok := strings.CutPrefix(line, "bindacqdevice "); ok {
					return dev
				}
			}
			return ""
		}
		// Bound to lo, the server behind fpPort1 is out of reach: chronyd
		// (restarted for the binding, so its samples start again) gets no
		// answer to its iburst.
		s.mustCommit(s.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.211.0.2", "SourceIntf": "lo"}))
		if bound() != "lo" {
			t.Fatalf("chrony.conf binds %q, want lo", bound())
		}
		time.Sleep(8 * time.Second)
		if st := s.stateOf("NtpServer", ntpKey); num(st["Reach"]) != 0 || st["Selected"] == true {
			t.Errorf("bound to lo, the server was still reached: %v", st)
		}
		netdev := s.be.Ports().Netdev("fpPort1")
		s.mustCommit(s.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.211.0.2", "SourceIntf": "fpPort1"}))
		if bound() != netdev {
			t.Fatalf("chrony.conf binds %q, want fpPort1's netdev %s", bound(), netdev)
		}
		if !eventually(40*time.Second, func() bool { return s.stateOf("NtpServer", ntpKey)["Selected"] == true }) {
			t.Fatalf("bound to fpPort1, the server is not selected: %v", s.stateOf("NtpServer", ntpKey))
		}
		for _, tc := range []struct {
			edit engine.Edit
			want string
		}{
			{s.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.211.0.3", "SourceIntf": "lo"}), "chrony binds all its NTP client sockets to one device"},
			{s.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.211.0.2", "SourceIntf": "nosuch0"}), "SourceIntf nosuch0 is neither a front-panel port nor a netdev"},
		} {
			err := s.commit(tc.edit)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, tc.want) {
				t.Errorf("commit: %v, want a 400 saying %q", err, tc.want)
			}
			if bound() != netdev {
				t.Errorf("after a refused commit chrony.conf binds %q", bound())
			}
		}
		s.mustCommit(s.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.211.0.2", "SourceIntf": "ma1"}))
		if bound() != "" {
			t.Errorf("back to the default ma1 (no such netdev), chrony.conf binds %q", bound())
		}
		if !eventually(40*time.Second, func() bool { return s.stateOf("NtpServer", ntpKey)["Selected"] == true }) {
			t.Errorf("unbound again, the server is not selected: %v", s.stateOf("NtpServer", ntpKey))
		}
	})

	t.Run("hostname and time zone set, then rolled back", func(t *testing.T) {
		s.mustCommit(s.edit(backend.Update, "SystemParam", model.Object{"Vrf": "default", "Hostname": "rt-leaf1", "Timezone": "Europe/Paris"}))
		if h, _ := sys.Hostname(); h != "rt-leaf1" {
			t.Errorf("kernel host name %q", h)
		}
		if b, _ := os.ReadFile(filepath.Join(etc, "hostname")); string(b) != "rt-leaf1\n" {
			t.Errorf("/etc/hostname %q", b)
		}
		if l, _ := os.Readlink(filepath.Join(etc, "localtime")); l != "/usr/share/zoneinfo/Europe/Paris" {
			t.Errorf("/etc/localtime -> %q", l)
		}
		if m, _ := os.Hostname(); m != machine {
			t.Fatalf("the machine's own host name changed: %q -> %q", machine, m)
		}
		if _, err := s.hist.Rollback(context.Background(), ntpRev, engine.Request{}); err != nil {
			t.Fatal(err)
		}
		if h, _ := sys.Hostname(); h != machine {
			t.Errorf("kernel host name after rollback %q", h)
		}
		if b, _ := os.ReadFile(filepath.Join(etc, "timezone")); string(b) != "UTC\n" {
			t.Errorf("/etc/timezone after rollback %q", b)
		}
		st := s.stateOf("SystemParam", model.Object{"Vrf": "default"})
		if st["Distro"] == "" || !strings.HasPrefix(fmt.Sprint(st["Kernel"]), "Linux ") || st["UpTime"] == "" {
			t.Errorf("SystemParam state %v", st)
		}
		// The host settings' share is merged after the dataplane's: the
		// up time is the host's, not the backend's since it started.
		up, perr := time.ParseDuration(fmt.Sprint(st["UpTime"]))
		host, _ := time.ParseDuration(hostUptime())
		if perr != nil || up < host-2*time.Second || up > host+2*time.Second {
			t.Errorf("SystemParam UpTime %v, want the host's (%s)", st["UpTime"], host)
		}
		err := s.commit(s.edit(backend.Update, "SystemParam", model.Object{"Vrf": "default", "Timezone": "Mars/Olympus_Mons"}))
		if err == nil {
			t.Error("an unknown time zone was accepted")
		}
	})

	t.Run("a failure later in the batch leaves chrony and the host as before", func(t *testing.T) {
		failUsers.Store(true)
		defer failUsers.Store(false)
		err := s.commit(
			s.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.211.9.9"}),
			s.edit(backend.Update, "SystemParam", model.Object{"Vrf": "default", "Hostname": "rt-never"}),
			s.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "127.0.0.1"}))
		if err == nil {
			t.Fatal("the injected failure did not fail the commit")
		}
		if h, _ := sys.Hostname(); h != machine {
			t.Errorf("host name %q after the failed commit", h)
		}
		if _, err := os.Stat(filepath.Join(dir, "chrony", "sources.d", "swmgr-10.211.9.9.sources")); err == nil {
			t.Error("the failed commit's source stayed in sources.d")
		}
	})

	t.Run("a killed chronyd is restarted and reports the server again", func(t *testing.T) {
		pid := s.be.Chrony().Pid()
		syscall.Kill(pid, syscall.SIGKILL)
		if !eventually(20*time.Second, func() bool {
			for _, d := range s.be.Daemons() {
				if d.Name == "chronyd" && d.State == "up" && d.RestartCount == 1 {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("chronyd not restarted: %+v", s.be.Daemons())
		}
		if !eventually(40*time.Second, func() bool { return s.stateOf("NtpServer", ntpKey)["Selected"] == true }) {
			t.Errorf("not selected again after the restart: %v", s.stateOf("NtpServer", ntpKey))
		}
	})

	t.Run("deleting the server removes the source", func(t *testing.T) {
		s.mustCommit(s.edit(backend.Delete, "NtpServer", ntpKey.Clone()))
		srcs, err := s.be.Chrony().Sources(context.Background())
		if err != nil || len(srcs) != 0 {
			t.Errorf("chrony still has sources: %+v %v", srcs, err)
		}
	})
}

// field is the value at path in a nested state object (FlexSwitch's
// Messages.Received.Update), nil where the path does not lead.
func field(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// duration parses SessionStateDuration (a Go duration, as FlexSwitch).
func duration(t *testing.T, v any) time.Duration {
	t.Helper()
	s, _ := v.(string)
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Errorf("SessionStateDuration %v: %v", v, err)
	}
	return d
}
