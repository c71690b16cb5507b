package candidates

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// benchEdits is the size of each batch of BenchmarkStageSecondBatch.
const benchEdits = 50000

// BenchmarkStageSecondBatch stages benchEdits creates into a new candidate,
// then benchEdits more into the same one, and reports how much longer the
// second batch took than the first (second/first; target ≤ 1.5): staging
// costs per edit, not per edit times the candidate's size. "cached" stages
// the second batch right after the first (the kept view of the candidate);
// "replayed" stages into another candidate in between, which a cache of one
// view would have dropped the candidate's view for (the second batch then
// replayed its 50,000 edits first, 1.9-2.4x): the cache keeps both views
// (see cache). Each reports its ratio. Costs are the process's CPU
// time (user and system), which a machine busy with other work changes less
// than the wall time.
func BenchmarkStageSecondBatch(b *testing.B) {
	for _, mode := range []string{"cached", "replayed"} {
		b.Run(mode, func(b *testing.B) {
			f := newFixture(b, b.TempDir())
			batch := func(from int) []engine.Edit {
				edits := make([]engine.Edit, benchEdits)
				for i := range edits {
					j := from + i
					edits[i] = f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.%d", j>>16, j>>8&255, j&255)})
				}
				return edits
			}
			var ratio float64
			for range b.N {
				id, other := f.candidate(), f.candidate()
				first, second := batch(0), batch(benchEdits)
				t0 := cpuTime()
				if _, err := f.c.StageMany(bg, id, first); err != nil {
					b.Fatal(err)
				}
				d1 := cpuTime() - t0
				if mode == "replayed" {
					f.stage(other, f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.1"}))
				}
				t1 := cpuTime()
				if _, err := f.c.StageMany(bg, id, second); err != nil {
					b.Fatal(err)
				}
				d2 := cpuTime() - t1
				ratio = float64(d2) / float64(d1)
				b.Logf("%s: first %d edits %v of CPU, the next %d %v", mode, benchEdits, d1, benchEdits, d2)
				f.c.Discard(bg, id)
				f.c.Discard(bg, other)
			}
			b.ReportMetric(ratio, "second/first")
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
