package frr_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// lab is frrtest's: "switch" runs the FRR under test, "peer" a second,
// independent FRR speaking BGP to it.
type lab struct {
	switchNS, peerNS     string
	switchAddr, peerAddr string
	sw, peer             *frr.Router
	announced            string // a prefix the peer originates
	swDir, peerDir       string
}

var run = frrtest.Run

// newLab builds the namespaces and starts both FRRs; everything is removed
// when the test ends, even when it fails.
func newLab(t testing.TB) *lab {
	t.Helper()
	fl := frrtest.New(t, frrtest.Options{})
	p := fl.Peer
	l := &lab{switchNS: fl.SwitchNS, peerNS: p.Netns, switchAddr: p.SwitchAddr, peerAddr: p.Addr,
		peer: p.Router, announced: p.Announced(), swDir: filepath.Join(fl.Dir, "switch"), peerDir: filepath.Join(fl.Dir, "peer")}
	run(t, "ip", "-n", l.switchNS, "addr", "add", l.switchAddr+"/30", "dev", fl.SwitchPort)
	run(t, "ip", "-n", l.switchNS, "link", "set", fl.SwitchPort, "up")
	l.sw = frrtest.StartRouter(t, l.swDir, l.switchNS)
	return l
}

func (l *lab) peerConfig(switchAS string) frr.Config {
	return frr.Config{
		Instances: []frr.Instance{{ASNum: "65002", RouterID: l.peerAddr,
			Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{fastNeighbor(l.switchAddr, switchAS)},
	}
}

var fastNeighbor = frrtest.FastNeighbor

func (l *lab) switchConfig(as string, neighbors ...frr.Neighbor) frr.Config {
	return frr.Config{Instances: []frr.Instance{{ASNum: as, RouterID: l.switchAddr}}, Neighbors: neighbors}
}

func neighborState(t testing.TB, r *frr.Router, vrf, addr string) (frr.NeighborState, bool) {
	t.Helper()
	ns, err := r.Neighbors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.VRF == vrf && n.NeighborAddress == addr {
			return n, true
		}
	}
	return frr.NeighborState{}, false
}

func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (l *lab) waitEstablished(t testing.TB, r *frr.Router, addr string) frr.NeighborState {
	t.Helper()
	var st frr.NeighborState
	waitFor(t, "session with "+addr+" to reach Established", 40*time.Second, func() bool {
		st, _ = neighborState(t, r, frr.DefaultVRF, addr)
		return st.SessionState == frr.SessionEstablished
	})
	return st
}

func routeVia(t testing.TB, r *frr.Router, prefix, proto string) (frr.Route, bool) {
	t.Helper()
	rs, err := r.Routes(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range rs {
		if rt.Prefix == prefix && rt.Protocol == proto {
			return rt, true
		}
	}
	return frr.Route{}, false
}

// TestBGPWithRealFRR drives one swmgr-owned FRR against a peer FRR through
// the life of a configuration. The steps share one lab because bringing
// sessions up is the slow part.
func TestBGPWithRealFRR(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	first := fastNeighbor(l.peerAddr, "65002")
	first.Description = "peer one"
	// Longer than the peer's 9/3: the session runs the lower hold time.
	first.HoldTime, first.KeepaliveTime = 30, 10
	cfg := l.switchConfig("65001", first)
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if plan, err := l.sw.Plan(ctx, cfg); err != nil || len(plan) != 0 {
		t.Fatalf("applying the same configuration again should send nothing, plan=%q err=%v", plan, err)
	}

	t.Run("established and routes learned", func(t *testing.T) {
		st := l.waitEstablished(t, l.sw, l.peerAddr)
		if st.PeerAS != "65002" || st.LocalAS != "65001" || st.PeerType != 1 {
			t.Errorf("state %+v: want PeerAS 65002, LocalAS 65001, external", st)
		}
		if st.HoldTime != 9 || st.KeepaliveTime != 3 {
			t.Errorf("timers in force %d/%d, want the peer's 9/3 (configured here: 30/10)", st.HoldTime, st.KeepaliveTime)
		}
		waitFor(t, l.announced+" learned over BGP", 20*time.Second, func() bool {
			rt, ok := routeVia(t, l.sw, l.announced, "bgp")
			return ok && rt.Installed && len(rt.NextHops) == 1 && rt.NextHops[0].Address == l.peerAddr
		})
		kernel := run(t, "ip", "-n", l.switchNS, "route", "show", l.announced)
		if !strings.Contains(kernel, "proto bgp") || !strings.Contains(kernel, "via "+l.peerAddr) {
			t.Errorf("kernel table of the switch namespace: %q, want a proto bgp route via %s", kernel, l.peerAddr)
		}
		st, _ = neighborState(t, l.sw, frr.DefaultVRF, l.peerAddr)
		if st.TotalPrefixes < 1 || st.UpdatesReceived < 1 {
			t.Errorf("state %+v: want prefixes and updates received", st)
		}
		gs, err := l.sw.Globals(ctx)
		if err != nil || len(gs) != 1 || gs[0].AS != "65001" || gs[0].RouterID != l.switchAddr || gs[0].TotalPaths < 1 {
			t.Errorf("globals %+v, %v", gs, err)
		}
	})

	t.Run("second neighbor leaves the first session alone", func(t *testing.T) {
		before := l.waitEstablished(t, l.sw, l.peerAddr)
		second := frr.Neighbor{NeighborAddress: "10.201.9.9", PeerAS: "65009", Description: "nobody", AuthPassword: "s3cret-pw"}
		cfg = l.switchConfig("65001", first, second)
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := neighborState(t, l.sw, frr.DefaultVRF, "10.201.9.9"); !ok {
			t.Fatal("second neighbor not in FRR's state")
		}
		second.Description = "still nobody"
		second.MaxPrefixes = 50
		cfg = l.switchConfig("65001", first, second)
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		after, _ := neighborState(t, l.sw, frr.DefaultVRF, l.peerAddr)
		if after.SessionState != frr.SessionEstablished || after.ConnectionsUp != before.ConnectionsUp || after.UptimeMsec <= before.UptimeMsec {
			t.Errorf("first session was disturbed: before %+v, after %+v", before, after)
		}
	})

	t.Run("rejected configuration leaves FRR as it was", func(t *testing.T) {
		before := frrtest.RunningBGP(t, l.sw)
		sessBefore, _ := neighborState(t, l.sw, frr.DefaultVRF, l.peerAddr)
		bad := first
		bad.Description = "changed before the failure"
		bad.RouteReflectorClient = true // FRR: only for internal neighbors
		third := frr.Neighbor{NeighborAddress: "10.201.9.10", PeerAS: "65010", AuthPassword: "another-secret"}
		err := l.sw.Apply(ctx, frr.Config{Instances: cfg.Instances, Neighbors: append([]frr.Neighbor{bad, third}, cfg.Neighbors[1:]...)})
		if err == nil || !strings.Contains(err.Error(), "Not an internal neighbor") {
			t.Fatalf("want FRR's refusal, got %v", err)
		}
		if strings.Contains(err.Error(), "another-secret") || strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("error shows a password: %v", err)
		}
		if after := frrtest.RunningBGP(t, l.sw); after != before {
			t.Errorf("running configuration changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		sessAfter, _ := neighborState(t, l.sw, frr.DefaultVRF, l.peerAddr)
		if sessAfter.ConnectionsUp != sessBefore.ConnectionsUp {
			t.Errorf("the failed change reset the session: %+v -> %+v", sessBefore, sessAfter)
		}
	})

	t.Run("rollback restores the running configuration", func(t *testing.T) {
		snapshot := frrtest.RunningBGP(t, l.sw)
		changed := first
		changed.HoldTime, changed.KeepaliveTime = 9, 3
		changed.MaxPrefixes, changed.MaxPrefixesDisconnect = 1000, true
		multi := l.switchConfig("65001", changed, frr.Neighbor{NeighborAddress: "10.201.9.11", PeerAS: "65011", PeerGroup: "fabric"})
		multi.Instances[0].UseMultiplePaths, multi.Instances[0].EBGPMaxPaths = true, 8
		if err := l.sw.Apply(ctx, multi); err != nil {
			t.Fatal(err)
		}
		if frrtest.RunningBGP(t, l.sw) == snapshot {
			t.Fatal("the change did not reach FRR")
		}
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if got := frrtest.RunningBGP(t, l.sw); got != snapshot {
			t.Errorf("after rollback:\n%s\nwant:\n%s", got, snapshot)
		}
	})

	t.Run("deleting a neighbor tears its session down", func(t *testing.T) {
		l.waitEstablished(t, l.sw, l.peerAddr)
		cfg = l.switchConfig("65001")
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := neighborState(t, l.sw, frr.DefaultVRF, l.peerAddr); ok {
			t.Error("neighbor still in the switch's state")
		}
		waitFor(t, "the peer to see the session go down", 15*time.Second, func() bool {
			st, _ := neighborState(t, l.peer, frr.DefaultVRF, l.switchAddr)
			return st.SessionState != frr.SessionEstablished
		})
		waitFor(t, "the learned route to leave the kernel", 15*time.Second, func() bool {
			return !strings.Contains(run(t, "ip", "-n", l.switchNS, "route", "show", l.announced), "proto bgp")
		})
	})

	t.Run("changing ASNum restarts cleanly", func(t *testing.T) {
		if err := l.peer.Apply(ctx, l.peerConfig("65101")); err != nil {
			t.Fatal(err)
		}
		cfg = l.switchConfig("65101", first)
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		running := frrtest.RunningBGP(t, l.sw)
		if !strings.Contains(running, "router bgp 65101") || strings.Contains(running, "router bgp 65001") {
			t.Fatalf("running configuration after the AS change:\n%s", running)
		}
		st := l.waitEstablished(t, l.sw, l.peerAddr)
		if st.LocalAS != "65101" {
			t.Errorf("LocalAS %s, want 65101", st.LocalAS)
		}
	})

	t.Run("VRF instance", func(t *testing.T) {
		withVRF := cfg
		withVRF.Instances = append([]frr.Instance{}, cfg.Instances...)
		withVRF.Instances = append(withVRF.Instances, frr.Instance{VRF: "rtred", ASNum: "65101"})
		withVRF.Neighbors = append(append([]frr.Neighbor{}, cfg.Neighbors...), frr.Neighbor{VRF: "rtred", NeighborAddress: "10.202.0.2", PeerAS: "65202"})
		if err := l.sw.Apply(ctx, withVRF); err != nil {
			t.Fatal(err)
		}
		if rc := frrtest.RunningBGP(t, l.sw); !strings.Contains(rc, "router bgp 65101 vrf rtred\n") || !strings.Contains(rc, " neighbor 10.202.0.2 remote-as 65202\n") {
			t.Errorf("VRF instance missing from FRR:\n%s", frrtest.RunningBGP(t, l.sw))
		}
		if _, ok := neighborState(t, l.sw, "rtred", "10.202.0.2"); !ok {
			t.Error("VRF neighbor not in the state")
		}
		// Removing the default instance's neighbor does not disturb the VRF.
		if err := l.sw.Apply(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(frrtest.RunningBGP(t, l.sw), "vrf rtred") {
			t.Error("VRF instance still configured after its removal")
		}
		if err := exec.Command("ip", "-n", l.switchNS, "link", "add", "rtvrf", "type", "vrf", "table", "10").Run(); err != nil {
			t.Log("the VRF session itself is not run: this kernel cannot create VRF devices (CONFIG_NET_VRF); the VM runner of the linux branch covers it")
		}
	})

	t.Run("a killed bgpd is restarted with its configuration", func(t *testing.T) {
		pid := l.sw.Pid("bgpd")
		if err := exec.Command("kill", "-9", fmt.Sprint(pid)).Run(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "bgpd to be restarted", 15*time.Second, func() bool {
			for _, s := range l.sw.Status() {
				if s.Name == "bgpd" && s.State == "up" && s.RestartCount == 1 && s.Pid != pid {
					return true
				}
			}
			return false
		})
		l.waitEstablished(t, l.sw, l.peerAddr)
		for _, s := range l.sw.Status() {
			if s.Name == "zebra" && s.RestartCount != 0 {
				t.Errorf("zebra restarted too: %+v", s)
			}
		}
	})
}

// BenchmarkApplyNewNeighbor: from Apply to FRR running a new neighbor (it is
// in bgpd's running configuration and neighbor table when Apply returns).
func BenchmarkApplyNewNeighbor(b *testing.B) {
	l := newLab(b)
	ctx := context.Background()
	base := l.switchConfig("65001", fastNeighbor(l.peerAddr, "65002"))
	if err := l.sw.Apply(ctx, base); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		addr := fmt.Sprintf("10.203.%d.%d", i/250, i%250+1)
		withNew := l.switchConfig("65001", fastNeighbor(l.peerAddr, "65002"), frr.Neighbor{NeighborAddress: addr, PeerAS: "65003"})
		if err := l.sw.Apply(ctx, withNew); err != nil {
			b.Fatal(err)
		}
		if _, ok := neighborState(b, l.sw, frr.DefaultVRF, addr); !ok {
			b.Fatalf("neighbor %s not running", addr)
		}
		b.StopTimer()
		if err := l.sw.Apply(ctx, base); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkTenConcurrentCommits: ten commits that each add a neighbor arrive
// together (each request carries the whole desired state, in commit order);
// frr-applies/op is how many apply rounds FRR did for them.
func BenchmarkTenConcurrentCommits(b *testing.B) {
	l := newLab(b)
	ctx := context.Background()
	batcher := frr.NewBatcher(l.sw.Apply)
	rounds := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := l.sw.Apply(ctx, l.switchConfig("65001")); err != nil {
			b.Fatal(err)
		}
		before := l.sw.Applies()
		b.StartTimer()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var neighbors []frr.Neighbor
		for k := 0; k < 10; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu.Lock()
				neighbors = append(neighbors, frr.Neighbor{NeighborAddress: fmt.Sprintf("10.204.0.%d", len(neighbors)+1), PeerAS: "65004"})
				cfg := l.switchConfig("65001", slices.Clone(neighbors)...)
				// Submitted under the lock so requests reach the batcher in
				// commit order, as the engine would send them.
				wait := batcher.Submit(ctx, cfg)
				mu.Unlock()
				if err := wait(ctx); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		rounds += l.sw.Applies() - before
		ns, _ := l.sw.Neighbors(ctx)
		if len(ns) != 10 {
			b.Fatalf("%d neighbors after ten commits, want 10", len(ns))
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(rounds)/float64(b.N), "frr-applies/op")
}
