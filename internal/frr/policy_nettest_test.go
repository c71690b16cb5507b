package frr_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
)

// TestPolicyWithRealFRR: policies of every form swmgr renders (both
// families, exact, le and ge-le ranges, destination and source matches,
// MatchType any and all, a redistribution's and a neighbor's route-map)
// are what a real bgpd prints back: applying them again sends nothing. An
// inbound filter denying the peer's prefix removes it from the switch's
// BGP and kernel tables; a change to one prefix-list entry is one command
// and resets no session; dropping the filter brings the route back.
func TestPolicyWithRealFRR(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	n := fastNeighbor(l.peerAddr, "65002")
	cfg := l.switchConfig("65001", n)
	cfg.Instances[0].Redistribution = []frr.Redistribution{{Sources: "CONNECTED", Policy: "OUT"}}
	var many []frr.PrefixEntry
	for i := range 40 {
		many = append(many, frr.PrefixEntry{Prefix: fmt.Sprintf("198.18.%d.0/24", i), MaskLengthRange: "exact"})
	}
	cfg.Policies = frr.Policies{
		PrefixSets: []frr.PrefixSet{
			{Name: "PEER", Entries: []frr.PrefixEntry{{Prefix: "203.0.113.0/24", MaskLengthRange: "exact"}}},
			{Name: "MANY", Entries: append(many, frr.PrefixEntry{Prefix: "10.0.0.0/8", MaskLengthRange: "16-24"}, frr.PrefixEntry{Prefix: "10.0.0.0/8", MaskLengthRange: "8-32"})},
			{Name: "V6", Entries: []frr.PrefixEntry{{Prefix: "2001:db8::/32", MaskLengthRange: "48-64"}, {Prefix: "::/0", MaskLengthRange: "exact"}}},
		},
		Conditions: []frr.Condition{
			{Name: "FROM-PEER", Type: "MatchDstIpPrefix", PrefixSet: "PEER"},
			{Name: "IN-MANY", Type: "MatchDstIpPrefix", PrefixSet: "MANY"},
			{Name: "V6", Type: "MatchDstIpPrefix", PrefixSet: "V6"},
			{Name: "SRC", Type: "MatchSrcIpPrefix", IpPrefix: l.peerAddr + "/32"},
			{Name: "DEFAULT", Type: "MatchDstIpPrefix", IpPrefix: "0.0.0.0/0"},
		},
		Statements: []frr.Statement{
			{Name: "DROP-PEER", Conditions: []string{"FROM-PEER", "SRC"}, Action: "deny"},
			{Name: "ANY-OF", Conditions: []string{"IN-MANY", "V6"}, Action: "permit", MatchAny: true},
			{Name: "NO-DEFAULT", Conditions: []string{"DEFAULT"}, Action: "deny"},
			{Name: "REST", Action: "permit"},
		},
		Definitions: []frr.Definition{
			{Name: "IN", Statements: []string{"DROP-PEER", "REST"}, MatchAny: true},
			{Name: "OUT", Statements: []string{"ANY-OF", "NO-DEFAULT", "REST"}},
		},
	}
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if plan, err := l.sw.Plan(ctx, cfg); err != nil || len(plan) != 0 {
		t.Fatalf("FRR prints the policies otherwise than swmgr renders them: it would send %q (%v)", plan, err)
	}
	before := l.waitEstablished(t, l.sw, l.peerAddr)
	learned := func() bool {
		_, bgp := routeVia(t, l.sw, l.announced, "bgp")
		kernel := strings.Contains(run(t, "ip", "-n", l.switchNS, "route", "show", l.announced), "proto bgp")
		return bgp && kernel
	}
	waitFor(t, l.announced+" learned", 30*time.Second, learned)

	// The inbound filter: the peer's prefix leaves both tables.
	cfg.Policies.PrefixSets[0].Entries[0].Prefix = l.announced
	cfg.Neighbors[0].AdjRIBInFilter = "IN"
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, l.announced+" filtered out", 30*time.Second, func() bool {
		_, bgp := routeVia(t, l.sw, l.announced, "bgp")
		kernel := strings.Contains(run(t, "ip", "-n", l.switchNS, "route", "show", l.announced), "proto bgp")
		return !bgp && !kernel
	})

	// One entry of a long list changed: one command, the same session.
	cfg.Policies.PrefixSets[1].Entries[20].MaskLengthRange = "24-28"
	plan, err := l.sw.Plan(ctx, cfg)
	if err != nil || len(plan) != 1 || !strings.HasPrefix(plan[0], "ip prefix-list MANY seq 105 permit 198.18.20.0/24 le 28") {
		t.Fatalf("one entry changed: plan %q (%v); want that entry's line only", plan, err)
	}
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// The filter dropped (the policy kept): the route comes back, over the
	// session established before any policy.
	cfg.Neighbors[0].AdjRIBInFilter = ""
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, l.announced+" learned again", 30*time.Second, learned)
	after := l.waitEstablished(t, l.sw, l.peerAddr)
	if after.ConnectionsUp != before.ConnectionsUp {
		t.Errorf("policy changes reset the session: %d connections, were %d", after.ConnectionsUp, before.ConnectionsUp)
	}
	// Everything removed: FRR runs no policy of swmgr's.
	cfg.Instances[0].Redistribution = nil
	cfg.Policies = frr.Policies{}
	if err := l.sw.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	running, err := l.sw.RunningConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(running, "prefix-list") || strings.Contains(running, "route-map") {
		t.Errorf("policies left in FRR:\n%s", running)
	}
}
