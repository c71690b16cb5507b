package linux

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// driverLab is a Linux backend on a lab, for the drivers of kinds the
// model does not declare yet (stand-in kinds of the same name).
func driverLab(t *testing.T, ports int) (*lab, *Backend, *model.Registry) {
	l, be, reg, _ := driverLabRec(t, ports)
	return l, be, reg
}

// driverLabRec is driverLab with what the event-driven reconciliations
// changed: rec returns it all so far.
func driverLabRec(t *testing.T, ports int) (l *lab, be *Backend, reg *model.Registry, rec func() []string) {
	t.Helper()
	l = newLab(t, ports, KernelOptions{})
	l.k.Close()
	l.k = nil
	var mu sync.Mutex
	var changed []string
	rec = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), changed...)
	}
	be, err := New(Options{Kernel: KernelOptions{Netns: l.sw, VRFNetnsPrefix: l.prefix + "vrf-"}, Log: quiet(),
		OnReconcile: func(c []string) {
			mu.Lock()
			defer mu.Unlock()
			changed = append(changed, c...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return l, be, model.Builtin(), rec
}

func change(reg *model.Registry, kind string, op backend.Op, key string, o model.Object) backend.Change {
	k := reg.Lookup(model.Config, kind)
	if k == nil {
		k = &model.Kind{Name: kind} // a stand-in for a kind another branch declares
	}
	c := backend.Change{Kind: k, Op: op, Key: key}
	switch op {
	case backend.Delete:
		c.Before = o
	case backend.Update:
		c.Before, c.After = o, o
	default:
		c.After = o
	}
	return c
}

// TestLogicalIntfLoopbackInVRF drives the LogicalIntf driver and an
// IPv4Intf on the
// loopback in VRF red: a host reaches the loopback's address through a
// port of the VRF (a dummy device in the VRF on a stock kernel, an address
// on the VRF namespace's lo on the host kernel); a loopback removed by hand
// comes back at the next reconciliation; deleting it all leaves the kernel
// as before, and so does a commit failing midway.
func TestLogicalIntfLoopbackInVRF(t *testing.T) {
	l, be, reg, reconciled := driverLabRec(t, 2)
	k := be.Kernel()
	ctx := context.Background()
	before := l.dump()
	port := reg.Lookup(model.Config, "Port").Defaults()
	port["IntfRef"], port["AdminState"], port["Description"] = "fpPort1", "UP", ""
	lb := model.Object{"Name": "Loopback1", "Type": "Loopback"}
	intf := model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24", "Vrf": "red", "AdminState": "UP"}
	lbIntf := model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32", "Vrf": "red", "AdminState": "UP"}
	create := []backend.Change{
		change(reg, "Port", backend.Update, "fpPort1", port),
		change(reg, "Vrf", backend.Create, "red", model.Object{"Vrf": "red"}),
		change(reg, "LogicalIntf", backend.Create, "Loopback1", lb),
		change(reg, "IPv4Intf", backend.Create, "fpPort1", intf),
		change(reg, "IPv4Intf", backend.Create, "Loopback1", lbIntf)}
	k.FailAt = func(n int, what string) error {
		if strings.Contains(what, "10.255.0.1") {
			return fmt.Errorf("injected at %s", what)
		}
		return nil
	}
	if err := be.Apply(ctx, create); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	k.FailAt = nil
	if d := diffLines(before, l.dump()); d != "" {
		t.Fatalf("a commit failing at the loopback's address left:\n%s", d)
	}
	if err := be.Apply(ctx, create); err != nil {
		t.Fatal(err)
	}
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
	if st, err := be.State(ctx, &model.Kind{Name: "LogicalIntf"}, lb); err != nil || st.Str("OperState") != "UP" || st.Int("IfIndex") == 0 {
		t.Errorf("LogicalIntf state %v %v", st, err)
	}
	if st, err := be.State(ctx, reg.Lookup(model.Config, "IPv4Intf"), lbIntf); err != nil || st.Str("OperState") != "UP" || st.Str("L2IntfType") != "Loopback" {
		t.Errorf("IPv4Intf state on the loopback %v %v", st, err)
	}

	// Someone removes the loopback (or its address) by hand: it comes back
	// (the event-driven reconciliation may be first; Reconcile runs one).
	if k.Features().Dummy {
		h, dev, err := k.findLink("Loopback1")
		if err != nil {
			t.Fatal(err)
		}
		gone := dev.Attrs().Index
		if err := h.LinkDel(dev); err != nil {
			t.Fatal(err)
		}
		be.Reconcile()
		if !eventually(5*time.Second, func() bool {
			_, dev, err := k.findLink("Loopback1")
			return err == nil && dev.Attrs().Index != gone
		}) {
			t.Fatal("the deleted loopback was not made again")
		}
	} else {
		// A VRF namespace is not watched: a reconciliation pass puts the
		// address back. It may be an event-driven one (any event in the
		// switch namespace starts one: IPv6 DAD finishing on a port that
		// came up, say) between the removal and the Reconcile below, so
		// the change must be in what either recorded.
		seen := len(reconciled())
		run(t, "ip", "-n", l.prefix+"vrf-red", "addr", "del", "10.255.0.1/32", "dev", "lo")
		c := be.Reconcile()
		if !strings.Contains(strings.Join(append(c, reconciled()[seen:]...), "\n"), "10.255.0.1/32") {
			t.Errorf("the reconciliations after the removal recorded %q and %q, not the loopback's address", c, reconciled()[seen:])
		}
	}
	if !eventually(5*time.Second, func() bool { return l.ping(1, "10.255.0.1") }) {
		t.Fatal("the loopback was not put back")
	}
	if c := be.Reconcile(); len(c) != 0 {
		t.Errorf("a second reconciliation still changed %v", c)
	}

	port2 := port.Clone()
	port2["AdminState"] = "DOWN"
	if err := be.Apply(ctx, []backend.Change{
		change(reg, "IPv4Intf", backend.Delete, "Loopback1", lbIntf),
		change(reg, "IPv4Intf", backend.Delete, "fpPort1", intf),
		change(reg, "LogicalIntf", backend.Delete, "Loopback1", lb),
		change(reg, "Vrf", backend.Delete, "red", model.Object{"Vrf": "red"}),
		{Kind: reg.Lookup(model.Config, "Port"), Op: backend.Update, Key: "fpPort1", Before: port, After: port2}}); err != nil {
		t.Fatal(err)
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after deleting everything the kernel is not as before:\n%s", d)
	}
}

// TestIPv4RouteDriver drives the IPv4Route driver with FlexSwitch's
// fields: a route
// through one next hop carries traffic, a multipath update with weights, a
// new Cost, a null route, a failure midway and the deletes, each checked
// against the kernel's routes; state lists what the kernel has.
func TestIPv4RouteDriver(t *testing.T) {
	l, be, reg := driverLab(t, 2)
	k := be.Kernel()
	ctx := context.Background()
	var setup []backend.Change
	for i := 1; i <= 2; i++ {
		p := fmt.Sprint("fpPort", i)
		port := reg.Lookup(model.Config, "Port").Defaults()
		port["IntfRef"], port["AdminState"] = p, "UP"
		setup = append(setup, change(reg, "Port", backend.Update, p, port),
			change(reg, "IPv4Intf", backend.Create, p, model.Object{"IntfRef": p, "IpAddr": fmt.Sprintf("10.0.%d.1/24", i), "Vrf": "default", "AdminState": "UP"}))
		l.host(i, "ip", "addr", "add", fmt.Sprintf("10.0.%d.2/24", i), "dev", "eth0")
		l.host(i, "ip", "addr", "add", "198.51.100.1/32", "dev", "lo")
		l.host(i, "ip", "route", "add", "10.0.0.0/16", "via", fmt.Sprintf("10.0.%d.1", i))
	}
	if err := be.Apply(ctx, setup); err != nil {
		t.Fatal(err)
	}
	before := l.dump()
	route := func(fields model.Object, hops ...model.Object) model.Object {
		o := model.Object{"DestinationNw": "198.51.100.0", "NetworkMask": "255.255.255.0", "Protocol": "STATIC", "Cost": int64(0), "NullRoute": false, "NextHop": hops}
		for f, v := range fields {
			o[f] = v
		}
		return o
	}
	hop := func(ip, intf string, w int64) model.Object {
		return model.Object{"NextHopIp": ip, "NextHopIntRef": intf, "Weight": w}
	}
	show := func() string { return run(t, "ip", "-n", l.sw, "route", "show", "table", "all", "198.51.100.0/24") }
	apply := func(changes ...backend.Change) {
		t.Helper()
		if err := be.Apply(ctx, changes); err != nil {
			t.Fatal(err)
		}
	}
	key := "DestinationNw=198.51.100.0,NetworkMask=255.255.255.0"
	r1 := route(nil, hop("10.0.1.2", "", 0))
	apply(change(reg, "IPv4Route", backend.Create, key, r1))
	if out := show(); !strings.Contains(out, "via 10.0.1.2 dev fpPort1 proto static") {
		t.Fatalf("route: %s", out)
	}
	needPing(t)
	if out := run(t, "ip", "netns", "exec", l.sw, "busybox", "ping", "-c", "1", "-W", "2", "198.51.100.1"); !strings.Contains(out, "1 packets received") {
		t.Fatalf("no traffic through the route: %s", out)
	}
	// Multipath with weights and an explicit interface.
	r2 := route(nil, hop("10.0.1.2", "fpPort1", 1), hop("10.0.2.2", "fpPort2", 3))
	apply(backend.Change{Kind: &model.Kind{Name: "IPv4Route"}, Op: backend.Update, Key: key, Before: r1, After: r2})
	if out := show(); !strings.Contains(out, "nexthop via 10.0.1.2 dev fpPort1 weight 1") || !strings.Contains(out, "nexthop via 10.0.2.2 dev fpPort2 weight 3") {
		t.Fatalf("multipath route: %s", out)
	}
	// A new Cost replaces the route (one route, the new metric).
	r3 := route(model.Object{"Cost": int64(20)}, hop("10.0.2.2", "", 0))
	apply(backend.Change{Kind: &model.Kind{Name: "IPv4Route"}, Op: backend.Update, Key: key, Before: r2, After: r3})
	if out := show(); strings.Count(out, "198.51.100.0/24") != 1 || !strings.Contains(out, "via 10.0.2.2 dev fpPort2 proto static metric 20") {
		t.Fatalf("route after a new cost: %s", out)
	}
	// A commit failing at its second kernel change leaves the routes as
	// they were.
	mid := l.dump()
	k.FailAt = func(n int, what string) error {
		if n == 2 {
			return fmt.Errorf("injected at %s", what)
		}
		return nil
	}
	err := be.Apply(ctx, []backend.Change{
		{Kind: &model.Kind{Name: "IPv4Route"}, Op: backend.Update, Key: key, Before: r3, After: r2},
		change(reg, "IPv4Route", backend.Create, "x", route(model.Object{"DestinationNw": "203.0.113.0"}, hop("10.0.1.2", "", 0)))})
	k.FailAt = nil
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	if d := diffLines(mid, l.dump()); d != "" {
		t.Fatalf("a failed commit changed the kernel:\n%s", d)
	}
	// Someone deletes the route by hand: reconciliation puts it back.
	run(t, "ip", "-n", l.sw, "route", "del", "198.51.100.0/24", "metric", "20")
	if c := be.Reconcile(); len(c) != 1 || !strings.Contains(show(), "metric 20") {
		t.Fatalf("reconcile: %v; %s", c, show())
	}
	// A null route.
	null := route(model.Object{"NullRoute": true, "Cost": int64(20)})
	apply(backend.Change{Kind: &model.Kind{Name: "IPv4Route"}, Op: backend.Update, Key: key, Before: r3, After: null})
	if out := show(); !strings.Contains(out, "blackhole 198.51.100.0/24 proto static metric 20") {
		t.Fatalf("null route: %s", out)
	}
	routes, err := k.Routes("default")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range routes {
		found = found || r.Dst == "198.51.100.0/24" && r.Protocol == "static" && len(r.NextHops) == 1 && r.NextHops[0] == "blackhole"
	}
	if !found {
		t.Errorf("Routes does not list the null route: %+v", routes)
	}
	// A null route with a next hop is refused by the check, before any
	// kernel change.
	var r *Refusal
	if err := be.Apply(ctx, []backend.Change{change(reg, "IPv4Route", backend.Create, "y", route(model.Object{"DestinationNw": "192.0.2.0", "NullRoute": true}, hop("10.0.1.2", "", 0)))}); !errors.As(err, &r) && !strings.Contains(fmt.Sprint(err), "null route has no next hop") {
		t.Errorf("null route with a next hop: %v", err)
	}
	apply(change(reg, "IPv4Route", backend.Delete, key, null))
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("after the delete the kernel is not as before:\n%s", d)
	}
}

// TestApplyBatchOnePass hands the backend batches of commits as the
// engine's group commit does: a batch that succeeds is applied in one
// pass (one kernel Tx); in a batch whose second commit fails, the first is
// applied, the second and third are not, and the kernel shows exactly that.
func TestApplyBatchOnePass(t *testing.T) {
	l, be, reg := driverLab(t, 3)
	k := be.Kernel()
	ctx := context.Background()
	if _, err := be.ApplyBatch(ctx, []*backend.Commit{{}}); err != nil { // the start's replay
		t.Fatal(err)
	}
	addr := func(port, ip string) *backend.Commit {
		return &backend.Commit{Changes: []backend.Change{change(reg, "IPv4Intf", backend.Create, port,
			model.Object{"IntfRef": port, "IpAddr": ip, "Vrf": "default", "AdminState": "UP"})}}
	}
	has := func(ip string) bool {
		return strings.Contains(run(t, "ip", "-n", l.sw, "-o", "addr", "show"), " "+ip+" ")
	}
	n, err := be.ApplyBatch(ctx, []*backend.Commit{addr("fpPort1", "10.0.1.1/24"), addr("fpPort2", "10.0.2.1/24"), addr("fpPort3", "10.0.3.1/24")})
	if n != 3 || err != nil || be.OnePassBatches() != 1 {
		t.Fatalf("ApplyBatch: %d %v, one-pass batches %d; want 3 applied in one pass", n, err, be.OnePassBatches())
	}
	for _, ip := range []string{"10.0.1.1/24", "10.0.2.1/24", "10.0.3.1/24"} {
		if !has(ip) {
			t.Errorf("%s not in the kernel after the batch", ip)
		}
	}
	del := func(port, ip string) backend.Change {
		return change(reg, "IPv4Intf", backend.Delete, port, model.Object{"IntfRef": port, "IpAddr": ip, "Vrf": "default", "AdminState": "UP"})
	}
	if n, err := be.ApplyBatch(ctx, []*backend.Commit{{Changes: []backend.Change{del("fpPort1", "10.0.1.1/24"), del("fpPort2", "10.0.2.1/24"), del("fpPort3", "10.0.3.1/24")}}}); n != 1 || err != nil {
		t.Fatalf("delete: %d %v", n, err)
	}

	before := l.dump()
	k.FailAt = func(_ int, what string) error {
		if strings.Contains(what, "10.0.5.1") {
			return fmt.Errorf("injected at %s", what)
		}
		return nil
	}
	defer func() { k.FailAt = nil }()
	n, err = be.ApplyBatch(ctx, []*backend.Commit{addr("fpPort1", "10.0.4.1/24"), addr("fpPort2", "10.0.5.1/24"), addr("fpPort3", "10.0.6.1/24")})
	if n != 1 || err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("ApplyBatch with its second commit failing: %d %v; want 1 applied and the injected error", n, err)
	}
	if !has("10.0.4.1/24") || has("10.0.5.1/24") || has("10.0.6.1/24") {
		t.Errorf("after the failed batch the kernel has:\n%s", run(t, "ip", "-n", l.sw, "-o", "addr", "show"))
	}
	k.FailAt = nil
	if n, err := be.ApplyBatch(ctx, []*backend.Commit{{Changes: []backend.Change{del("fpPort1", "10.0.4.1/24")}}}); n != 1 || err != nil {
		t.Fatalf("delete: %d %v", n, err)
	}
	if d := diffLines(before, l.dump()); d != "" {
		t.Errorf("the failed batch left more than its first commit:\n%s", d)
	}
}
