package linux

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/vmtest"
)

func commit(t *testing.T, k *Kernel, fn func(tx *Tx) error) *Tx {
	t.Helper()
	tx := k.Begin()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			t.Fatalf("%v; rollback: %v", err, rerr)
		}
		t.Fatal(err)
	}
	tx.Commit()
	return tx
}

func TestProbeFeatures(t *testing.T) {
	needRoot(t)
	f, err := ProbeFeatures()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel features: %s", f)
	if !f.U32 && !f.MatchAll {
		t.Errorf("no classifier to mirror with: %s", f)
	}
	if vmtest.InVM() && !(f.VRFDevice && f.Dummy && f.VLAN && f.BridgeVLAN && f.MatchAll) {
		t.Errorf("Debian's stock kernel should have everything: %s", f)
	}
}

func TestPortCreateUpdateRollback(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	k := l.k
	before := l.dump()
	cfg := PortConfig{Port: "fpPort1", Netdev: "fpPort1", AdminUp: true, MTU: 9000, Description: "uplink to spine 1"}
	commit(t, k, func(tx *Tx) error { return tx.EnsurePort(cfg) })
	lk, err := k.h.LinkByName("fpPort1")
	if err != nil {
		t.Fatal(err)
	}
	if a := lk.Attrs(); a.MTU != 9000 || a.Alias != cfg.Description || a.Flags&1 == 0 {
		t.Fatalf("port not applied: mtu %d alias %q flags %v", a.MTU, a.Alias, a.Flags)
	}
	// Same config again: nothing to do.
	if tx := commit(t, k, func(tx *Tx) error { return tx.EnsurePort(cfg) }); tx.Changes() != 0 {
		t.Errorf("re-applying the same port made %d changes: %v", tx.Changes(), tx.Changed)
	}
	// State from one dump.
	m, _ := DefaultPortMap([]string{"fpPort1", "fpPort2", "lo"})
	var st map[string]PortState
	eventually(5*time.Second, func() bool { // the carrier comes up a moment after the link
		st, err = k.PortStates(m)
		return err != nil || st["fpPort1"].OperUp
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := st["fpPort1"]; !s.Present || s.MTU != 9000 || s.IfIndex != lk.Attrs().Index || s.MAC == "" || !s.AdminUp || !s.OperUp {
		t.Errorf("state of fpPort1: %+v", s)
	}
	if s := st["fpPort2"]; s.AdminUp || s.OperUp {
		t.Errorf("fpPort2 is down, state says %+v", s)
	}
	// Update then roll back: exactly the state before the update.
	mid := l.dump()
	tx := k.Begin()
	if err := tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", MTU: 1400, Description: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if d := diffLines(mid, l.dump()); d != "" {
		t.Errorf("rollback of a port update left:\n%s", d)
	}
	// Back to how the lab made it.
	commit(t, k, func(tx *Tx) error {
		return tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", MTU: 1500})
	})
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("port back to defaults differs from the start:\n%s", d)
	}
}

func TestPortCapabilityRefusals(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	caps, err := l.k.Caps("fpPort1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("veth caps: %+v", caps)
	split, err := l.k.SplitCaps("fpPort1")
	if err != nil {
		t.Fatal(err)
	}
	before := PortConfig{Port: "fpPort1", Netdev: "fpPort1", Speed: caps.Speed, FullDuplex: caps.FullDuplex, Lanes: 1}
	for _, tc := range []struct {
		name  string
		edit  func(*PortConfig)
		field string
		want  string
	}{
		{"speed", func(c *PortConfig) { c.Speed = 25000 }, "Speed", "fpPort1 (netdev fpPort1) cannot change Speed 25000"},
		{"duplex", func(c *PortConfig) { c.FullDuplex = !c.FullDuplex }, "Duplex", "cannot change Duplex"},
		{"autoneg", func(c *PortConfig) { c.Autoneg = true }, "Autoneg", "cannot change Autoneg"},
		{"fec", func(c *PortConfig) { c.FEC = true }, "EnableFEC", "no forward error correction"},
		{"breakout", func(c *PortConfig) { c.Lanes = 4 }, "BreakOutMode", "no devlink port"},
		{"mtu is fine", func(c *PortConfig) { c.MTU = 9000; c.AdminUp = true }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := before
			tc.edit(&after)
			err := CheckPort(&before, after, caps, split)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) || r.Field != tc.field || !strings.Contains(r.Msg, tc.want) {
				t.Fatalf("got %v, want a refusal of %s saying %q", err, tc.field, tc.want)
			}
		})
	}
}

// TestFailMidwayLeavesKernelAsBefore fails a commit of many kinds at each
// of its first kernel changes in turn: the kernel must be exactly as
// before each time.
func TestFailMidwayLeavesKernelAsBefore(t *testing.T) {
	l := newLab(t, 4, KernelOptions{})
	k := l.k
	// Something already there, that the commit changes.
	commit(t, k, func(tx *Tx) error {
		if err := tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", AdminUp: true, MTU: 1500}); err != nil {
			return err
		}
		return tx.EnsureAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.1.1/24"), AdminUp: true}, nil)
	})
	run(t, "ip", "-n", l.sw, "route", "add", "10.77.0.0/16", "via", "10.0.1.2")
	before := l.dump()
	big := func(tx *Tx) error {
		for i := 1; i <= 4; i++ {
			if err := tx.EnsurePort(PortConfig{Port: fmt.Sprint("fpPort", i), Netdev: fmt.Sprint("fpPort", i), AdminUp: true, MTU: 9000, Description: "p"}); err != nil {
				return err
			}
		}
		if err := tx.EnsureAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.9.1/24"), AdminUp: true},
			&AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.1.1/24")}); err != nil {
			return err
		}
		if err := tx.EnsureVRF(VRFConfig{Name: "red"}); err != nil {
			return err
		}
		if err := tx.EnsureAddr(AddrConfig{Netdev: "fpPort2", Prefix: netip.MustParsePrefix("10.0.2.1/24"), VRF: "red", AdminUp: true}, nil); err != nil {
			return err
		}
		if err := tx.EnsureRoute(RouteConfig{VRF: "red", Dst: netip.MustParsePrefix("172.16.0.0/12"), NextHops: []NextHop{{Gateway: netip.MustParseAddr("10.0.2.2")}}}); err != nil {
			return err
		}
		if err := tx.EnsureRoute(RouteConfig{Dst: netip.MustParsePrefix("10.77.0.0/16"), NextHops: []NextHop{{Gateway: netip.MustParseAddr("10.0.9.2")}}}); err != nil {
			return err
		}
		if err := tx.EnsureSpan(SpanConfig{Name: "mon", Dst: "fpPort4", Src: []string{"fpPort3"}, Dir: "BOTH", AdminUp: true}, nil); err != nil {
			return err
		}
		lb := LoopbackConfig{Name: "lo1", VRF: "red"}
		if err := tx.EnsureLoopback(lb); err != nil {
			return err
		}
		if err := tx.EnsureAddr(AddrConfig{Netdev: k.LoopbackNetdev(lb), Prefix: netip.MustParsePrefix("10.255.0.1/32"), VRF: "red", AdminUp: true, Loopback: true}, nil); err != nil {
			return err
		}
		if !k.Features().BridgeVLAN || !k.Features().VLAN {
			return nil
		}
		if err := tx.EnsureVlan(VlanConfig{ID: 30, Untagged: []string{"fpPort4"}}, nil); err != nil {
			return err
		}
		return tx.EnsureAddr(AddrConfig{Netdev: SVIName(30), Prefix: netip.MustParsePrefix("10.30.0.1/24"), AdminUp: true}, nil)
	}
	// How many changes the whole commit makes.
	probe := k.Begin()
	if err := big(probe); err != nil {
		t.Fatal(err)
	}
	total := probe.Changes()
	if err := probe.Rollback(); err != nil {
		t.Fatal(err)
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("rollback of the whole commit left:\n%s", d)
	}
	t.Logf("the commit makes %d kernel changes", total)
	if total < 15 {
		t.Fatalf("only %d changes; the test would not reach far", total)
	}
	for _, at := range []int{1, 5, total / 2, total - 1, total} {
		k.FailAt = func(n int, what string) error {
			if n == at {
				return fmt.Errorf("injected failure at change %d (%s)", n, what)
			}
			return nil
		}
		tx := k.Begin()
		err := big(tx)
		if err == nil || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("fail at %d: got %v", at, err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatalf("fail at %d: rollback: %v", at, err)
		}
		if d := diffLines(before, l.dump()); d != "" {
			t.Fatalf("failing at change %d of %d left the kernel changed:\n%s", at, total, d)
		}
	}
	k.FailAt = nil
}

// TestVRFIsolationOverlappingSubnets gives two VRFs the same subnet:
// both must carry traffic, and neither sees the other's routes.
func TestVRFIsolationOverlappingSubnets(t *testing.T) {
	testVRFIsolation(t, KernelOptions{})
}

func testVRFIsolation(t *testing.T, opts KernelOptions) {
	l := newLab(t, 2, opts)
	k := l.k
	t.Logf("VRFs as %s", k.Features().VRFMode())
	for i, vrf := range []string{"red", "blue"} {
		port := fmt.Sprint("fpPort", i+1)
		commit(t, k, func(tx *Tx) error {
			if err := tx.EnsureVRF(VRFConfig{Name: vrf}); err != nil {
				return err
			}
			if err := tx.EnsurePort(PortConfig{Port: port, Netdev: port, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
			if err := tx.EnsureAddr(AddrConfig{Netdev: port, Prefix: netip.MustParsePrefix("10.10.0.1/24"), VRF: vrf, AdminUp: true}, nil); err != nil {
				return err
			}
			return tx.EnsureRoute(RouteConfig{VRF: vrf, Dst: netip.MustParsePrefix("192.0.2.0/24"), NextHops: []NextHop{{Gateway: netip.MustParseAddr("10.10.0.2")}}})
		})
		l.host(i+1, "ip", "addr", "add", "10.10.0.2/24", "dev", "eth0")
	}
	for i := 1; i <= 2; i++ {
		if !eventually(5*time.Second, func() bool { return l.ping(i, "10.10.0.1") }) {
			t.Fatalf("host %d cannot reach its VRF's 10.10.0.1", i)
		}
	}
	for _, vrf := range []string{"red", "blue"} {
		routes, err := k.Routes(vrf)
		if err != nil {
			t.Fatal(err)
		}
		var dsts []string
		for _, r := range routes {
			dsts = append(dsts, r.Dst+" "+strings.Join(r.NextHops, ","))
		}
		got := strings.Join(dsts, "; ")
		if !strings.Contains(got, "192.0.2.0/24 10.10.0.2") || !strings.Contains(got, "10.10.0.0/24") {
			t.Errorf("VRF %s routes: %s", vrf, got)
		}
	}
	def, err := k.Routes("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range def {
		if strings.HasPrefix(r.Dst, "10.10.0.") || strings.HasPrefix(r.Dst, "192.0.2.") {
			t.Errorf("the default VRF sees a VRF's route %+v", r)
		}
	}
	// Delete everything again: the namespaces/devices go, the ports come back.
	for i, vrf := range []string{"red", "blue"} {
		port := fmt.Sprint("fpPort", i+1)
		commit(t, k, func(tx *Tx) error {
			if err := tx.RemoveRoute(RouteConfig{VRF: vrf, Dst: netip.MustParsePrefix("192.0.2.0/24")}); err != nil {
				return err
			}
			if err := tx.RemoveAddr(AddrConfig{Netdev: port, Prefix: netip.MustParsePrefix("10.10.0.1/24"), VRF: vrf}); err != nil {
				return err
			}
			return tx.RemoveVRF(VRFConfig{Name: vrf})
		})
	}
	if _, err := k.handleOf("red"); err == nil && !k.Features().VRFDevice {
		t.Error("VRF red's namespace is still open")
	}
	if _, err := k.h.LinkByName("fpPort1"); err != nil {
		t.Errorf("fpPort1 did not come back to the switch namespace: %v", err)
	}
	if _, err := k.h.LinkByName("red"); err == nil {
		t.Error("VRF device red is still there")
	}
}

// TestRouteMultipath installs, changes and removes a multipath route.
func TestRouteMultipath(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	k := l.k
	commit(t, k, func(tx *Tx) error {
		for i := 1; i <= 2; i++ {
			p := fmt.Sprint("fpPort", i)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
			if err := tx.EnsureAddr(AddrConfig{Netdev: p, Prefix: netip.MustParsePrefix(fmt.Sprintf("10.0.%d.1/24", i)), AdminUp: true}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	rc := RouteConfig{Dst: netip.MustParsePrefix("198.51.100.0/24"), NextHops: []NextHop{
		{Gateway: netip.MustParseAddr("10.0.1.2")}, {Gateway: netip.MustParseAddr("10.0.2.2"), Weight: 3}}}
	before := l.dump()
	commit(t, k, func(tx *Tx) error { return tx.EnsureRoute(rc) })
	out := run(t, "ip", "-n", l.sw, "route", "show", "198.51.100.0/24")
	if !strings.Contains(out, "nexthop via 10.0.1.2") || !strings.Contains(out, "nexthop via 10.0.2.2 dev fpPort2 weight 3") || !strings.Contains(out, "proto static") {
		t.Fatalf("multipath route: %s", out)
	}
	rc2 := rc
	rc2.NextHops = rc.NextHops[:1]
	commit(t, k, func(tx *Tx) error { return tx.EnsureRoute(rc2) })
	if out := run(t, "ip", "-n", l.sw, "route", "show", "198.51.100.0/24"); strings.Contains(out, "nexthop") || !strings.Contains(out, "via 10.0.1.2") {
		t.Fatalf("single path route: %s", out)
	}
	// A failed update puts the multipath route... back to the single path.
	tx := k.Begin()
	if err := tx.EnsureRoute(rc); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if out := run(t, "ip", "-n", l.sw, "route", "show", "198.51.100.0/24"); strings.Contains(out, "nexthop") {
		t.Fatalf("rolled back update left: %s", out)
	}
	commit(t, k, func(tx *Tx) error { return tx.RemoveRoute(rc) })
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after delete:\n%s", d)
	}
	// A route that is not swmgr's (proto boot) is not deleted.
	run(t, "ip", "-n", l.sw, "route", "add", "203.0.113.0/24", "via", "10.0.1.2")
	commit(t, k, func(tx *Tx) error { return tx.RemoveRoute(RouteConfig{Dst: netip.MustParsePrefix("203.0.113.0/24")}) })
	if out := run(t, "ip", "-n", l.sw, "route", "show", "203.0.113.0/24"); !strings.Contains(out, "203.0.113.0/24") {
		t.Error("swmgr deleted a route it does not manage")
	}
}

// TestSpanMirrorsTraffic mirrors fpPort1 to fpPort3 in each direction and
// counts the copies host 3 receives while host 1 pings the switch.
func TestSpanMirrorsTraffic(t *testing.T) {
	l := newLab(t, 3, KernelOptions{})
	k := l.k
	commit(t, k, func(tx *Tx) error {
		for i := 1; i <= 3; i++ {
			p := fmt.Sprint("fpPort", i)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
		}
		return tx.EnsureAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.1.1/24"), AdminUp: true}, nil)
	})
	l.host(1, "ip", "addr", "add", "10.0.1.2/24", "dev", "eth0")
	if !eventually(5*time.Second, func() bool { return l.ping(1, "10.0.1.1") }) {
		t.Fatal("host 1 cannot reach the switch")
	}
	before := l.dump()
	var prev *SpanConfig
	for _, tc := range []struct {
		dir  string
		want int // mirrored packets per ping (request and/or reply)
	}{{"RX", 1}, {"TX", 1}, {"BOTH", 2}} {
		sc := SpanConfig{Name: "mon1", Dst: "fpPort3", Src: []string{"fpPort1"}, Dir: tc.dir, AdminUp: true}
		commit(t, k, func(tx *Tx) error { return tx.EnsureSpan(sc, prev) })
		prev = &sc
		st, err := k.SpanStateOf(sc)
		if err != nil {
			t.Fatal(err)
		}
		if st.Filters != map[string]int{"RX": 1, "TX": 1, "BOTH": 2}[tc.dir] {
			t.Fatalf("%s: %d filters", tc.dir, st.Filters)
		}
		rx0 := l.rxPackets(3)
		const pings = 5
		needPing(t)
		l.host(1, "busybox", "ping", "-c", fmt.Sprint(pings), "-i", "0.2", "-W", "2", "10.0.1.1")
		got := l.rxPackets(3) - rx0
		// ARP and IPv6 chatter may add copies; the pings must all be there.
		if got < pings*tc.want || got > pings*tc.want+8 {
			t.Errorf("%s: host 3 received %d mirrored packets, want %d (+ a little ARP)", tc.dir, got, pings*tc.want)
		}
		st2, _ := k.SpanStateOf(sc)
		t.Logf("%s (%s): host 3 got %d copies; filter counters %d", tc.dir, k.Features().ClassifierName(), got, st2.Packets)
	}
	// Admin down removes the filters and the clsact qdisc swmgr added.
	down := *prev
	down.AdminUp = false
	commit(t, k, func(tx *Tx) error { return tx.EnsureSpan(down, prev) })
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("a session taken down left:\n%s", d)
	}
	rx0 := l.rxPackets(3)
	l.host(1, "busybox", "ping", "-c", "3", "-i", "0.2", "10.0.1.1")
	if got := l.rxPackets(3) - rx0; got > 2 {
		t.Errorf("after the session went down host 3 still got %d packets", got)
	}
	// Another tool's filter on the same port is left alone.
	run(t, "tc", "-n", l.sw, "qdisc", "add", "dev", "fpPort1", "clsact")
	run(t, "tc", "-n", l.sw, "filter", "add", "dev", "fpPort1", "ingress", "prio", "7", "u32", "match", "u32", "0", "0", "flowid", "1:1")
	sc := SpanConfig{Name: "mon1", Dst: "fpPort3", Src: []string{"fpPort1"}, Dir: "BOTH", AdminUp: true}
	commit(t, k, func(tx *Tx) error { return tx.EnsureSpan(sc, nil) })
	commit(t, k, func(tx *Tx) error { return tx.RemoveSpan(sc) })
	if out := run(t, "tc", "-n", l.sw, "filter", "show", "dev", "fpPort1", "ingress"); !strings.Contains(out, "pref 7") {
		t.Errorf("swmgr removed a filter that is not its own: %s", out)
	}
	// Across VRF namespaces mirroring is refused by the check.
	if !k.Features().VRFDevice {
		commit(t, k, func(tx *Tx) error {
			if err := tx.EnsureVRF(VRFConfig{Name: "red"}); err != nil {
				return err
			}
			return tx.AttachToVRF("fpPort2", "red")
		})
		err := k.CheckSpan(SpanConfig{Name: "x", Dst: "fpPort3", Src: []string{"fpPort2"}, Dir: "RX"}, nil)
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(r.Msg, "different VRF namespaces") {
			t.Errorf("span across namespaces: %v", err)
		}
	}
}

func TestCapabilityRefusalsOfMissingFeatures(t *testing.T) {
	needRoot(t)
	k := &Kernel{feat: Features{}}
	var r *Refusal
	if err := k.CheckVlan(VlanConfig{ID: 10}); !errors.As(err, &r) || !strings.Contains(r.Msg, "VLAN-filtering") {
		t.Errorf("vlan on a kernel without VLAN filtering: %v", err)
	}
	if err := k.CheckSpan(SpanConfig{Name: "s"}, nil); !errors.As(err, &r) || !strings.Contains(r.Msg, "mirred") {
		t.Errorf("span on a kernel without mirred: %v", err)
	}
	k.feat = Features{VRFDevice: true, Dummy: true}
	if err := k.CheckVRF(VRFConfig{Name: "a-very-long-vrf-name"}); !errors.As(err, &r) {
		t.Errorf("VRF device name over 15 characters: %v", err)
	}
	if err := k.CheckLoopback(LoopbackConfig{Name: "lo"}); !errors.As(err, &r) {
		t.Errorf("loopback lo: %v", err)
	}
	if err := k.CheckRoute(RouteConfig{Dst: netip.MustParsePrefix("10.1.2.3/16"), NextHops: []NextHop{{Netdev: "x"}}}); !errors.As(err, &r) || !strings.Contains(r.Msg, "10.1.0.0/16") {
		t.Errorf("route with host bits: %v", err)
	}
}

// TestLoopbackAddresses gives a loopback an address: a dummy device where
// the kernel has them, else lo.
func TestLoopbackAddresses(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	k := l.k
	lb := LoopbackConfig{Name: "Loopback1"[:9], VRF: "default"}
	dev := k.LoopbackNetdev(lb)
	before := l.dump()
	addr := AddrConfig{Netdev: dev, Prefix: netip.MustParsePrefix("10.255.0.1/32"), AdminUp: true, Loopback: true}
	commit(t, k, func(tx *Tx) error {
		if err := tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", AdminUp: true, MTU: 1500}); err != nil {
			return err
		}
		if err := tx.EnsureAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.1.1/24"), AdminUp: true}, nil); err != nil {
			return err
		}
		if err := tx.EnsureLoopback(lb); err != nil {
			return err
		}
		return tx.EnsureAddr(addr, nil)
	})
	l.host(1, "ip", "addr", "add", "10.0.1.2/24", "dev", "eth0")
	l.host(1, "ip", "route", "add", "10.255.0.1/32", "via", "10.0.1.1")
	if !eventually(5*time.Second, func() bool { return l.ping(1, "10.255.0.1") }) {
		t.Fatalf("host cannot reach the loopback address on %s", dev)
	}
	st, _ := k.AddrStateOf(addr)
	if !st.Present || !st.OperUp {
		t.Errorf("loopback address state %+v", st)
	}
	commit(t, k, func(tx *Tx) error {
		if err := tx.RemoveAddr(addr); err != nil {
			return err
		}
		if err := tx.RemoveLoopback(lb); err != nil {
			return err
		}
		if err := tx.RemoveAddr(AddrConfig{Netdev: "fpPort1", Prefix: netip.MustParsePrefix("10.0.1.1/24")}); err != nil {
			return err
		}
		return tx.EnsurePort(PortConfig{Port: "fpPort1", Netdev: "fpPort1", MTU: 1500})
	})
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after removing everything:\n%s", d)
	}
	_ = netlink.FAMILY_V4
}

// TestKernelCloseReleasesSockets opens a kernel, makes it open every lazily
// opened netlink socket (ethtool and devlink families), and checks that
// Close leaves the process with the file descriptors it had before.
func TestKernelCloseReleasesSockets(t *testing.T) {
	l := newLab(t, 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	before := openFDs(t)
	k, err := OpenKernel(KernelOptions{Netns: l.sw, VRFNetnsPrefix: l.prefix + "vrf-"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Caps("fpPort1"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.SplitCaps("fpPort1"); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("open file descriptors: %d before OpenKernel, %d after Close", before, after)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestSpanLeavesForeignFiltersAtItsPriority: another tool's filter that
// happens to sit at a session's priority (the hash of its name) is never
// changed or deleted: a session that would need that hook is refused, and
// removing a session removes only the filters swmgr made (its handle).
func TestSpanLeavesForeignFiltersAtItsPriority(t *testing.T) {
	l := newLab(t, 3, KernelOptions{})
	k := l.k
	commit(t, k, func(tx *Tx) error {
		for i := 1; i <= 3; i++ {
			p := fmt.Sprint("fpPort", i)
			if err := tx.EnsurePort(PortConfig{Port: p, Netdev: p, AdminUp: true, MTU: 1500}); err != nil {
				return err
			}
		}
		return nil
	})
	prio := fmt.Sprint(SpanPriority("mon1"))
	rx := SpanConfig{Name: "mon1", Dst: "fpPort3", Src: []string{"fpPort1"}, Dir: "RX", AdminUp: true}
	commit(t, k, func(tx *Tx) error { return tx.EnsureSpan(rx, nil) })
	// Another tool mirrors fpPort1's egress to fpPort2 at the same
	// priority, with the classifier swmgr uses; u32 takes a second node at
	// the session's ingress priority too (matchall one filter only).
	cls := []string{"u32", "match", "u32", "0", "0"}
	if k.Features().MatchAll {
		cls = []string{"matchall"}
	}
	mirror := []string{"action", "mirred", "egress", "mirror", "dev", "fpPort2"}
	run(t, slices.Concat([]string{"tc", "-n", l.sw, "filter", "add", "dev", "fpPort1", "egress", "prio", prio, "protocol", "all"}, cls, mirror)...)
	if !k.Features().MatchAll {
		run(t, slices.Concat([]string{"tc", "-n", l.sw, "filter", "add", "dev", "fpPort1", "ingress", "prio", prio, "protocol", "all"}, cls, mirror)...)
	}
	foreign := func() (in, out string) {
		return run(t, "tc", "-n", l.sw, "filter", "show", "dev", "fpPort1", "ingress"), run(t, "tc", "-n", l.sw, "filter", "show", "dev", "fpPort1", "egress")
	}
	if st, err := k.SpanStateOf(rx); err != nil || st.Filters != 1 {
		t.Errorf("the session's own filters: %+v %v", st, err)
	}
	// BOTH needs the egress hook, where the foreign filter sits: refused,
	// and nothing changes.
	both := rx
	both.Dir = "BOTH"
	var r *Refusal
	if err := k.CheckSpan(both, nil); !errors.As(err, &r) || !strings.Contains(r.Msg, "did not make") {
		t.Errorf("a session over a foreign filter: %v", err)
	}
	tx := k.Begin()
	if err := tx.EnsureSpan(both, &rx); err == nil {
		t.Error("EnsureSpan replaced a foreign filter")
	}
	tx.Rollback()
	if _, out := foreign(); !strings.Contains(out, "pref "+prio) || !strings.Contains(out, "fpPort2") {
		t.Fatalf("the foreign egress filter is gone:\n%s", out)
	}
	// Removing the session removes its filter only.
	commit(t, k, func(tx *Tx) error { return tx.RemoveSpan(both) })
	in, out := foreign()
	if !strings.Contains(out, "pref "+prio) || !strings.Contains(out, "fpPort2") {
		t.Errorf("RemoveSpan deleted the foreign egress filter:\n%s", out)
	}
	if !k.Features().MatchAll && !strings.Contains(in, "fpPort2") || strings.Contains(in, "fpPort3") {
		t.Errorf("ingress after RemoveSpan: the foreign filter must stay and the session's go:\n%s", in)
	}
}
