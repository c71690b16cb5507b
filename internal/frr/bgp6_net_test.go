package frr_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// TestBGPv6RenderIsFRRsForm: FRR runs the IPv6 neighbors and groups out
// of IPv4 unicast and activated in IPv6 unicast, where their per-family
// settings are; a member takes its group's activation; each aggregate is
// in its family. FRR prints back exactly what was rendered: once applied,
// nothing is left to send (a line in another form would be sent again at
// every commit, and a removal would miss it).
func TestBGPv6RenderIsFRRsForm(t *testing.T) {
	r := routerAlone(t, "b6form", "eth9")
	ctx := context.Background()
	cfg := frrtest.BGPv6Config()
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	sections := map[string][]string{}
	where := "router"
	for _, line := range strings.Split(frrtest.RunningBGP(t, r), "\n") {
		switch l := strings.TrimSpace(line); {
		case strings.HasPrefix(l, "address-family "):
			where = l
		case l == "exit-address-family":
			where = "router"
		default:
			sections[where] = append(sections[where], l)
		}
	}
	for _, c := range []struct {
		where     string
		want, not []string
	}{
		{"router", []string{"neighbor 2001:db8::2 remote-as 65002", "neighbor LEAVES6 peer-group", "neighbor LEAVES6 remote-as external",
			"neighbor 2001:db8::3 peer-group LEAVES6", "neighbor eth9 interface peer-group LEAVES6", "neighbor LEAVES6 timers 3 9"}, nil},
		{"address-family ipv4 unicast", []string{"no neighbor 2001:db8::2 activate", "no neighbor LEAVES6 activate", "aggregate-address 10.0.0.0/8 as-set summary-only"},
			[]string{"neighbor 2001:db8::2 next-hop-self", "no neighbor 2001:db8::3 activate", "no neighbor eth9 activate", "no neighbor 10.0.0.2 activate"}},
		{"address-family ipv6 unicast", []string{"neighbor 2001:db8::2 activate", "neighbor 2001:db8::2 next-hop-self", "neighbor LEAVES6 activate", "aggregate-address 2001:db8::/32 summary-only"},
			[]string{"neighbor 2001:db8::3 activate", "neighbor eth9 activate", "neighbor 10.0.0.2 activate"}},
	} {
		for _, w := range c.want {
			if !slices.Contains(sections[c.where], w) {
				t.Errorf("%s has no %q: %q", c.where, w, sections[c.where])
			}
		}
		for _, n := range c.not {
			if slices.Contains(sections[c.where], n) {
				t.Errorf("%s has %q: %q", c.where, n, sections[c.where])
			}
		}
	}
	cmds, err := r.Plan(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 0 {
		running, _ := r.RunningConfig(ctx)
		t.Fatalf("after the apply, still to send: %q\nrunning:\n%s", cmds, running)
	}
	// Removing the IPv6 parts leaves only the IPv4 neighbor.
	cfg.Neighbors, cfg.PeerGroups, cfg.Aggregates = cfg.Neighbors[:1], nil, nil
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	running, _ := r.RunningConfig(ctx)
	for _, gone := range []string{"2001:db8", "LEAVES6", "eth9", "aggregate-address"} {
		if strings.Contains(running, gone) {
			t.Errorf("FRR still runs %q:\n%s", gone, running)
		}
	}
	if cmds, _ := r.Plan(ctx, cfg); len(cmds) != 0 {
		t.Errorf("after the removal, still to send: %q", cmds)
	}
}

// TestGroupFiltersInBothFamiliesAreFRRsForm: a BGPv4PeerGroup's filters
// (and the soft reconfiguration an inbound one brings) are in IPv4 and
// IPv6 unicast, an unnumbered neighbor's of its own likewise, a numbered
// IPv4 neighbor's in IPv4 unicast only, a BGPv6Neighbor's in IPv6 unicast
// only; FRR prints them back as rendered, so nothing is left to send.
func TestGroupFiltersInBothFamiliesAreFRRsForm(t *testing.T) {
	r := routerAlone(t, "pfam", "eth9", "eth8")
	ctx := context.Background()
	cfg := frr.Config{
		Instances:  []frr.Instance{{ASNum: "65001"}},
		PeerGroups: []frr.Neighbor{{Name: "SPINES", PeerAS: "external", AdjRIBInFilter: "IN", AdjRIBOutFilter: "OUT"}},
		Neighbors: []frr.Neighbor{
			{NeighborAddress: "10.0.0.2", PeerGroup: "SPINES"},
			{IntfRef: "eth9", PeerGroup: "SPINES"},
			{IntfRef: "eth8", PeerAS: "external", AdjRIBInFilter: "IN"},
			{NeighborAddress: "10.0.0.6", PeerAS: "65003", AdjRIBOutFilter: "OUT"},
			{NeighborAddress: "2001:db8::2", PeerAS: "65002", AdjRIBInFilter: "IN", IPv6: true},
		},
		Policies: frr.Policies{
			PrefixSets:  []frr.PrefixSet{{Name: "V6", Entries: []frr.PrefixEntry{{Prefix: "2001:db8::/32", MaskLengthRange: "32-128"}}}},
			Conditions:  []frr.Condition{{Name: "IS-V6", Type: "MatchDstIpPrefix", PrefixSet: "V6"}},
			Statements:  []frr.Statement{{Name: "DROP", Conditions: []string{"IS-V6"}, Action: "deny"}, {Name: "REST", Action: "permit"}},
			Definitions: []frr.Definition{{Name: "IN", Statements: []string{"DROP", "REST"}, MatchAny: true}, {Name: "OUT", Statements: []string{"REST"}, MatchAny: true}},
		},
	}
	if err := r.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	running := frrtest.RunningBGP(t, r)
	v4, v6, _ := strings.Cut(running, "address-family ipv6 unicast")
	for _, c := range []struct {
		family, text string
		want, not    []string
	}{
		{"IPv4 unicast", v4, []string{"neighbor SPINES soft-reconfiguration inbound", "neighbor SPINES route-map IN in", "neighbor SPINES route-map OUT out",
			"neighbor eth8 soft-reconfiguration inbound", "neighbor eth8 route-map IN in", "neighbor 10.0.0.6 route-map OUT out"},
			[]string{"neighbor 2001:db8::2 route-map"}},
		{"IPv6 unicast", v6, []string{"neighbor SPINES soft-reconfiguration inbound", "neighbor SPINES route-map IN in", "neighbor SPINES route-map OUT out",
			"neighbor eth8 route-map IN in", "neighbor 2001:db8::2 soft-reconfiguration inbound", "neighbor 2001:db8::2 route-map IN in"},
			[]string{"neighbor 10.0.0.6 route-map"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s has no %q:\n%s", c.family, w, running)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.text, n) {
				t.Errorf("%s has %q:\n%s", c.family, n, running)
			}
		}
	}
	if cmds, err := r.Plan(ctx, cfg); err != nil || len(cmds) != 0 {
		t.Fatalf("after the apply, still to send: %q (%v)\nrunning:\n%s", cmds, err, running)
	}
}

// routerAlone starts an FRR in a namespace of its own (its directory and
// namespace named after prefix) with veth devices of these names, their
// peers left unconnected: enough for FRR to take and print a
// configuration naming them.
func routerAlone(t *testing.T, prefix string, devs ...string) *frr.Router {
	t.Helper()
	r, _, _ := routerIn(t, prefix, devs...)
	return r
}

// routerIn is routerAlone with its namespace and its directory (vtysh's
// socket directory), for tests that ask zebra through vtysh.
func routerIn(t *testing.T, prefix string, devs ...string) (r *frr.Router, ns, dir string) {
	t.Helper()
	frrtest.Need(t)
	dir = frrtest.Dir(t, prefix)
	ns = filepath.Base(dir)
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, d := range devs {
		run(t, "ip", "-n", ns, "link", "add", d, "type", "veth", "peer", "name", d+"p")
	}
	return frrtest.StartRouter(t, dir, ns), ns, dir
}
