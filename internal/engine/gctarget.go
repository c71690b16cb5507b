package engine

import (
	"runtime/debug"
	"sync"
)

// bulkGCPercent is the garbage collector's target while a bulk commit
// (a restore, a reset, a rollback over one: bulkFrom changes or more) is
// resolved, applied and written: the heap may grow 15% over what is live
// instead of 100% (GOGC's default). Such a commit holds its objects and
// changes live throughout (~180 MiB for a restore of 300,000 objects), so
// the default would let the process reach twice that; more collections
// are the price (bench/README.md, "Restore memory": 25% gave 287-300 MiB,
// 15% 270-276 MiB, for about a second more of a 5 s restore).
const bulkGCPercent = 15

// bulkGC lowers the collector's target (debug.SetGCPercent) while one bulk
// commit or more are in progress, and puts back the one set before when
// the last ends. It is a process-wide runtime setting, so it is counted
// for the process, not per engine (tests run several).
var bulkGC struct {
	mu    sync.Mutex
	n     int
	saved int
}

// lowerGC lowers the target until the returned func is called.
func lowerGC() (restore func()) {
	bulkGC.mu.Lock()
	if bulkGC.n == 0 {
		prev := debug.SetGCPercent(bulkGCPercent)
		if prev < bulkGCPercent { // already lower, or off (GOGC): kept
			debug.SetGCPercent(prev)
		}
		bulkGC.saved = prev
	}
	bulkGC.n++
	bulkGC.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			bulkGC.mu.Lock()
			if bulkGC.n--; bulkGC.n == 0 {
				debug.SetGCPercent(bulkGC.saved)
			}
			bulkGC.mu.Unlock()
		})
	}
}
