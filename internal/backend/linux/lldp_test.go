package linux

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/lldpd"
	"github.com/swmgr/swmgr/internal/model"
)

// peerLLDP is a plain lldpd of the test's own in a host namespace, with
// its own control socket.
type peerLLDP struct {
	t      *testing.T
	socket string
}

func startPeerLLDP(t *testing.T, ns, dir string) *peerLLDP {
	t.Helper()
	p := &peerLLDP{t: t, socket: filepath.Join(dir, "peer.socket")}
	cmd := exec.Command("ip", "netns", "exec", ns, "/usr/sbin/lldpd", "-d", "-u", p.socket, "-L", "/bin/true")
	logf, err := os.Create(filepath.Join(dir, "peer.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	if !eventually(10*time.Second, func() bool { return exec.Command("lldpcli", "-u", p.socket, "show", "configuration").Run() == nil }) {
		t.Fatal("the peer's lldpd does not answer")
	}
	for _, c := range [][]string{{"configure", "system", "hostname", "lldp-peer"}, {"configure", "lldp", "portidsubtype", "ifname"},
		{"configure", "lldp", "tx-interval", "5"}, {"resume"}} {
		p.cli(c...)
	}
	return p
}

func (p *peerLLDP) cli(args ...string) []byte {
	p.t.Helper()
	out, err := exec.Command("lldpcli", append([]string{"-u", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("lldpcli %v: %v: %s", args, err, out)
	}
	return out
}

// neighbor is what the peer heard on eth0 (nil: nothing).
func (p *peerLLDP) neighbor() *lldpd.Neighbor {
	p.t.Helper()
	out := p.cli("-f", "json0", "show", "neighbors", "details")
	ns, err := lldpd.ParseNeighbors(out)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, n := range ns {
		if n.Port == "eth0" {
			return &n
		}
	}
	return nil
}

// TestLLDPOnLinux: the switch's lldpd (started by the backend in the
// switch namespace) and a plain lldpd in the host namespace behind
// fpPort1 hear each other: the peer sees SystemParam's Hostname and the
// port's name, LLDPIntfState shows the peer; LLDPIntf turns the port
// off; a host name lldpcli would split cannot reach lldpd.
func TestLLDPOnLinux(t *testing.T) {
	needProgram(t, "lldpd", "/usr/sbin/lldpd", "/usr/sbin/lldpcli")
	l := newLabNamed(t, "ld", 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := daemonDir(t, l.prefix)
	etc := filepath.Join(dir, "etc")
	os.MkdirAll(etc, 0o755)
	uts := newUTS(t)
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.LLDP = &lldpd.Options{Dir: filepath.Join(dir, "lldpd")}
		o.System = &SystemOptions{EtcDir: etc, UTSNamespace: uts}
	})
	peer := startPeerLLDP(t, l.hosts[0], dir)
	s.mustCommit(
		s.edit(backend.Update, "SystemParam", model.Object{"Hostname": "lldp-sw1"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Update, "LLDPGlobal", model.Object{"Enable": true, "TranmitInterval": int64(5)}),
	)
	// LLDPIntfState as the configuration derives it, with what lldpd heard.
	intfState := func() model.Object {
		t.Helper()
		objs, err := s.be.LLDPNeighbors(context.Background(), []model.Object{{"IntfRef": "fpPort1", "Enable": true}})
		if err != nil {
			t.Fatal(err)
		}
		return objs[0]
	}

	t.Run("each hears the other", func(t *testing.T) {
		var n *lldpd.Neighbor
		if !eventually(35*time.Second, func() bool { n = peer.neighbor(); return n != nil && n.SystemName == "lldp-sw1" }) {
			t.Fatalf("the peer heard %+v, want the switch lldp-sw1", n)
		}
		if n.PortID != "fpPort1" {
			t.Errorf("port id %q, want fpPort1", n.PortID)
		}
		var st model.Object
		if !eventually(35*time.Second, func() bool { st = intfState(); return st.Str("PeerHostName") == "lldp-peer" }) {
			t.Fatalf("LLDPIntfState %v: no lldp-peer", st)
		}
		if st.Str("PeerPort") != "eth0" || st.Str("PeerMac") == "" || st.Str("PeerChassisId") != st.Str("PeerMac") || st.Str("HoldTime") != "20" {
			t.Errorf("LLDPIntfState %v: want port eth0, the peer's MAC as chassis id, hold time 4 x 5 s", st)
		}
		// A neighbor heard is a frame received, and the peer heard ours.
		if st.Int("ReceivedFrames") < 1 || st.Int("SendFrames") < 1 {
			t.Errorf("LLDPIntfState %v: want lldpd's frame counters, at least one each way", st)
		}
		g := s.stateOf("LLDPGlobal", model.Object{})
		if rx, _ := g["TotalRxFrames"].(float64); rx < float64(st.Int("ReceivedFrames")) || g["TotalTxFrames"] == 0.0 || g["TotalTxFrames"] == nil {
			t.Errorf("LLDPGlobal state %v: want the ports' totals", g)
		}
	})

	switchConf := func() string {
		out, _ := exec.Command("lldpcli", "-u", filepath.Join(dir, "lldpd", "lldpd.socket"), "show", "configuration").Output()
		return string(out)
	}

	t.Run("a killed lldpd is restarted with the configuration", func(t *testing.T) {
		syscall.Kill(s.be.LLDPD().Pid(), syscall.SIGKILL)
		if !eventually(20*time.Second, func() bool {
			for _, d := range s.be.Daemons() {
				if d.Name == "lldpd" && d.State == "up" && d.RestartCount == 1 {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("lldpd not restarted: %+v", s.be.Daemons())
		}
		// Started again, lldpd announces the kernel's host name until
		// swmgr sends SystemParam's.
		if !eventually(10*time.Second, func() bool { return strings.Contains(switchConf(), "lldp-sw1") }) {
			t.Fatalf("the restarted lldpd's configuration has not the host name:\n%s", switchConf())
		}
		if !eventually(35*time.Second, func() bool {
			st := intfState()
			return st.Str("PeerHostName") == "lldp-peer"
		}) {
			t.Errorf("after the restart the switch does not hear the peer: %v", intfState())
		}
	})

	t.Run("a host name lldpcli would split is refused before lldpd", func(t *testing.T) {
		for _, name := range []string{"x configure system description pwned", "x;reboot", "x\nconfigure system description pwned", "$(id)"} {
			if err := s.commit(s.edit(backend.Update, "SystemParam", model.Object{"Hostname": name})); err == nil {
				t.Errorf("host name %q accepted", name)
			}
			// Below the model, the daemon refuses it too.
			err := s.be.LLDPD().Apply(context.Background(), lldpd.Config{Enable: true, SystemName: name, Ports: map[string]lldpd.Mode{"fpPort1": lldpd.RxAndTx}})
			if err == nil {
				t.Errorf("lldpd took system name %q", name)
			}
		}
		if conf := switchConf(); strings.Contains(conf, "pwned") || !strings.Contains(conf, "lldp-sw1") {
			t.Errorf("lldpd's configuration changed:\n%s", conf)
		}
	})

	t.Run("LLDPIntf disables the port", func(t *testing.T) {
		s.mustCommit(s.edit(backend.Create, "LLDPIntf", model.Object{"IntfRef": "fpPort1", "Enable": false}))
		if !eventually(35*time.Second, func() bool { return peer.neighbor() == nil }) {
			t.Fatalf("the peer still hears %+v", peer.neighbor())
		}
		s.mustCommit(s.edit(backend.Delete, "LLDPIntf", model.Object{"IntfRef": "fpPort1"}))
		if !eventually(35*time.Second, func() bool { n := peer.neighbor(); return n != nil && n.SystemName == "lldp-sw1" }) {
			t.Fatal("the peer does not hear the switch again")
		}
	})
}
