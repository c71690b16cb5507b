package linux

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/vmtest"
)

// TestStockKernelInVM runs, in a VM booting Debian's stock kernel, the
// tests that need what the host kernel may lack (VRF devices, VLAN-aware
// bridges with SVIs, dummy loopbacks, matchall) and the kernel-layer tests
// again with all of them present.
func TestStockKernelInVM(t *testing.T) {
	vmtest.RunTests(t, "^(TestProbeFeatures|TestVM.*|TestVRFIsolation.*|TestSpanMirrorsTraffic|TestSpanLeavesForeignFiltersAtItsPriority|TestLoopbackAddresses|TestFailMidwayLeavesKernelAsBefore|TestEngineOnLinux|TestLogicalIntfLoopbackInVRF|TestVlanDriver|TestVlanThroughEngine|TestLAGWithLACP|TestDHCPRelayOnLinux)$", 12*time.Minute) // ~2.5 min on an idle machine, 5 in CI beside the suite; a machine loaded 10 times over has taken more than 8
}

// TestVRFIsolationNetnsFallback runs the VRF isolation test with a
// namespace per VRF even where the kernel has VRF devices.
func TestVRFIsolationNetnsFallback(t *testing.T) {
	testVRFIsolation(t, KernelOptions{ForceVRFNetns: true})
}

// TestVMVlanTaggedUntaggedSVI builds VLAN 10 with fpPort1 untagged and
// fpPort2 tagged, and its SVI vlan10 in VRF red: hosts reach each other
// through the bridge and the SVI; then members change, a failed change
// rolls back exactly, and deleting it all leaves the kernel as before.
func TestVMVlanTaggedUntaggedSVI(t *testing.T) {
	l := newLab(t, 3, KernelOptions{})
	k := l.k
	needFeature(t, k, k.Features().BridgeVLAN && k.Features().VLAN && k.Features().VRFDevice, "VLAN-filtering bridges, 802.1Q and VRF devices")
	before := l.dump()
	vlan := VlanConfig{ID: 10, Untagged: []string{"fpPort1"}, Tagged: []string{"fpPort2"}}
	svi := AddrConfig{Netdev: SVIName(10), Prefix: netip.MustParsePrefix("10.20.0.1/24"), VRF: "red", AdminUp: true}
	commit(t, k, func(tx *Tx) error {
		for i := 1; i <= 3; i++ {
			p := fmt.Sprint("fpPort", i)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
		}
		if err := k.CheckVlan(vlan); err != nil {
			return err
		}
		if err := tx.EnsureVRF(VRFConfig{Name: "red"}); err != nil {
			return err
		}
		if err := tx.EnsureVlan(vlan, nil); err != nil {
			return err
		}
		return tx.EnsureAddr(svi, nil)
	})
	l.host(1, "ip", "addr", "add", "10.20.0.11/24", "dev", "eth0")
	l.host(2, "ip", "link", "add", "link", "eth0", "name", "eth0.10", "type", "vlan", "id", "10")
	l.host(2, "ip", "link", "set", "eth0.10", "up")
	l.host(2, "ip", "addr", "add", "10.20.0.12/24", "dev", "eth0.10")
	for _, p := range []struct {
		host int
		addr string
	}{{1, "10.20.0.12"}, {1, "10.20.0.1"}, {2, "10.20.0.1"}} {
		if !eventually(10*time.Second, func() bool { return l.ping(p.host, p.addr) }) {
			t.Fatalf("host %d cannot reach %s over VLAN 10", p.host, p.addr)
		}
	}
	st, err := k.VlanStateOf(10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.Untagged, ",") != "fpPort1" || strings.Join(st.Tagged, ",") != "fpPort2" || st.SVIIfIndex == 0 {
		t.Errorf("VLAN 10 state %+v", st)
	}
	if r, _ := k.Routes("red"); len(r) == 0 || r[0].Dst != "10.20.0.0/24" {
		t.Errorf("VRF red routes: %+v", r)
	}
	// An update that fails midway leaves everything as it was.
	mid := l.dump()
	moved := VlanConfig{ID: 10, Untagged: []string{"fpPort1", "fpPort3"}}
	k.FailAt = func(n int, what string) error {
		if n == 3 {
			return fmt.Errorf("injected at %s", what)
		}
		return nil
	}
	tx := k.Begin()
	if err := tx.EnsureVlan(moved, &vlan); err == nil {
		t.Fatal("injected failure did not fail")
	}
	tx.Rollback()
	k.FailAt = nil
	if d := diffLines(mid, l.dump()); d != "" {
		t.Fatalf("failed VLAN update left:\n%s", d)
	}
	// The real update: fpPort2 leaves, fpPort3 joins untagged.
	commit(t, k, func(tx *Tx) error { return tx.EnsureVlan(moved, &vlan) })
	if st, _ := k.VlanStateOf(10); strings.Join(st.Untagged, ",") != "fpPort1,fpPort3" || len(st.Tagged) != 0 {
		t.Errorf("after update: %+v", st)
	}
	if l.ping(2, "10.20.0.1") {
		t.Error("host 2 still reaches the SVI after fpPort2 left the VLAN")
	}
	l.host(3, "ip", "addr", "add", "10.20.0.13/24", "dev", "eth0")
	if !eventually(10*time.Second, func() bool { return l.ping(3, "10.20.0.11") }) {
		t.Error("host 3 cannot reach host 1 after joining VLAN 10")
	}
	commit(t, k, func(tx *Tx) error {
		if err := tx.RemoveAddr(svi); err != nil {
			return err
		}
		if err := tx.RemoveVlan(moved); err != nil {
			return err
		}
		if err := tx.RemoveVRF(VRFConfig{Name: "red"}); err != nil {
			return err
		}
		for i := 1; i <= 3; i++ {
			p := fmt.Sprint("fpPort", i)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, MTU: 1500}); err != nil {
				return err
			}
		}
		return nil
	})
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after deleting the VLAN, SVI and VRF:\n%s", d)
	}
}

// TestVMLoopbackInVRF puts a dummy loopback into a VRF device: reachable
// from the VRF's port only.
func TestVMLoopbackInVRF(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	k := l.k
	needFeature(t, k, k.Features().Dummy && k.Features().VRFDevice, "dummy and VRF devices")
	lb := LoopbackConfig{Name: "lo1", VRF: "red"}
	commit(t, k, func(tx *Tx) error {
		if err := tx.EnsureVRF(VRFConfig{Name: "red"}); err != nil {
			return err
		}
		for i, vrf := range []string{"red", "default"} {
			p := fmt.Sprint("fpPort", i+1)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
			if err := tx.EnsureAddr(AddrConfig{Netdev: p, Prefix: netip.MustParsePrefix(fmt.Sprintf("10.0.%d.1/24", i+1)), VRF: vrf, AdminUp: true}, nil); err != nil {
				return err
			}
		}
		if err := tx.EnsureLoopback(lb); err != nil {
			return err
		}
		return tx.EnsureAddr(AddrConfig{Netdev: k.LoopbackNetdev(lb), Prefix: netip.MustParsePrefix("10.255.0.1/32"), VRF: "red", AdminUp: true, Loopback: true}, nil)
	})
	for i := 1; i <= 2; i++ {
		l.host(i, "ip", "addr", "add", fmt.Sprintf("10.0.%d.2/24", i), "dev", "eth0")
		l.host(i, "ip", "route", "add", "10.255.0.1/32", "via", fmt.Sprintf("10.0.%d.1", i))
	}
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.255.0.1") }) {
		t.Fatal("host 1 (VRF red) cannot reach the loopback of VRF red")
	}
	if l.ping(2, "10.255.0.1") {
		t.Error("host 2 (default VRF) reaches VRF red's loopback")
	}
	if out := run(t, "ip", "-n", l.sw, "-d", "link", "show", "lo1"); !strings.Contains(out, "dummy") || !strings.Contains(out, "master red") {
		t.Errorf("lo1: %s", out)
	}
}

// TestVlanDriver drives the Vlan driver (the kind comes with the engine
// branch: here a stand-in kind of that name) and an IPv4Intf on its SVI
// through the backend: refused where the kernel lacks VLAN filtering,
// else created, carrying traffic, rolled back on a failure midway, deleted.
func TestVlanDriver(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	be, err := New(Options{Kernel: KernelOptions{Netns: l.sw, VRFNetnsPrefix: l.prefix + "vrf-"}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	reg := model.Builtin()
	vlanKind := &model.Kind{Name: "Vlan"}
	vlan := model.Object{"VlanId": int64(10), "IntfList": []string{"fpPort2"}, "UntagIntfList": []string{"fpPort1"}, "AdminState": "UP"}
	svi := model.Object{"IntfRef": "vlan10", "IpAddr": "10.20.0.1/24", "Vrf": "default", "AdminState": "UP"}
	port := func(p string) backend.Change {
		o := reg.Lookup(model.Config, "Port").Defaults()
		o["IntfRef"], o["AdminState"] = p, "UP"
		return backend.Change{Kind: reg.Lookup(model.Config, "Port"), Op: backend.Update, Key: p, Before: o, After: o}
	}
	create := []backend.Change{port("fpPort1"), port("fpPort2"),
		{Kind: vlanKind, Op: backend.Create, Key: "10", After: vlan},
		{Kind: reg.Lookup(model.Config, "IPv4Intf"), Op: backend.Create, Key: "vlan10", After: svi}}
	if f := be.Kernel().Features(); !f.BridgeVLAN || !f.VLAN {
		vlanRefusedWithoutFiltering(t, l, func() error { return be.Apply(context.Background(), create) })
	}
	before := l.dump()
	be.Kernel().FailAt = func(n int, what string) error {
		if n == 6 {
			return fmt.Errorf("injected at %s", what)
		}
		return nil
	}
	if err := be.Apply(context.Background(), create); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	be.Kernel().FailAt = nil
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("a commit failing at its 6th change left:\n%s", d)
	}
	if err := be.Apply(context.Background(), create); err != nil {
		t.Fatal(err)
	}
	l.host(1, "ip", "addr", "add", "10.20.0.11/24", "dev", "eth0")
	if !eventually(10*time.Second, func() bool { return l.ping(1, "10.20.0.1") }) {
		t.Fatal("host 1 cannot reach the SVI")
	}
	var st model.Object
	if !eventually(5*time.Second, func() bool {
		st, err = be.State(context.Background(), vlanKind, vlan)
		return err == nil && st.Str("OperState") == "UP" && st.Int("IfIndex") != 0
	}) {
		t.Errorf("Vlan state %v %v; %s", st, err, run(t, "ip", "-n", l.sw, "-d", "link", "show", "vlan10"))
	}
	if err := be.Apply(context.Background(), []backend.Change{
		{Kind: reg.Lookup(model.Config, "IPv4Intf"), Op: backend.Delete, Key: "vlan10", Before: svi},
		{Kind: vlanKind, Op: backend.Delete, Key: "10", Before: vlan}}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, "ip", "-n", l.sw, "-o", "link", "show"); strings.Contains(out, "vlan10") || strings.Contains(out, "bridge") {
		t.Errorf("SVI or bridge left: %s", out)
	}
}

// TestVlanThroughEngine commits a Vlan (fpPort1 untagged, fpPort2 tagged)
// through the engine's driver registry and store, as the REST interface
// does: the untagged host reaches the tagged one, the Vlan's state form
// comes from the kernel, and a delete removes the SVI and the bridge.
// Where the kernel lacks VLAN filtering the commit is refused with a 400
// and changes nothing. (An IPv4Intf on vlan10 is refused by the model's
// IntfRef format today, before any driver sees it: TestVlanDriver drives
// the SVI's address through the backend.)
func TestVlanThroughEngine(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	up := func(p string) engine.Edit {
		return s.edit(backend.Update, "Port", model.Object{"IntfRef": p, "AdminState": "UP"})
	}
	vlan := model.Object{"VlanId": int64(10), "IntfList": []string{"fpPort2"}, "UntagIntfList": []string{"fpPort1"}}
	edits := []engine.Edit{up("fpPort1"), up("fpPort2"), s.edit(backend.Create, "Vlan", vlan)}
	if f := s.be.Kernel().Features(); !f.BridgeVLAN || !f.VLAN {
		vlanRefusedWithoutFiltering(t, l, func() error { return s.commit(edits...) })
	}
	s.mustCommit(edits...)
	l.host(1, "ip", "addr", "add", "10.20.0.11/24", "dev", "eth0")
	l.host(2, "ip", "link", "add", "link", "eth0", "name", "eth0.10", "type", "vlan", "id", "10")
	l.host(2, "ip", "link", "set", "eth0.10", "up")
	l.host(2, "ip", "addr", "add", "10.20.0.12/24", "dev", "eth0.10")
	for _, c := range []struct {
		host int
		addr string
	}{{1, "10.20.0.12"}, {2, "10.20.0.11"}} {
		if !eventually(10*time.Second, func() bool { return l.ping(c.host, c.addr) }) {
			t.Fatalf("host %d cannot reach %s through VLAN 10", c.host, c.addr)
		}
	}
	var st string
	if !eventually(5*time.Second, func() bool {
		st = s.state("Vlan", model.Object{"VlanId": int64(10)})
		return strings.Contains(st, `"OperState":"UP"`) && !strings.Contains(st, `"IfIndex":0`)
	}) {
		t.Errorf("state/Vlan through the engine: %s", st)
	}
	s.mustCommit(s.edit(backend.Delete, "Vlan", vlan))
	if out := run(t, "ip", "-n", l.sw, "-o", "link", "show"); strings.Contains(out, "vlan10") || strings.Contains(out, "bridge") {
		t.Errorf("SVI or bridge left: %s", out)
	}
}

// vlanRefusedWithoutFiltering checks, on a kernel without VLAN filtering,
// that creating VLAN 10 is refused with a 400 naming the missing feature
// and leaves the kernel as it was; then it skips the rest of the test,
// which the VM runs on a kernel that has the feature.
func vlanRefusedWithoutFiltering(t *testing.T, l *lab, create func() error) {
	t.Helper()
	before := l.dump()
	err := create()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "VLAN 10: this kernel has no") {
		t.Fatalf("a VLAN on a kernel without VLAN filtering: %v", err)
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("a refused commit changed the kernel:\n%s", d)
	}
	t.Skip("refusal checked; the rest runs in the VM (TestStockKernelInVM)")
}
