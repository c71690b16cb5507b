package linux

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// bfdEvent is one BfdSessionState change the backend handed on, and when.
type bfdEvent struct {
	at    time.Time
	state model.Object
}

// bfdEvents records the backend's OnStateChange calls.
type bfdEvents struct {
	mu     sync.Mutex
	events []bfdEvent
}

func (e *bfdEvents) add(kind string, o model.Object) {
	if kind != "BfdSessionState" {
		return
	}
	e.mu.Lock()
	e.events = append(e.events, bfdEvent{time.Now(), o})
	e.mu.Unlock()
}

// first is the first event since since for peer in state, if any.
func (e *bfdEvents) first(since time.Time, peer, state string) (bfdEvent, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if !ev.at.Before(since) && ev.state.Str("IpAddr") == peer && ev.state.Str("SessionState") == state {
			return ev, true
		}
	}
	return bfdEvent{}, false
}

// bfdLab is a switch (the Linux backend with its FRR: zebra, bfdd,
// bgpd) peering BGP with BFD over fpPort1 with a second FRR behind it.
type bfdLab struct {
	s      *sw
	l      *lab
	peer   *frr.Router
	dir    string
	events *bfdEvents
}

// peerWithBFD is the peer FRR's configuration: BGP with a hold time far
// longer than the test waits (90 s), BFD every 100 ms, three missed.
func peerWithBFD() frr.Config {
	n := frr.Neighbor{NeighborAddress: "10.201.0.1", PeerAS: "65001", HoldTime: 90, KeepaliveTime: 30, ConnectRetryTime: 1, BfdEnable: true, BfdSessionParam: "fast"}
	return frr.Config{
		Instances: []frr.Instance{{ASNum: "65002", RouterID: "10.201.0.2", Redistribution: []frr.Redistribution{{Sources: "CONNECTED"}}}},
		Neighbors: []frr.Neighbor{n},
		BFD:       frr.BFD{Profiles: []frr.BFDProfile{{Name: "fast", ReceiveInterval: 100, TransmitInterval: 100, DetectMultiplier: 3}}},
	}
}

var (
	bfdNeighborKey = model.Object{"Vrf": "default", "NeighborAddress": "10.201.0.2"}
	bfdFast        = model.Object{"Name": "fast", "RequiredMinRxInterval": int64(100), "DesiredMinTxInterval": int64(100), "LocalMultiplier": int64(3)}
	bfdNeighbor    = model.Object{"NeighborAddress": "10.201.0.2", "PeerAS": "65002", "HoldTime": int64(90), "KeepaliveTime": int64(30),
		"ConnectRetryTime": int64(1), "BfdEnable": true, "BfdSessionParam": "fast"}
)

func newBFDLab(t *testing.T, area string) *bfdLab {
	frrtest.Need(t)
	l := newLabNamed(t, area, 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := daemonDir(t, l.prefix)
	l.host(1, "ip", "addr", "add", "10.201.0.2/30", "dev", "eth0")
	peer := frrtest.StartRouter(t, filepath.Join(dir, "peer"), l.hosts[0])
	if err := peer.Apply(context.Background(), peerWithBFD()); err != nil {
		t.Fatal(err)
	}
	events := &bfdEvents{}
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
		o.OnStateChange = events.add
	})
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.201.0.1/30"}),
		s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.201.0.1"}),
		s.edit(backend.Create, "BfdSessionParam", bfdFast.Clone()),
		s.edit(backend.Create, "BGPv4Neighbor", bfdNeighbor.Clone()),
	)
	return &bfdLab{s: s, l: l, peer: peer, dir: dir, events: events}
}

// session is the switch's BfdSessionState of peer, as the backend lists it.
func (b *bfdLab) session(peer string) model.Object {
	b.s.t.Helper()
	b.s.be.bfd.mu.Lock()
	b.s.be.bfd.at = time.Time{}
	b.s.be.bfd.mu.Unlock()
	list, err := b.s.be.bfdSessions(context.Background())
	if err != nil {
		b.s.t.Fatal(err)
	}
	for _, o := range list {
		if o.Str("IpAddr") == peer {
			return o
		}
	}
	return nil
}

// upBoth waits for BGP Established and BFD up on both ends.
func (b *bfdLab) upBoth(t *testing.T) {
	t.Helper()
	var st map[string]any
	if !eventually(60*time.Second, func() bool {
		st = b.s.stateOf("BGPv4Neighbor", bfdNeighborKey)
		return num(st["SessionState"]) == 6 && st["BfdNeighborState"] == "up"
	}) {
		t.Fatalf("BGP with 10.201.0.2 not Established: %v", st)
	}
	var sess model.Object
	if !eventually(30*time.Second, func() bool {
		sess = b.session("10.201.0.2")
		return sess.Str("SessionState") == "up"
	}) {
		t.Fatalf("the switch's BFD session with 10.201.0.2 is not up: %v", sess)
	}
	var peerUp bool
	if !eventually(30*time.Second, func() bool {
		ps, err := b.peer.BFDPeers(context.Background())
		peerUp = err == nil && len(ps) == 1 && ps[0].Status == "up"
		return peerUp
	}) {
		ps, err := b.peer.BFDPeers(context.Background())
		t.Fatalf("the peer's BFD session is not up: %+v %v", ps, err)
	}
}

// failover drops the link's traffic and measures how long BGP took to
// leave Established and the BfdSessionState change to be handed on.
func (b *bfdLab) failover(t *testing.T) (toBGPDown, toEvent time.Duration, why string) {
	t.Helper()
	sw := b.s.be.FRR()
	undo := frrtest.DropAll(t, b.l.hosts[0])
	defer undo()
	start := time.Now()
	// The test waits 20 s at most, far below the 90 s hold time: a session
	// down within it was brought down by BFD.
	deadline := start.Add(20 * time.Second)
	for {
		ns, err := sw.Neighbors(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		up := false
		for _, n := range ns {
			up = up || (n.NeighborAddress == "10.201.0.2" && n.SessionState == frr.SessionEstablished)
		}
		if !up {
			toBGPDown = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BGP still Established %v after the drop (hold time 90 s): BFD did not bring it down", time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
	var ev bfdEvent
	if !eventually(10*time.Second, func() bool {
		var ok bool
		ev, ok = b.events.first(start, "10.201.0.2", "down")
		return ok
	}) {
		t.Fatalf("no BfdSessionState change to down after the drop; events: %v", b.events.events)
	}
	// Read while the drop lasts: once traffic passes, the session's next
	// attempts may be reset for reasons of their own.
	return toBGPDown, ev.at.Sub(start), frrtest.LastReset(t, b.l.sw, filepath.Join(b.dir, "frr"), "10.201.0.2")
}

// TestBFDTearsBGPDownOnLinux: the switch and a peer FRR peer BGP with BFD
// (100 ms x 3) over fpPort1; BFD is up on both, with the intervals of the
// BfdSessionParam in effect. When the peer's namespace drops every packet
// (the link stays up) BFD brings BGP down long before its 90 s hold time,
// bgpd says BFD was why, and the backend hands on the BfdSessionState
// change; the times from the drop are logged. Then ResetBfdSession takes
// the session down and up again, and bad input changes nothing.
func TestBFDTearsBGPDownOnLinux(t *testing.T) {
	b := newBFDLab(t, "bfd")
	b.upBoth(t)
	bfddRunning := func() string {
		return frrtest.Run(t, "ip", "netns", "exec", b.l.sw, "vtysh", "--vty_socket", filepath.Join(b.dir, "frr"), "-d", "bfdd", "-c", "show running-config")
	}
	sess := b.session("10.201.0.2")
	if sess.Int("DesiredMinTxInterval") != 100 || sess.Int("RequiredMinRxInterval") != 100 || sess.Int("DetectionMultiplier") != 3 ||
		sess.Int("RemoteDiscriminator") == 0 || sess.Str("IfName") != "fpPort1" || sess.Str("Owner") != "bgp" {
		t.Errorf("BfdSessionState %v: want 100 ms x 3 in effect, a remote discriminator, on fpPort1, BGP's", sess)
	}
	g, err := b.s.be.bfdGlobalState()
	if err != nil || g.Int("NumUpSessions") != 1 {
		t.Errorf("BfdGlobal state %v %v: want one session up", g, err)
	}
	running := frrtest.RunningBGP(t, b.s.be.FRR())
	if !strings.Contains(running, "neighbor 10.201.0.2 bfd profile fast") {
		t.Errorf("bgpd runs no BFD profile for the neighbour:\n%s", running)
	}

	t.Run("a drop of the link's traffic brings BGP down through BFD", func(t *testing.T) {
		toBGP, toEvent, why := b.failover(t)
		t.Logf("from the drop: BGP left Established after %v, the BfdSessionState change was handed on after %v", toBGP, toEvent)
		if !strings.Contains(strings.ToLower(why), "bfd down") {
			t.Errorf("bgpd's last reset of the session: %q, want BFD's", why)
		}
		if ev, _ := b.events.first(time.Time{}, "10.201.0.2", "down"); ev.state.Str("LocalDiagType") == "" {
			t.Errorf("the down event says no diagnostic: %v", ev.state)
		}
	})

	t.Run("ResetBfdSession takes the session down and up", func(t *testing.T) {
		b.upBoth(t)
		// bfdd counts an administrative down as no down: the session's
		// coming up again is what counts.
		ups := b.session("10.201.0.2").Int("ToUpCount")
		reg := model.Builtin()
		k := reg.Lookup(model.Action, "ResetBfdSession")
		fields, err := actionFields(k, `{"IpAddr": "10.201.0.2", "IfName": "fpPort1"}`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.be.DaemonActions()["ResetBfdSession"].Run(context.Background(), bind.Call{Kind: k, Fields: fields}); err != nil {
			t.Fatal(err)
		}
		var sess model.Object
		if !eventually(20*time.Second, func() bool {
			sess = b.session("10.201.0.2")
			return sess.Int("ToUpCount") > ups && sess.Str("SessionState") == "up"
		}) {
			t.Errorf("after the reset: %v (up count before %d)", sess, ups)
		}
		if sess.Int("DesiredMinTxInterval") != 100 || sess.Int("RequiredMinRxInterval") != 100 {
			t.Errorf("after the reset the session runs %v, not its profile's 100 ms", sess)
		}
		if running := frrtest.RunningBGP(t, b.s.be.FRR()); !strings.Contains(running, "neighbor 10.201.0.2 bfd profile fast") {
			t.Errorf("the reset changed bgpd's configuration:\n%s", running)
		}
		if out := bfddRunning(); strings.Contains(out, "peer 10.201.0.2") {
			t.Errorf("the reset left a static peer in bfdd:\n%s", out)
		}
		fields, _ = actionFields(k, `{"IpAddr": "10.201.0.9"}`)
		if _, err := b.s.be.DaemonActions()["ResetBfdSession"].Run(context.Background(), bind.Call{Kind: k, Fields: fields}); err == nil || !strings.Contains(err.Error(), "no BFD session") {
			t.Errorf("a reset of no session: %v", err)
		}
	})

	t.Run("a killed bfdd is restarted with its profiles, and BFD comes back up", func(t *testing.T) {
		b.upBoth(t)
		sw := b.s.be.FRR()
		pid := sw.Pid("bfdd")
		syscall.Kill(pid, syscall.SIGKILL)
		if !eventually(20*time.Second, func() bool {
			for _, d := range b.s.be.Daemons() {
				if d.Name == "bfdd" && d.State == "up" && d.RestartCount == 1 && d.Pid != pid {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("bfdd not restarted: %+v", b.s.be.Daemons())
		}
		if !eventually(20*time.Second, func() bool {
			return strings.Contains(bfddRunning(), " profile fast\n  transmit-interval 100\n  receive-interval 100\n")
		}) {
			t.Error("the restarted bfdd did not get its profile back")
		}
		b.upBoth(t)
		if s := b.session("10.201.0.2"); s.Int("DesiredMinTxInterval") != 100 {
			t.Errorf("after bfdd's restart the session runs %v", s)
		}
	})

	t.Run("a BfdSession is a static peer of bfdd; BfdGlobal Enable false ends every session", func(t *testing.T) {
		b.s.mustCommit(b.s.edit(backend.Create, "BfdSession", model.Object{"IpAddr": "10.201.0.2", "Interface": "fpPort1", "ParamName": "fast"}))
		if out := bfddRunning(); !strings.Contains(out, " peer 10.201.0.2 interface fpPort1\n  profile fast\n") {
			t.Errorf("bfdd runs no static peer for the BfdSession:\n%s", out)
		}
		if s := b.session("10.201.0.2"); s.Str("Owner") != "user" || s.Str("ParamName") != "fast" {
			t.Errorf("the session of a BfdSession: %v", s)
		}
		b.s.mustCommit(b.s.edit(backend.Update, "BfdGlobal", model.Object{"Vrf": "default", "Enable": false}))
		if out := bfddRunning(); strings.Contains(out, "peer 10.201.0.2") {
			t.Errorf("BFD disabled, bfdd still runs the peer:\n%s", out)
		}
		if running := frrtest.RunningBGP(t, b.s.be.FRR()); strings.Contains(running, " bfd") {
			t.Errorf("BFD disabled, bgpd still asks for it:\n%s", running)
		}
		if !eventually(10*time.Second, func() bool { return b.session("10.201.0.2") == nil }) {
			t.Errorf("BFD disabled, a session is left: %v", b.session("10.201.0.2"))
		}
		b.s.mustCommit(b.s.edit(backend.Update, "BfdGlobal", model.Object{"Vrf": "default", "Enable": true}),
			b.s.edit(backend.Delete, "BfdSession", model.Object{"IpAddr": "10.201.0.2"}))
		if out := bfddRunning(); strings.Contains(out, "peer 10.201.0.2") || !strings.Contains(out, " profile fast") {
			t.Errorf("after the BfdSession's delete bfdd runs:\n%s", out)
		}
		b.upBoth(t) // BGP's session again
		if s := b.session("10.201.0.2"); s.Str("Owner") != "bgp" {
			t.Errorf("BGP's session: %v", s)
		}
	})

	t.Run("bad input changes nothing", func(t *testing.T) {
		b.upBoth(t)
		bfdRunning := bfddRunning
		beforeBFD, beforeBGP := bfdRunning(), frrtest.RunningBGP(t, b.s.be.FRR())
		for _, c := range []struct {
			name  string
			edit  func() error
			wants string
		}{
			{"a session on a missing param", func() error {
				return b.s.commit(b.s.edit(backend.Create, "BfdSession", model.Object{"IpAddr": "10.201.0.2", "ParamName": "missing"}))
			}, "BfdSessionParam \"missing\" does not exist"},
			{"a neighbour on a missing param", func() error {
				return b.s.commit(b.s.edit(backend.Update, "BGPv4Neighbor", model.Object{"Vrf": "default", "NeighborAddress": "10.201.0.2", "BfdSessionParam": "missing"}))
			}, "does not exist"},
			{"a session on an interface the switch does not have", func() error {
				return b.s.commit(b.s.edit(backend.Create, "BfdSession", model.Object{"IpAddr": "10.201.0.2", "Interface": "fpPort99"}))
			}, "Interface: "},
			{"a session on a loopback", func() error {
				return b.s.commit(b.s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
					b.s.edit(backend.Create, "BfdSession", model.Object{"IpAddr": "10.201.0.2", "Interface": "Loopback1"}))
			}, "is a loopback"},
			{"the param in use deleted", func() error {
				return b.s.commit(b.s.edit(backend.Delete, "BfdSessionParam", model.Object{"Name": "fast"}))
			}, "BGPv4Neighbor"},
		} {
			err := c.edit()
			if err == nil || !strings.Contains(err.Error(), c.wants) {
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.wants)
			}
			t.Logf("%s: %v", c.name, err)
		}
		if now := bfdRunning(); now != beforeBFD {
			t.Errorf("bfdd's configuration changed:\n%s\nwas\n%s", now, beforeBFD)
		}
		if now := frrtest.RunningBGP(t, b.s.be.FRR()); now != beforeBGP {
			t.Errorf("bgpd's configuration changed:\n%s\nwas\n%s", now, beforeBGP)
		}
	})

	t.Run("a peer group carries BFD for its members", func(t *testing.T) {
		b.s.mustCommit(
			b.s.edit(backend.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "65002", "HoldTime": int64(90), "KeepaliveTime": int64(30),
				"ConnectRetryTime": int64(1), "BfdEnable": true, "BfdSessionParam": "fast"}),
			b.s.edit(backend.Update, "BGPv4Neighbor", model.Object{"Vrf": "default", "NeighborAddress": "10.201.0.2", "PeerAS": "", "PeerGroup": "SPINES",
				"BfdEnable": false, "BfdSessionParam": "default", "HoldTime": int64(0), "KeepaliveTime": int64(0)}))
		running := frrtest.RunningBGP(t, b.s.be.FRR())
		for _, want := range []string{"neighbor SPINES bfd\n", "neighbor SPINES bfd profile fast\n", "neighbor 10.201.0.2 peer-group SPINES"} {
			if !strings.Contains(running, want) {
				t.Errorf("bgpd runs no %q:\n%s", strings.TrimSpace(want), running)
			}
		}
		if strings.Contains(running, "neighbor 10.201.0.2 bfd") {
			t.Errorf("the member has BFD lines of its own:\n%s", running)
		}
		b.upBoth(t)
		if s := b.session("10.201.0.2"); s.Int("DesiredMinTxInterval") != 100 {
			t.Errorf("the member's session runs %v, not the group's profile", s)
		}
	})
}

func actionFields(k *model.Kind, body string) (model.Object, error) {
	b, err := model.DecodeBody([]byte(body))
	if err != nil {
		return nil, err
	}
	return k.ActionFields(b)
}
