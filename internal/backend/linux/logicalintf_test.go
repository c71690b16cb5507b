package linux

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestLogicalIntfLoopbackInVRF makes a LogicalIntf loopback with an
// IPv4Intf in VRF red through the engine: a host reaches the loopback's
// address through a port of the VRF (a dummy device in the VRF on a stock
// kernel, an address on the VRF namespace's lo on the host kernel); the
// references are checked; a loopback removed by hand comes back; deleting
// it all leaves the kernel as before.
func TestLogicalIntfLoopbackInVRF(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	k := s.be.Kernel()
	before := l.dump()
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24", "Vrf": "red"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32", "Vrf": "red"}))
	l.host(1, "ip", "addr", "add", "10.0.1.2/24", "dev", "eth0")
	l.host(1, "ip", "route", "add", "10.255.0.1/32", "via", "10.0.1.1")
	if !eventually(5*time.Second, func() bool { return l.ping(1, "10.255.0.1") }) {
		t.Fatalf("host 1 cannot reach the loopback 10.255.0.1 in VRF red\n%s", l.dump())
	}
	if k.Features().Dummy {
		if out := run(t, "ip", "-n", l.sw, "-d", "-o", "link", "show", "dev", "Loopback1"); !strings.Contains(out, "dummy") || (k.Features().VRFDevice && !strings.Contains(out, "master red")) {
			t.Errorf("Loopback1 is not a dummy in VRF red: %s", out)
		}
	}
	if st := s.state("LogicalIntf", model.Object{"Name": "Loopback1"}); !strings.Contains(st, `"OperState":"UP"`) {
		t.Errorf("LogicalIntf state: %s", st)
	}
	if st := s.state("IPv4Intf", model.Object{"IntfRef": "Loopback1"}); !strings.Contains(st, `"OperState":"UP"`) || !strings.Contains(st, `"L2IntfType":"Loopback"`) {
		t.Errorf("IPv4Intf state on the loopback: %s", st)
	}

	// References: an address on a loopback that does not exist is refused,
	// and a loopback in use cannot go.
	var ae *apierr.Error
	err := s.commit(s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback2", "IpAddr": "10.255.0.2/32"}))
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, `LogicalIntf "Loopback2" does not exist`) {
		t.Errorf("address on a missing loopback: %v", err)
	}
	err = s.commit(s.edit(backend.Delete, "LogicalIntf", model.Object{"Name": "Loopback1"}))
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		t.Errorf("delete of a loopback in use: %v", err)
	}

	// Someone removes the loopback (or its address) by hand: the next
	// reconciliation puts it back.
	if k.Features().Dummy {
		h, lb, err := k.findLink("Loopback1")
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LinkDel(lb); err != nil {
			t.Fatal(err)
		}
	} else {
		run(t, "ip", "-n", l.prefix+"vrf-red", "addr", "del", "10.255.0.1/32", "dev", "lo")
	}
	if l.ping(1, "10.255.0.1") {
		t.Fatal("the loopback still answers after its removal; the test proves nothing")
	}
	if c := s.be.Reconcile(); len(c) == 0 {
		t.Error("reconcile changed nothing")
	}
	if !eventually(5*time.Second, func() bool { return l.ping(1, "10.255.0.1") }) {
		t.Fatal("the loopback was not put back")
	}

	s.mustCommit(
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "Loopback1"}),
		s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort1"}),
		s.edit(backend.Delete, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Delete, "Vrf", model.Object{"Vrf": "red"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "DOWN"}))
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after deleting everything the kernel is not as before:\n%s", d)
	}
}
