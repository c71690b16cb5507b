package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLLDPThroughTheBinary: swmgr serve --backend linux --lldp lldpd runs
// an lldpd in the switch's namespace; enabled with FlexSwitch's lab call
// (PATCH LLDPGlobal), it and a plain lldpd behind fpPort1 hear each other:
// state/LLDPIntfs shows the peer and the change feed said so, the peer
// sees fpPort1, and SystemStatus lists lldpd among the daemons.
func TestLLDPThroughTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	for _, p := range []string{"/usr/sbin/lldpd", "/usr/sbin/lldpcli"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run installs Debian's lldpd", p)
			}
			t.Skipf("Debian's lldpd is not installed (%s)", p)
		}
	}
	prefix := fmt.Sprintf("ldb%05d", rand.IntN(100000))
	sw, host := prefix+"sw", prefix+"h1"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", sw).Run(); exec.Command("ip", "netns", "del", host).Run() })
	ip("netns", "add", sw)
	ip("netns", "add", host)
	ip("-n", sw, "link", "add", "fpPort1", "type", "veth", "peer", "name", "eth0", "netns", host)
	ip("-n", host, "link", "set", "eth0", "up")
	// lldpcli runs as _lldpd: it must reach the socket's directory.
	dir, err := os.MkdirTemp("", "swmgr-lldp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	peerSocket := filepath.Join(dir, "peer.socket")
	peer := exec.Command("ip", "netns", "exec", host, "/usr/sbin/lldpd", "-d", "-u", peerSocket, "-L", "/bin/true")
	if err := peer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Process.Kill(); peer.Wait() })
	lldpcli := func(args ...string) string {
		out, _ := exec.Command("lldpcli", append([]string{"-u", peerSocket}, args...)...).CombinedOutput()
		return string(out)
	}
	for i := 0; i < 50 && exec.Command("lldpcli", "-u", peerSocket, "show", "configuration").Run() != nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range [][]string{{"configure", "system", "hostname", "lldp-peer"}, {"configure", "lldp", "tx-interval", "5"}, {"resume"}} {
		lldpcli(c...)
	}

	s := startServer(t, filepath.Join(dir, "data"), "--backend", "linux", "--netns", sw, "--bgp", "sim", "--ntp", "sim", "--system", "sim",
		"--lldp", "lldpd", "--lldp-dir", filepath.Join(dir, "lldpd"))
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	events := followStates(t, s)
	s.expect(t, 200, "PATCH", "/config/LLDPGlobal", `{"Enable":true,"TranmitInterval":5}`)

	var fp1 map[string]any
	deadline := time.Now().Add(35 * time.Second)
	for time.Now().Before(deadline) {
		for _, o := range objects(s.listAll(t, "/state/LLDPIntfs", 100)) {
			if o["IntfRef"] == "fpPort1" {
				fp1 = o
			}
		}
		if fp1["PeerHostName"] == "lldp-peer" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if fp1["PeerHostName"] != "lldp-peer" || fp1["Enable"] != true || fp1["PeerMac"] == "" {
		t.Fatalf("state/LLDPIntfs fpPort1: %v", fp1)
	}
	// The neighbour's arrival was on the change feed too.
	heardOnFeed := func() bool {
		events.mu.Lock()
		defer events.mu.Unlock()
		for _, ev := range events.events {
			if ev.Kind == "LLDPIntfState" && ev.Object["IntfRef"] == "fpPort1" && ev.Object["PeerHostName"] == "lldp-peer" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); !heardOnFeed(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no LLDPIntfState event of fpPort1's neighbour on the change feed: %v", events.events)
		}
	}
	// /metrics counts the neighbour and the frames heard on fpPort1.
	scraped := scrape(t, s)
	for _, want := range []string{`swmgr_lldp_neighbor{port="fpPort1"} 1`, `swmgr_lldp_enabled{port="fpPort1"} 1`} {
		if !strings.Contains(string(scraped), "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !regexp.MustCompile(`\nswmgr_lldp_frames_received_total\{port="fpPort1"\} [1-9]`).Match(scraped) {
		t.Errorf("/metrics counts no LLDP frame received on fpPort1")
	}
	heard := regexp.MustCompile(`PortID:\s+ifname fpPort1`)
	out := lldpcli("show", "neighbors")
	for deadline := time.Now().Add(35 * time.Second); !heard.MatchString(out) && time.Now().Before(deadline); out = lldpcli("show", "neighbors") {
		time.Sleep(500 * time.Millisecond)
	}
	if !heard.MatchString(out) {
		t.Errorf("the peer does not hear fpPort1:\n%s", out)
	}
	st := s.expect(t, 200, "GET", "/state/SystemStatus", "").object()
	found := false
	for _, d := range st["FlexDaemons"].([]any) {
		if m, _ := d.(map[string]any); m["Name"] == "lldpd" && m["State"] == "up" {
			found = true
		}
	}
	if !found {
		t.Errorf("SystemStatus FlexDaemons has no lldpd up: %v", st["FlexDaemons"])
	}
}
