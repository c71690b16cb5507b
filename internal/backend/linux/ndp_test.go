package linux

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// neighSysctls reads net.ipv6.neigh.<dev>.base_reachable_time_ms and
// retrans_time_ms of each dev in the namespace ns, as "dev=reach/retrans"
// words.
func neighSysctls(t *testing.T, ns string, devs ...string) string {
	t.Helper()
	var out []string
	for _, dev := range devs {
		v := run(t, "ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv6.neigh."+dev+".base_reachable_time_ms", "net.ipv6.neigh."+dev+".retrans_time_ms")
		out = append(out, dev+"="+strings.Join(strings.Fields(v), "/"))
	}
	return strings.Join(out, " ")
}

// TestNDPGlobalOnLinux: at FlexSwitch's factory values the kernel keeps
// its own neighbour timing (and what an operator set by hand); another
// value reaches every port's neighbour table, in the switch's namespace
// and a VRF's, and a port moved into a VRF made later takes it (the lab's
// namespaces have no net.ipv6.neigh.default: the initial namespace alone
// has one, which the tests leave alone); the state reads it back; a value changed by hand is put
// back by reconciliation; a commit failing midway and a value that would
// flood change nothing; back at the factory values the kernel has its
// defaults again.
func TestNDPGlobalOnLinux(t *testing.T) {
	l := newLab(t, 3, KernelOptions{})
	l.k.Close()
	l.k = nil
	// An operator's own setting on a port, before swmgr starts.
	run(t, "ip", "netns", "exec", l.sw, "sysctl", "-qw", "net.ipv6.neigh.fpPort3.retrans_time_ms=1200")
	s := startSwitch(t, l, t.TempDir())
	red, blue := l.prefix+"vrf-red", l.prefix+"vrf-blue"
	s.mustCommit(s.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.2.1/24", "Vrf": "red"}))
	kernelOwn := "fpPort1=30000/1000 fpPort3=30000/1200"
	if got := neighSysctls(t, l.sw, "fpPort1", "fpPort3"); got != kernelOwn {
		t.Fatalf("at the factory values: %s, want the kernel's own %s", got, kernelOwn)
	}
	ndp := func(reach, retrans int64) error {
		return s.commit(s.edit(backend.Update, "NDPGlobal", model.Object{"Vrf": "default", "ReachableTime": reach, "RetransmitInterval": retrans}))
	}
	if err := ndp(2, 500); err != nil {
		t.Fatal(err)
	}
	applied := "fpPort1=120000/500 fpPort3=120000/500"
	if got := neighSysctls(t, l.sw, "fpPort1", "fpPort3"); got != applied {
		t.Errorf("switch namespace: %s, want %s", got, applied)
	}
	if got, want := neighSysctls(t, red, "fpPort2"), "fpPort2=120000/500"; got != want {
		t.Errorf("VRF red's namespace: %s, want %s", got, want)
	}
	st := s.stateOf("NDPGlobal", model.Object{"Vrf": "default"})
	if num(st["ReachableTimeMsInEffect"]) != 120000 || num(st["RetransmitIntervalMsInEffect"]) != 500 || num(st["RouterAdvertisementIntervalInEffect"]) != 0 { // no FRR: no advertisement
		t.Errorf("state: %v", st)
	}

	// A VRF made later, and the port moved into it in the same commit.
	s.mustCommit(s.edit(backend.Create, "Vrf", model.Object{"Vrf": "blue"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort3", "IpAddr": "10.0.3.1/24", "Vrf": "blue"}))
	if got, want := neighSysctls(t, blue, "fpPort3"), "fpPort3=120000/500"; got != want {
		t.Errorf("VRF blue's namespace, made after: %s, want %s", got, want)
	}

	// Changed by hand: reconciliation puts it back.
	run(t, "ip", "netns", "exec", l.sw, "sysctl", "-qw", "net.ipv6.neigh.fpPort1.retrans_time_ms=1000")
	changed := s.be.Reconcile()
	if got := neighSysctls(t, l.sw, "fpPort1"); got != "fpPort1=120000/500" || !strings.Contains(strings.Join(changed, "\n"), "net.ipv6.neigh.fpPort1.retrans_time_ms 500") {
		t.Errorf("after reconciliation: %s; it changed %q", got, changed)
	}

	// The kernel keeps the timers in clock ticks: 1001 ms reads back as
	// the next tick's ms (1004 at 250 Hz), which is the value, not drift.
	if err := ndp(2, 1001); err != nil {
		t.Fatal(err)
	}
	if changed := s.be.Reconcile(); len(changed) != 0 {
		t.Errorf("a value rounded to the kernel's clock is written again by reconciliation: %q", changed)
	}
	if err := ndp(2, 500); err != nil {
		t.Fatal(err)
	}

	// A commit failing at its second kernel change leaves nothing of it.
	all := func() string {
		return neighSysctls(t, l.sw, "fpPort1") + " " + neighSysctls(t, red, "fpPort2") + " " + neighSysctls(t, blue, "fpPort3")
	}
	before := all()
	k := s.be.Kernel()
	k.FailAt = func(n int, what string) error {
		if n == 2 {
			return errors.New("injected")
		}
		return nil
	}
	err := ndp(3, 700)
	k.FailAt = nil
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	if got := all(); got != before {
		t.Errorf("a failed commit changed the kernel: %s, was %s", got, before)
	}
	// A value that would flood a link is refused, nothing changed.
	if err := ndp(2, 50); err == nil || !strings.Contains(err.Error(), "RetransmitInterval") {
		t.Errorf("RetransmitInterval 50: %v", err)
	}
	if got := all(); got != before {
		t.Errorf("a refused commit changed the kernel: %s, was %s", got, before)
	}

	// Back at the factory values: the kernel's defaults everywhere.
	if err := ndp(10, 1); err != nil {
		t.Fatal(err)
	}
	want := "fpPort1=30000/1000 fpPort2=30000/1000 fpPort3=30000/1000"
	if got := all(); got != want {
		t.Errorf("back at the factory values: %s, want %s", got, want)
	}
	st = s.stateOf("NDPGlobal", model.Object{"Vrf": "default"})
	if num(st["ReachableTimeMsInEffect"]) != 30000 || num(st["RetransmitIntervalMsInEffect"]) != 1000 {
		t.Errorf("state at the factory values: %v", st)
	}
}

// TestNDPGlobalCrashMidCommit stops an NDPGlobal commit after its kernel
// changes and before the store records them, as a kill -9 would: the next
// start gives the kernel the stored timers back.
func TestNDPGlobalCrashMidCommit(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := t.TempDir()
	s := startSwitch(t, l, dir)
	s.mustCommit(s.edit(backend.Update, "NDPGlobal", model.Object{"Vrf": "default", "ReachableTime": int64(2)}))
	recorded := neighSysctls(t, l.sw, "fpPort1", "fpPort2")
	s.be.crashAfterKernel = true
	err := s.commit(s.edit(backend.Update, "NDPGlobal", model.Object{"Vrf": "default", "ReachableTime": int64(5), "RetransmitInterval": int64(800)}))
	if err == nil {
		t.Fatal("the simulated crash did not fail the commit")
	}
	if got := neighSysctls(t, l.sw, "fpPort1", "fpPort2"); got == recorded {
		t.Fatal("the crashed apply changed nothing in the kernel; the test proves nothing")
	}
	s.stop()
	startSwitch(t, l, dir)
	if got := neighSysctls(t, l.sw, "fpPort1", "fpPort2"); got != recorded {
		t.Errorf("after the restart: %s, want the stored %s", got, recorded)
	}
}

// TestNDPRouterAdvertisementsOnLinux: RouterAdvertisementInterval reaches
// FRR on the interface of every unnumbered neighbor (one made before it
// and one after), where zebra sends advertisements at it; the state says
// it; reconciliation sends FRR nothing; back at the factory value FRR
// sends at its own interval again (10 s).
func TestNDPRouterAdvertisementsOnLinux(t *testing.T) {
	frrtest.Need(t)
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir := daemonDir(t, l.prefix)
	s := startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
	})
	vtysh := func(cmd string) string {
		return frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", cmd)
	}
	unnumbered := func(port string) []engine.Edit {
		return []engine.Edit{s.edit(backend.Update, "Port", model.Object{"IntfRef": port, "AdminState": "UP"}),
			s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": port}),
			s.edit(backend.Create, "BGPv4Neighbor", model.Object{"IntfRef": port, "PeerAS": "external"})}
	}
	s.mustCommit(append(unnumbered("fpPort1"), s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.255.0.1"}))...)
	if intf := vtysh("show interface fpPort1"); !strings.Contains(intf, "router advertisements are sent every 10 seconds") {
		t.Fatalf("FRR's own advertisements on the unnumbered interface: %s", intf)
	}
	s.mustCommit(s.edit(backend.Update, "NDPGlobal", model.Object{"Vrf": "default", "RouterAdvertisementInterval": int64(3)}))
	s.mustCommit(unnumbered("fpPort2")...)
	running := vtysh("show running-config")
	for _, port := range []string{"fpPort1", "fpPort2"} {
		if !strings.Contains(running, "interface "+port+"\n ipv6 nd ra-interval 3\n") {
			t.Errorf("FRR runs no ra-interval 3 on %s:\n%s", port, running)
		}
		if intf := vtysh("show interface " + port); !strings.Contains(intf, "router advertisements are sent every 3 seconds") {
			t.Errorf("advertisements on %s: %s", port, intf)
		}
	}
	if st := s.stateOf("NDPGlobal", model.Object{"Vrf": "default"}); num(st["RouterAdvertisementIntervalInEffect"]) != 3 {
		t.Errorf("state: %v", st)
	}
	applies := s.be.FRR().Applies()
	s.be.Reconcile()
	if n := s.be.FRR().Applies(); n != applies {
		t.Errorf("a reconciliation asked FRR %d times", n-applies)
	}
	s.mustCommit(s.edit(backend.Update, "NDPGlobal", model.Object{"Vrf": "default", "RouterAdvertisementInterval": int64(5)})) // FlexSwitch's default
	if running := vtysh("show running-config"); strings.Contains(running, "ra-interval") {
		t.Errorf("FRR still runs an ra-interval at the factory value:\n%s", running)
	}
	if intf := vtysh("show interface fpPort1"); !strings.Contains(intf, "router advertisements are sent every 10 seconds") {
		t.Errorf("advertisements at the factory value: %s", intf)
	}
}
