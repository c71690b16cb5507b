package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// A restore's peak heap, per object restored, over what the decoded file
// already holds: the commit (resolve, backend, store write, publish) of
// 60,000 NtpServers must not need more than 1,000 bytes of heap an object
// at any moment (sampled every millisecond). It holds each object's change
// (~200 bytes), the view's index while resolving and its collector's
// headroom (bench/README.md, "Restore of 300,000 objects"); the store's
// one-transaction write alone held ~800 more (bbolt's nodes and pages), and
// the collector's default target doubled the lot.
func TestRestoreHeapPerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("a large restore")
	}
	const n = 60000
	f := newFixture(t, t.TempDir())
	k := f.kind("NtpServer")
	objs := make([]model.Object, n)
	for i := range objs {
		o := k.Defaults()
		o["IpAddr"] = fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)
		objs[i] = o
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	inUse := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64() + sample[1].Value.Uint64()
	}
	runtime.GC()
	base := inUse()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, inUse())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	out, err := f.e.Replace(context.Background(), Replacement{Objects: map[string][]model.Object{"NtpServer": objs}}, Request{Meta: Meta{Source: "restore"}, OmitDiffs: true})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if out.Changes < n {
		t.Fatalf("%d changes; want at least %d", out.Changes, n)
	}
	per := float64(peak-base) / n
	t.Logf("peak heap over the decoded objects: %.0f bytes per object restored (%d objects, %.1f MiB)", per, n, float64(peak-base)/(1<<20))
	if per > 1000 {
		t.Fatalf("the restore needed %.0f bytes of heap per object at its peak; want at most 1000", per)
	}
}

// A bulk commit whose store write fails changes nothing, in the store and
// on the switch (its changes are reverted), and the same commit then
// succeeds; its requests wait for it and are not lost.
func TestBulkCommitStoreFailureChangesNothing(t *testing.T) {
	f, _ := newUserFixture(t)
	f.mustApply(f.edit(backend.Create, "User", user("root1", "admin", "admin-password")))
	var edits []Edit
	for i := range bulkFrom {
		edits = append(edits, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}))
	}
	before := f.dump()
	f.updateFault = func() error { return errors.New("disk gone") }
	if _, err := f.e.Apply(context.Background(), edits, Meta{Source: "test"}, nil); err == nil {
		t.Fatal("a bulk commit whose store write failed succeeded")
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a failed bulk commit changed the store")
	}
	f.updateFault = nil
	out, err := f.e.Apply(context.Background(), edits, Meta{Source: "test"}, nil)
	if err != nil || out.Changes != bulkFrom {
		t.Fatalf("the same commit then: %v, %+v", err, out)
	}
	if !f.exists("NtpServer", "10.0.0.7") {
		t.Fatal("the bulk commit's objects are not there")
	}
}

// lowerGC lowers the collector's target while any bulk commit runs and
// puts back the one set before, whatever the order they end in; a lower
// target, or none (GOGC=off), is kept.
func TestLowerGCRestores(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	one := lowerGC()
	two := lowerGC()
	if got := debug.SetGCPercent(-2); got != bulkGCPercent {
		t.Fatalf("target %d during two bulk commits; want %d", got, bulkGCPercent)
	}
	debug.SetGCPercent(bulkGCPercent)
	one()
	one() // twice: no effect
	if got := debug.SetGCPercent(bulkGCPercent); got != bulkGCPercent {
		t.Fatalf("target %d while one bulk commit still runs; want %d", got, bulkGCPercent)
	}
	two()
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Fatalf("target %d after both; want 100 back", got)
	}
	// GC off (GOGC=off) stays off.
	restore := lowerGC()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("target %d with the collector off; want it off", got)
	}
	restore()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("target %d after; want off", got)
	}
}
