package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// stateEvents follows the change feed and keeps its `event: state`
// events with the time each arrived.
type stateEvents struct {
	mu     sync.Mutex
	events []stateEvent
}

type stateEvent struct {
	at     time.Time
	Kind   string
	Object map[string]any
}

func followStates(t *testing.T, s *server) *stateEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /events: %d", resp.StatusCode)
	}
	e := &stateEvents{}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = line[7:]
			case strings.HasPrefix(line, "data: ") && event == "state":
				ev := stateEvent{at: time.Now()}
				if json.Unmarshal([]byte(line[6:]), &ev) == nil {
					e.mu.Lock()
					e.events = append(e.events, ev)
					e.mu.Unlock()
				}
			case line == "":
				event = ""
			}
		}
	}()
	return e
}

// first is the first BfdSessionState event since since of peer in state.
func (e *stateEvents) first(since time.Time, peer, state string) (stateEvent, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if !ev.at.Before(since) && ev.Kind == "BfdSessionState" && ev.Object["IpAddr"] == peer && ev.Object["SessionState"] == state {
			return ev, true
		}
	}
	return stateEvent{}, false
}

// TestBFDFailoverOnLinux: swmgr (the binary, --backend linux --bgp frr:
// zebra, bfdd and bgpd in the switch's namespace) and a peer FRR peer BGP
// with BFD at 100 ms x 3 and a 90 s hold time. BFD is up on both ends
// (BfdSessionState, the peer's bfdd). Each run drops every packet in the
// peer's namespace (nftables; both ends of the link stay up) and measures
// from the drop the time BGP leaves Established (read from the switch's
// bgpd) and the time the BfdSessionState change to down arrives on the
// change feed; bgpd's last notification says BFD brought the session
// down, long before the hold time could have. SWMGR_BFD_RUNS sets the
// runs (bench/bfdfailover.sh: 10); each run's figures are logged, then
// their minimum, median and maximum.
func TestBFDFailoverOnLinux(t *testing.T) {
	lab := frrtest.New(t, frrtest.Options{Prefix: "bfo", SwitchPort: "bfo1", PeerPort: "eth0", Subnet: "10.242.0", Announce: "198.18.8.1/24"})
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("SWMGR_BFD_RUNS")); err == nil && n > 0 {
		runs = n
	}
	// The peer: BGP to the switch with BFD, hold time 90 s.
	peerCfg := lab.Peer.Config("65001")
	peerCfg.Neighbors[0].HoldTime, peerCfg.Neighbors[0].KeepaliveTime = 90, 30
	peerCfg.Neighbors[0].BfdEnable, peerCfg.Neighbors[0].BfdSessionParam = true, "fast"
	peerCfg.BFD = frr.BFD{Profiles: []frr.BFDProfile{{Name: "fast", ReceiveInterval: 100, TransmitInterval: 100, DetectMultiplier: 3}}}
	if err := lab.Peer.Router.Apply(context.Background(), peerCfg); err != nil {
		t.Fatal(err)
	}

	frrDir := filepath.Join(lab.Dir, "frr")
	t.Cleanup(func() { killDaemonsOf(frrDir) })
	portMap := filepath.Join(lab.Dir, "ports.conf")
	os.WriteFile(portMap, []byte("fpPort1 bfo1\n"), 0o644)
	s := startServer(t, "", "--backend", "linux", "--netns", lab.SwitchNS, "--port-map", portMap, "--bgp", "frr", "--frr-dir", frrDir, "--ntp", "sim", "--system", "sim")
	events := followStates(t, s)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.242.0.1/30"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Vrf":"default","ASNum":"65001","RouterId":"10.242.0.1"}`)
	s.expect(t, 201, "POST", "/config/BfdSessionParam", `{"Name":"fast","RequiredMinRxInterval":100,"DesiredMinTxInterval":100,"LocalMultiplier":3,"AuthData":"snaproute"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.242.0.2","PeerAS":"65002","HoldTime":90,"KeepaliveTime":30,"ConnectRetryTime":1,"BfdEnable":true,"BfdSessionParam":"fast"}`)
	if r := s.do(t, "GET", "/config/BfdSessionParam?Name=fast", ""); strings.Contains(string(r.raw), "snaproute") {
		t.Errorf("a read returns the BFD key: %s", r.raw)
	}

	// The switch's bgpd, read directly (the REST state is cached for
	// 200 ms, too coarse for the measure).
	bgpd, err := frr.New(frr.Options{Dir: frrDir})
	if err != nil {
		t.Fatal(err)
	}
	established := func() bool {
		ns, err := bgpd.Neighbors(context.Background())
		return err == nil && slices.ContainsFunc(ns, func(n frr.NeighborState) bool {
			return n.NeighborAddress == "10.242.0.2" && n.SessionState == frr.SessionEstablished
		})
	}
	bfdUp := func() (string, bool) {
		r := s.do(t, "GET", "/state/BfdSessions", "")
		var list struct {
			Objects []struct{ Object map[string]any }
		}
		json.Unmarshal(r.raw, &list)
		for _, o := range list.Objects {
			if o.Object["IpAddr"] == "10.242.0.2" {
				return string(r.raw), o.Object["SessionState"] == "up" && o.Object["DesiredMinTxInterval"] == float64(100)
			}
		}
		return string(r.raw), false
	}
	waitUp := func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			raw, up := bfdUp()
			peers, _ := lab.Peer.Router.BFDPeers(context.Background())
			if established() && up && len(peers) == 1 && peers[0].Status == "up" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("BGP with BFD not up on both ends: switch's BfdSessionState %s; peer's %+v", raw, peers)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	waitUp()
	metrics := string(scrape(t, s))
	for _, want := range []string{"swmgr_bfd_sessions_up{vrf=\"default\"} 1", "swmgr_bfd_session_up{interface=\"fpPort1\",peer=\"10.242.0.2\"} 1"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "swmgr_bfd"))
		}
	}

	var toBGP, toEvent []time.Duration
	for run := 1; run <= runs; run++ {
		waitUp()
		undo := frrtest.DropAll(t, lab.Peer.Netns)
		start := time.Now()
		for established() {
			// The test waits 20 s at most, far below the 90 s hold time:
			// a session down within it was brought down by BFD.
			if time.Since(start) > 20*time.Second {
				undo()
				t.Fatalf("run %d: BGP still Established %v after the drop (hold time 90 s)", run, time.Since(start))
			}
			time.Sleep(2 * time.Millisecond)
		}
		bgpDown := time.Since(start)
		deadline := time.Now().Add(10 * time.Second)
		ev, ok := events.first(start, "10.242.0.2", "down")
		for ; !ok && time.Now().Before(deadline); ev, ok = events.first(start, "10.242.0.2", "down") {
			time.Sleep(2 * time.Millisecond)
		}
		// Read while the drop lasts: once traffic passes, the session's
		// next attempts may be reset for reasons of their own.
		why := frrtest.LastReset(t, lab.SwitchNS, frrDir, "10.242.0.2")
		undo()
		if !ok {
			t.Fatalf("run %d: no BfdSessionState change to down on the change feed", run)
		}
		if !strings.Contains(strings.ToLower(why), "bfd down") {
			t.Fatalf("run %d: bgpd's last reset of the session was not BFD's: %s", run, why)
		}
		toBGP, toEvent = append(toBGP, bgpDown), append(toEvent, ev.at.Sub(start))
		t.Logf("run %d: from the drop, BGP left Established after %v; the change feed's BfdSessionState down event arrived after %v (diagnostic %v)",
			run, bgpDown.Round(time.Millisecond), ev.at.Sub(start).Round(time.Millisecond), ev.Object["LocalDiagType"])
	}
	t.Logf("%d runs, BFD 100 ms x 3: BGP down after %s; change-feed event after %s (min/median/max)", runs, spread(toBGP), spread(toEvent))
}

// spread is the minimum, median and maximum of ds.
func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%v/%v/%v", s[0].Round(time.Millisecond), s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// grepLines is the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
