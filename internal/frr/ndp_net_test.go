package frr_test

import (
	"context"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/frr"
)

// TestRAIntervalOnUnnumberedInterface: a real FRR takes the router
// advertisement interval on the interface of an unnumbered neighbor (where
// bgpd has zebra send advertisements, every 10 s of its own), prints it
// back as rendered (nothing left to send), sends its advertisements at
// that interval, and goes back to bgpd's 10 s when it is taken out.
func TestRAIntervalOnUnnumberedInterface(t *testing.T) {
	r, ns, dir := routerIn(t, "ndpra", "eth9")
	run(t, "ip", "-n", ns, "link", "set", "eth9", "up")
	run(t, "ip", "-n", ns, "link", "set", "eth9p", "up")
	ctx := context.Background()
	vtysh := func(cmd string) string {
		return run(t, "ip", "netns", "exec", ns, "vtysh", "--vty_socket", dir, "-c", cmd)
	}
	cfg := frr.Config{
		Instances: []frr.Instance{{ASNum: "65001"}},
		Neighbors: []frr.Neighbor{{IntfRef: "eth9", PeerAS: "external"}},
	}
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	intf := vtysh("show interface eth9")
	if !strings.Contains(intf, "router advertisements are sent every 10 seconds") {
		t.Fatalf("bgpd's own advertisements on the unnumbered interface: %s", intf)
	}
	cfg.RAIntervals = []frr.RAInterval{{Interface: "eth9", Seconds: 3}}
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if running := vtysh("show running-config"); !strings.Contains(running, "interface eth9\n ipv6 nd ra-interval 3\n") {
		t.Errorf("zebra runs no ra-interval 3 on eth9:\n%s", running)
	}
	if intf := vtysh("show interface eth9"); !strings.Contains(intf, "router advertisements are sent every 3 seconds") {
		t.Errorf("advertisements after ra-interval 3: %s", intf)
	}
	if cmds, err := r.Plan(ctx, cfg); err != nil || len(cmds) != 0 {
		t.Errorf("after the apply, still to send: %q (%v)", cmds, err)
	}
	// A configuration FRR cannot take is refused before FRR is asked.
	bad := cfg
	bad.RAIntervals = []frr.RAInterval{{Interface: "eth9", Seconds: 0}}
	if err := r.Apply(ctx, bad); err == nil {
		t.Error("an interval of 0 s was applied")
	}
	if running := vtysh("show running-config"); !strings.Contains(running, " ipv6 nd ra-interval 3\n") {
		t.Errorf("a refused apply changed zebra:\n%s", running)
	}
	cfg.RAIntervals = nil
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if running := vtysh("show running-config"); strings.Contains(running, "ra-interval") {
		t.Errorf("zebra still runs an ra-interval:\n%s", running)
	}
	if intf := vtysh("show interface eth9"); !strings.Contains(intf, "router advertisements are sent every 10 seconds") {
		t.Errorf("advertisements after the interval was taken out: %s", intf)
	}
}
