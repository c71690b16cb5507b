package linux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// TestLAGWithLACP makes PortChannel1 of fpPort1 and fpPort2 through the
// engine, with an address on it, against a peer bond in 802.3ad mode that
// holds the far ends of both ports: LACP brings both members to collecting
// and distributing, each member names the peer as its partner (system id,
// key, port, state bits), the peer reaches the LAG's address, a bond
// deleted by hand comes back with its members and address, one member
// cut leaves the LAG up and that member down, MinLinks 2 then takes it
// down; the other options (Interval, LagHash, SystemPriority, SystemIdMac,
// LacpMode PASSIVE) change on the made LAG in one commit, which undoes
// them all when it fails, and the member comes back with the peer hearing
// the new system id; deleting it all leaves the ports out of any bond. On
// a kernel without bonding the LAG is refused with a 400 naming it, and
// the rest runs in the VM.
func TestLAGWithLACP(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	up := func(p string) engine.Edit {
		return s.edit(backend.Update, "Port", model.Object{"IntfRef": p, "AdminState": "UP"})
	}
	lag := model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1", "fpPort2"}, "Interval": int64(model.IntervalFast)}
	addr := model.Object{"IntfRef": "PortChannel1", "IpAddr": "10.30.0.1/24"}
	if !s.be.Kernel().Features().Bond {
		before := l.dump()
		err := s.commit(up("fpPort1"), up("fpPort2"), s.edit(backend.Create, "LaPortChannel", lag))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "no bonding driver") {
			t.Fatalf("a LAG on a kernel without bonding: %v", err)
		}
		if d := diffLines(before, l.dump()); d != "" {
			t.Fatalf("a refused commit changed the kernel:\n%s", d)
		}
		needFeature(t, s.be.Kernel(), false, "bonding")
	}
	s.mustCommit(up("fpPort1"), up("fpPort2"), s.edit(backend.Create, "LaPortChannel", lag), s.edit(backend.Create, "IPv4Intf", addr))

	// The peer: both far ends in one namespace, bonded with LACP.
	h1, h2 := l.hosts[0], l.hosts[1]
	run(t, "ip", "-n", h2, "link", "set", "eth0", "down")
	run(t, "ip", "-n", h2, "link", "set", "eth0", "name", "eth1")
	run(t, "ip", "-n", h2, "link", "set", "eth1", "netns", h1)
	l.host(1, "ip", "link", "add", "bond0", "type", "bond", "mode", "802.3ad", "miimon", "100", "lacp_rate", "fast")
	for _, e := range []string{"eth0", "eth1"} {
		l.host(1, "ip", "link", "set", e, "down")
		l.host(1, "ip", "link", "set", e, "master", "bond0")
	}
	l.host(1, "ip", "link", "set", "bond0", "up")
	l.host(1, "ip", "addr", "add", "10.30.0.2/24", "dev", "bond0")

	inBundle := func(want int) func() bool {
		return func() bool {
			ms, err := s.be.lagMembers()
			n := 0
			for _, m := range ms {
				if m["Collecting"] == true && m["Distributing"] == true && m["OperState"] == "UP IN BUNDLE" {
					n++
				}
			}
			return err == nil && n == want
		}
	}
	if !eventually(30*time.Second, inBundle(2)) {
		ms, _ := s.be.lagMembers()
		t.Fatalf("LACP did not bring both members into the bundle: %v", ms)
	}
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.30.0.1") }) {
		t.Fatal("the peer cannot reach 10.30.0.1 on PortChannel1")
	}
	// A bond deleted behind swmgr's back is made again by the
	// reconciliation, its members and its address with it.
	run(t, "ip", "-n", l.sw, "link", "del", "PortChannel1")
	if !eventually(30*time.Second, inBundle(2)) || !eventually(10*time.Second, func() bool { return l.ping(1, "10.30.0.1") }) {
		ms, _ := s.be.lagMembers()
		t.Fatalf("after the bond was deleted by hand: %v; %s", ms, run(t, "ip", "-n", l.sw, "-o", "addr", "show"))
	}
	lagUp := func(want string) func() bool {
		return func() bool {
			return strings.Contains(s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}), `"OperState":"`+want+`"`)
		}
	}
	if !eventually(5*time.Second, lagUp("UP")) {
		t.Fatalf("state/LaPortChannel: %s", s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}
	// Each member names its partner: the peer's bond, its key and port.
	peerMAC := strings.TrimSpace(l.host(1, "cat", "/sys/class/net/bond0/address"))
	member := func(port string) model.Object {
		ms, err := s.be.lagMembers()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m["IntfRef"] == port {
				return m
			}
		}
		t.Fatalf("no member state of %s in %v", port, ms)
		return nil
	}
	// (The partner's collecting and distributing reach a member with the
	// partner's next LACPDU, a second at the fast rate.)
	partnered := func(p string) bool {
		m := member(p)
		return m["PartnerId"] == peerMAC && m.Int("PartnerKey") != 0 && m.Int("OperKey") != 0 && m.Int("PartnerPortNum") != 0 && m["PartnerCollecting"] == true &&
			m["PartnerDistributing"] == true && m.Int("PartnerSynchronization") == 0 && m["Selected"] == true && m["PartnerDefaulted"] == false
	}
	if !eventually(10*time.Second, func() bool { return partnered("fpPort1") && partnered("fpPort2") }) {
		t.Errorf("partners not the peer's bond %s in sync: %v; %v", peerMAC, member("fpPort1"), member("fpPort2"))
	}
	if member("fpPort1").Int("PartnerPortNum") == member("fpPort2").Int("PartnerPortNum") {
		t.Errorf("both members name the same partner port: %v %v", member("fpPort1"), member("fpPort2"))
	}

	// One member cut: the LAG stays up and carries traffic; the cut
	// member is down in its state.
	l.host(1, "ip", "link", "set", "eth1", "down")
	if !eventually(10*time.Second, inBundle(1)) || !lagUp("UP")() {
		ms, _ := s.be.lagMembers()
		t.Fatalf("one member cut: %v; %s", ms, s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}
	if m := member("fpPort2"); m["OperState"] != "DOWN" || m["Collecting"] == true || m["Distributing"] == true || m["Selected"] == true || m["PartnerId"] != "" {
		t.Errorf("the cut member: %v", m)
	}
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.30.0.1") }) {
		t.Fatal("the peer cannot reach 10.30.0.1 over the one member left")
	}
	// MinLinks 2 with one member left takes the LAG down.
	s.mustCommit(s.edit(backend.Update, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "MinLinks": int64(2)}))
	if !eventually(10*time.Second, lagUp("DOWN")) {
		t.Fatalf("MinLinks 2 with one member: %s", s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}
	// Every other option of the made LAG changes in place, in one commit;
	// one failing at its last kernel step (the bond up again) leaves the
	// bond's options as they were.
	bondOpts := func() string {
		for _, line := range strings.Split(run(t, "ip", "-n", l.sw, "-d", "link", "show", "PortChannel1"), "\n") {
			if strings.Contains(line, " bond mode ") {
				return strings.TrimSpace(line)
			}
		}
		t.Fatal("PortChannel1 has no bond options")
		return ""
	}
	before := bondOpts()
	change := s.edit(backend.Update, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "MinLinks": int64(1), "Interval": int64(model.IntervalSlow),
		"LagHash": int64(model.LagHashL34), "SystemPriority": int64(100), "SystemIdMac": "02-00-00-00-00-01", "LacpMode": int64(model.LacpPassive)})
	s.be.Kernel().FailAt = func(n int, what string) error {
		if what == "set PortChannel1 up" {
			return errors.New("injected")
		}
		return nil
	}
	if err := s.commit(change); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	s.be.Kernel().FailAt = nil
	if after := bondOpts(); after != before {
		t.Fatalf("a failed change left the bond's options\n%s\nwere\n%s", after, before)
	}
	s.mustCommit(change)
	opts := bondOpts()
	for _, want := range []string{"min_links 1 ", "lacp_active off ", "lacp_rate slow ", "xmit_hash_policy layer3+4 ", "ad_actor_sys_prio 100 ", "ad_actor_system 02:00:00:00:00:01 "} {
		if !strings.Contains(opts+" ", want) {
			t.Errorf("bond options %q lack %q", opts, want)
		}
	}
	// Passive against an active peer, the member left comes back into the
	// bundle, and the peer hears the new system id.
	if !eventually(40*time.Second, inBundle(1)) || !eventually(5*time.Second, lagUp("UP")) {
		ms, _ := s.be.lagMembers()
		t.Fatalf("after the options changed: %v; %s", ms, s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}
	if m := member("fpPort1"); m.Int("Activity") != model.LacpPassive || m.Int("Timeout") != 0 {
		t.Errorf("fpPort1 after LacpMode PASSIVE, Interval SLOW: %v", m)
	}
	if !eventually(10*time.Second, func() bool {
		return strings.Contains(l.host(1, "cat", "/proc/net/bonding/bond0"), "system mac address: 02:00:00:00:00:01")
	}) {
		t.Errorf("the peer does not hear system id 02:00:00:00:00:01:\n%s", l.host(1, "cat", "/proc/net/bonding/bond0"))
	}
	// A member that leaves in the commit that takes its Port down stays
	// down (the commit's AdminState, not the one applied before).
	s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "DOWN"}),
		s.edit(backend.Update, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1"}}))
	if p, err := s.be.Kernel().Handle().LinkByName("fpPort2"); err != nil || p.Attrs().MasterIndex != 0 || p.Attrs().Flags&net.FlagUp != 0 {
		t.Errorf("fpPort2 after leaving PortChannel1 with its Port DOWN: %v %+v", err, p)
	}
	s.mustCommit(s.edit(backend.Delete, "IPv4Intf", addr), s.edit(backend.Delete, "LaPortChannel", lag))
	if out := run(t, "ip", "-n", l.sw, "-o", "link", "show"); strings.Contains(out, "PortChannel1") || strings.Contains(out, "master") {
		t.Errorf("bond or enslaved ports left: %s", out)
	}
}

// TestLAGMemberSpeeds: a LAG of members that run at different speeds is
// refused with a 400 naming both and their speeds, before anything
// changes (fpPort3 is a tap set to 1000 Mb/s beside the 10000 of the
// veth fpPort1; the check comes before the bonding driver's, so it runs
// on the host).
func TestLAGMemberSpeeds(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	if !l.k.Features().EthtoolNetlink {
		t.Skip("the kernel has no ethtool netlink family")
	}
	run(t, "ip", "-n", l.sw, "tuntap", "add", "dev", "fpPort3", "mode", "tap")
	if err := l.k.setLinkModes("fpPort3", 1000, true, false); err != nil {
		t.Skipf("cannot set the tap's speed: %v", err)
	}
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	before := l.dump()
	err := s.commit(s.edit(backend.Create, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1", "fpPort3"}}))
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("a LAG of a 10000 and a 1000 Mb/s port: %v", err)
	}
	for _, w := range []string{"PortChannel1", "fpPort1 runs at 10000 Mb/s", "fpPort3 at 1000 Mb/s", "one speed"} {
		if !strings.Contains(ae.Message, w) {
			t.Errorf("refusal %q does not say %q", ae.Message, w)
		}
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("a refused commit changed the kernel:\n%s", d)
	}
}

// TestVMCrashMidCommitOf8LAGs: swmgr dies (as kill -9 would) after the
// kernel changes of a commit that makes 8 LAGs of two ports each and
// before the store records it: the next start undoes them from the
// journal, so the kernel is as the store says (no bond, every port out of
// any bond and as it was), and the store has no LAG.
func TestVMCrashMidCommitOf8LAGs(t *testing.T) {
	l := newLab(t, 16, KernelOptions{})
	needFeature(t, l.k, l.k.Features().Bond, "bonding")
	l.k.Close()
	l.k = nil
	dir := t.TempDir()
	s := startSwitch(t, l, dir)
	recorded := l.dump()
	var edits []engine.Edit
	for i := 1; i <= 8; i++ {
		edits = append(edits, s.edit(backend.Create, "LaPortChannel", model.Object{"IntfRef": fmt.Sprint("PortChannel", i),
			"IntfRefList": []string{fmt.Sprint("fpPort", i), fmt.Sprint("fpPort", i+8)}}))
	}
	s.be.crashAfterKernel = true
	if err := s.commit(edits...); err == nil {
		t.Fatal("the simulated crash did not fail the commit")
	}
	if out := run(t, "ip", "-n", l.sw, "-o", "link", "show", "type", "bond"); strings.Count(out, "PortChannel") != 8 {
		t.Fatalf("the crashed commit did not make the 8 bonds; the test proves nothing:\n%s", out)
	}
	s.stop()
	s = startSwitch(t, l, dir)
	if d := diffLines(recorded, l.dump()); d != "" {
		t.Fatalf("after the restart the kernel is not what the store says:\n%s", d)
	}
	for i := 1; i <= 8; i++ {
		key := model.Object{"IntfRef": fmt.Sprint("PortChannel", i)}
		if _, _, err := s.e.GetByKey(context.Background(), s.reg.Lookup(model.Config, "LaPortChannel"), key, false, nil); err == nil {
			t.Errorf("the store has PortChannel%d, which the crashed commit never recorded", i)
		}
	}
}
