package linux

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// bgpBenchSwitch is a switch whose BGP runs in FRR, with ASNum set.
func bgpBenchSwitch(b *testing.B) *sw {
	needProgram(b, "frr", "/usr/lib/frr/bgpd", "/usr/lib/frr/zebra")
	l := benchLab(b, 2)
	dir := daemonDir(b, l.prefix)
	s := startSwitch(b, l, b.TempDir(), func(o *switchOptions) { o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")} })
	s.mustCommit(s.edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001", "RouterId": "10.0.0.1"}))
	return s
}

func neighborEdit(s *sw, op backend.Op, i int) engine.Edit {
	o := model.Object{"Vrf": "default", "NeighborAddress": fmt.Sprintf("10.203.%d.%d", i/250, i%250+1)}
	if op == backend.Create {
		o["PeerAS"] = "65003"
	}
	return s.edit(op, "BGPv4Neighbor", o)
}

// BenchmarkBGPCommitToFRR: from a commit creating a BGPv4Neighbor to FRR
// running it (in bgpd's neighbor table). The commit returns only after FRR
// took the change; the check of FRR's table is timed too.
func BenchmarkBGPCommitToFRR(b *testing.B) {
	s := bgpBenchSwitch(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		s.mustCommit(neighborEdit(s, backend.Create, i))
		ns, err := s.be.FRR().Neighbors(ctx)
		if err != nil || len(ns) != 1 {
			b.Fatalf("FRR neighbors %+v %v", ns, err)
		}
		b.StopTimer()
		s.mustCommit(neighborEdit(s, backend.Delete, i))
		b.StartTimer()
	}
}

// BenchmarkTenConcurrentBGPCommits: ten clients each commit a new
// neighbor at the same time. frr-applies/op is how many times FRR was
// asked to apply a configuration for the ten.
func BenchmarkTenConcurrentBGPCommits(b *testing.B) {
	s := bgpBenchSwitch(b)
	applies := 0
	for i := 0; i < b.N; i++ {
		before := s.be.FRR().Applies()
		var wg sync.WaitGroup
		for k := 0; k < 10; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.commit(neighborEdit(s, backend.Create, k)); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		applies += s.be.FRR().Applies() - before
		var del []engine.Edit
		for k := 0; k < 10; k++ {
			del = append(del, neighborEdit(s, backend.Delete, k))
		}
		s.mustCommit(del...)
		b.StartTimer()
	}
	b.ReportMetric(float64(applies)/float64(b.N), "frr-applies/op")
}
