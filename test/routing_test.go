package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// killDaemonsOf ends every daemon whose pid file is in dir and whose
// command line names dir: what a killed swmgr leaves behind.
func killDaemonsOf(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(cmdline, []byte(dir)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// running reports whether pid is a live process: not gone, not a zombie
// (a killed daemon whose new parent has not reaped it yet holds nothing).
func running(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i >= 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X'
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// frrServerFlags are the flags of a swmgr on the Linux backend in lab's
// switch namespace, its fpPort1 the lab's switch port, running BGP in an
// FRR of its own in frrDir (ended when the test ends, whatever killed
// swmgr).
func frrServerFlags(t *testing.T, lab *frrtest.Lab) (flags []string, frrDir string) {
	frrDir = filepath.Join(lab.Dir, "frr")
	t.Cleanup(func() { killDaemonsOf(frrDir) })
	portMap := filepath.Join(lab.Dir, "ports.conf")
	if err := os.WriteFile(portMap, []byte("fpPort1 "+lab.SwitchPort+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--backend", "linux", "--netns", lab.SwitchNS, "--port-map", portMap, "--bgp", "frr", "--frr-dir", frrDir, "--ntp", "sim", "--system", "sim"}, frrDir
}

// TestKill9ConvergesBGP: swmgr on the Linux backend runs BGP in FRR; after
// a kill -9 of swmgr its FRR is still running, unsupervised. The next
// start ends that FRR, starts its own and converges to the store: the
// session comes back Established with the stored neighbor.
func TestKill9ConvergesBGP(t *testing.T) {
	lab := frrtest.New(t, frrtest.Options{Prefix: "rtk", SwitchPort: "rtk1", PeerPort: "eth0", Subnet: "10.241.0", Announce: "198.18.7.1/24"})
	sw := lab.SwitchNS
	ip := func(args ...string) string { t.Helper(); return frrtest.Run(t, append([]string{"ip"}, args...)...) }
	flags, frrDir := frrServerFlags(t, lab)
	data := t.TempDir()

	s := startServer(t, data, flags...)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.241.0.1/30"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Vrf":"default","ASNum":"65001","RouterId":"10.241.0.1"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.241.0.2","PeerAS":"65002","HoldTime":9,"KeepaliveTime":3,"ConnectRetryTime":1,"Description":"survives"}`)
	established := func(s *server) {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for {
			r := s.do(t, "GET", "/state/BGPv4Neighbors", "")
			if strings.Contains(string(r.raw), `"SessionState":6`) && strings.Contains(ip("-n", sw, "route", "show", "198.18.7.0/24"), "proto bgp") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no Established session with the learned route: %s", r.raw)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	established(s)
	oldBgpd := pidIn(t, filepath.Join(frrDir, "bgpd.pid"))
	s.kill9()
	if syscall.Kill(oldBgpd, 0) != nil {
		t.Fatal("bgpd died with swmgr: the test no longer covers a leftover FRR")
	}

	s = startServer(t, data, flags...)
	if running(oldBgpd) {
		t.Errorf("the killed swmgr's bgpd (pid %d) is still running", oldBgpd)
	}
	if pid := pidIn(t, filepath.Join(frrDir, "bgpd.pid")); pid == oldBgpd {
		t.Errorf("bgpd was not restarted")
	}
	established(s)
	out, _ := exec.Command("ip", "netns", "pids", sw).Output()
	if n := len(strings.Fields(string(out))); n != 3 {
		t.Errorf("%d processes in the switch namespace, want zebra, bfdd and bgpd only: %s", n, out)
	}
}

// chronySwitch is a switch namespace with one port (a veth) for swmgr on
// the Linux backend running NTP in its own chronyd (no clock set).
type chronySwitch struct {
	ns, chronyDir, pidFile, portMap string
}

// newChronySwitch makes it (named prefix and a number), removed when the
// test ends, with the last chronyd if a start failed with it running.
func newChronySwitch(t *testing.T, prefix string) chronySwitch {
	t.Helper()
	needTool(t, "chronyd")
	ns := fmt.Sprintf("%s%05d", prefix, time.Now().UnixNano()%100000)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	dir := frrtest.Dir(t, prefix)
	cs := chronySwitch{ns: ns, chronyDir: filepath.Join(dir, "chrony"), portMap: filepath.Join(dir, "ports.conf")}
	cs.pidFile = filepath.Join(cs.chronyDir, "run", "chronyd.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(cs.pidFile); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); pid > 1 && bytes.Contains(cmdline, []byte(cs.chronyDir)) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	dev := prefix[2:] + ns[len(prefix):]
	if out, err := exec.Command("ip", "-n", ns, "link", "add", dev+"a", "type", "veth", "peer", "name", dev+"b").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v %s", err, out)
	}
	os.WriteFile(cs.portMap, []byte("fpPort1 "+dev+"a\n"), 0o644)
	return cs
}

// flags are swmgr's on the switch: the Linux backend, chronyd, the rest
// simulated.
func (cs chronySwitch) flags() []string {
	return []string{"--backend", "linux", "--netns", cs.ns, "--port-map", cs.portMap, "--bgp", "sim", "--ntp", "chrony", "--chrony-dir", cs.chronyDir, "--ntp-no-clock", "--system", "sim"}
}

// TestKill9RestartsChrony: swmgr on the Linux backend runs NTP in its own
// chronyd; a kill -9 of swmgr leaves that chronyd running, and once it is
// killed too, nobody may wait for it (here, pid 1 need not reap it: a
// zombie). The next start ends it, waits for it to be gone, and starts a
// chronyd of its own that reports the stored server; again after a second
// kill -9.
func TestKill9RestartsChrony(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs chronyd in a network namespace")
	}
	cs := newChronySwitch(t, "swck")
	pidFile := cs.pidFile
	data := t.TempDir()
	flags := cs.flags()

	s := startServer(t, data, flags...)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.123"}`)
	for round := 1; round <= 2; round++ {
		old := pidIn(t, pidFile)
		s.kill9()
		if syscall.Kill(old, 0) != nil {
			t.Fatal("chronyd died with swmgr: the test no longer covers a leftover chronyd")
		}
		var err error
		s, err = tryStart(t, data, flags...)
		if err != nil {
			t.Fatalf("round %d: the start after kill -9 failed: %v", round, err)
		}
		if pid := pidIn(t, pidFile); pid == old {
			t.Errorf("round %d: chronyd was not restarted (pid %d)", round, pid)
		}
		if running(old) {
			t.Errorf("round %d: the killed swmgr's chronyd (pid %d) still runs", round, old)
		}
		r := s.expect(t, 200, "GET", "/state/NtpServers", "")
		if !strings.Contains(string(r.raw), "192.0.2.123") {
			t.Errorf("round %d: the new chronyd does not report the stored server: %s", round, r.raw)
		}
	}
}
