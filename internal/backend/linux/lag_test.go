package linux

import (
	"errors"
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
// and distributing, the peer reaches the LAG's address, one member cut
// leaves the LAG up, MinLinks 2 then takes it down; deleting it all
// leaves the ports out of any bond. On a kernel without bonding the LAG is
// refused with a 400 naming it, and the rest runs in the VM.
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
	lagUp := func(want string) func() bool {
		return func() bool {
			return strings.Contains(s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}), `"OperState":"`+want+`"`)
		}
	}
	if !eventually(5*time.Second, lagUp("UP")) {
		t.Fatalf("state/LaPortChannel: %s", s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}

	// One member cut: the LAG stays up and carries traffic.
	l.host(1, "ip", "link", "set", "eth1", "down")
	if !eventually(10*time.Second, inBundle(1)) || !lagUp("UP")() {
		ms, _ := s.be.lagMembers()
		t.Fatalf("one member cut: %v; %s", ms, s.state("LaPortChannel", model.Object{"IntfRef": "PortChannel1"}))
	}
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.30.0.1") }) {
		t.Fatal("the peer cannot reach 10.30.0.1 over the one member left")
	}
	// The bond's options are set when it is made: a change is refused.
	err := s.commit(s.edit(backend.Update, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "MinLinks": int64(2)}))
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "delete the LAG and create it again") {
		t.Fatalf("MinLinks changed on a made LAG: %v", err)
	}
	s.mustCommit(s.edit(backend.Delete, "IPv4Intf", addr), s.edit(backend.Delete, "LaPortChannel", lag))
	if out := run(t, "ip", "-n", l.sw, "-o", "link", "show"); strings.Contains(out, "PortChannel1") || strings.Contains(out, "master") {
		t.Errorf("bond or enslaved ports left: %s", out)
	}
}
