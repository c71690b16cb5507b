package frr_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
)

// memoryOf is what bgpd's allocations of one type hold, bytes (`show
// memory`: count, size, total, max count, max total); 0 for a type it
// never allocated (not listed).
func memoryOf(b *testing.B, l *lab, mtype string) float64 {
	b.Helper()
	out := run(b, "ip", "netns", "exec", l.switchNS, "vtysh", "--vty_socket", l.swDir, "-d", "bgpd", "-c", "show memory")
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(mtype) + `\s*:\s*\d+\s+\S+\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	return n
}

// BenchmarkSoftReconfigMemory measures what soft-reconfiguration inbound
// (which swmgr sets with an inbound filter, for the count before policy)
// costs bgpd: the peer announces $SWMGR_SOFTRECONF_ROUTES routes (default
// 10,000); the switch's heap in use is read with no filter, then with a
// filter that permits every route (the Adj-RIB-In then holds an entry for
// each, its attributes shared with the route's). Reports the Adj-RIB-In's
// bytes per route beside the table's own (its routes and nodes).
func BenchmarkSoftReconfigMemory(b *testing.B) {
	routes := 10000
	if s := os.Getenv("SWMGR_SOFTRECONF_ROUTES"); s != "" {
		routes, _ = strconv.Atoi(s)
	}
	l := newLab(b)
	ctx := context.Background()
	batch := filepath.Join(b.TempDir(), "addrs")
	f, err := os.Create(batch)
	if err != nil {
		b.Fatal(err)
	}
	for i := range routes {
		fmt.Fprintf(f, "address add 198.%d.%d.%d/32 dev lo\n", 18+i/65536, (i/256)%256, i%256)
	}
	f.Close()
	run(b, "ip", "-n", l.peerNS, "-batch", batch)
	cfg := l.switchConfig("65001", fastNeighbor(l.peerAddr, "65002"))
	cfg.Policies = frr.Policies{
		Statements:  []frr.Statement{{Name: "ALL", Action: "permit"}},
		Definitions: []frr.Definition{{Name: "EVERY", Statements: []string{"ALL"}, MatchAny: true}},
	}
	if err := l.sw.Apply(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	l.waitEstablished(b, l.sw, l.peerAddr)
	learned := func(want uint32) func() bool {
		return func() bool {
			st, _ := neighborState(b, l.sw, frr.DefaultVRF, l.peerAddr)
			return st.IPv4Unicast.Received >= want && st.IPv4Unicast.Accepted >= uint32(routes)
		}
	}
	waitFor(b, "the peer's routes", 5*time.Minute, learned(0))
	table := (memoryOf(b, l, "BGP route") + memoryOf(b, l, "BGP node")) / float64(routes)
	if table == 0 {
		b.Fatal("bgpd's memory lists no BGP routes")
	}
	if adj := memoryOf(b, l, "BGP adj in"); adj != 0 {
		b.Fatalf("an Adj-RIB-In of %v bytes without soft reconfiguration", adj)
	}
	cfg.Neighbors[0].AdjRIBInFilter = "EVERY"
	if err := l.sw.Apply(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	waitFor(b, "the Adj-RIB-In filled", 5*time.Minute, learned(uint32(routes)))
	b.ReportMetric(memoryOf(b, l, "BGP adj in")/float64(routes), "adj-in-bytes/route")
	// A read of the neighbors' state with its prefix-counts walk, against
	// the neighbor list alone (FRR's JSON).
	const reads = 5
	start := time.Now()
	for range reads {
		if _, err := l.sw.Neighbors(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/reads, "ms/state-read")
	start = time.Now()
	for range reads {
		run(b, "ip", "netns", "exec", l.switchNS, "vtysh", "--vty_socket", l.swDir, "-c", "show bgp ipv4 unicast neighbors "+l.peerAddr+" prefix-counts json")
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/reads, "ms/walk-by-vtysh")
	b.ReportMetric(table, "table-bytes/route")
	b.ReportMetric(float64(routes), "routes")
}
