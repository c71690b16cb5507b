package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestObjectCacheIsNeverStale updates objects while readers read them by id
// through a tiny cache that evicts constantly: a read after an acknowledged
// update must never return an older value.
func TestObjectCacheIsNeverStale(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.e.objects = newObjCache(3) // far fewer entries than objects: constant eviction
	k := f.kind("NtpServer")
	var ids []uuid.UUID
	for i := range 8 {
		out := f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0." + strconv.Itoa(i+1)}))
		ids = append(ids, out.IDs[0])
	}
	var acked [8]int64 // last MinPoll acknowledged per object
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 4 { // readers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				j := (i + r) % len(ids)
				mu.Lock()
				floor := acked[j]
				mu.Unlock()
				out, _, err := f.e.GetByID(context.Background(), k, ids[j], false, nil)
				if err != nil {
					t.Error(err)
					return
				}
				var got struct{ Object struct{ MinPoll int64 } }
				json.Unmarshal(out, &got)
				if floor != 0 && got.Object.MinPoll < floor {
					t.Errorf("object %d: read MinPoll %d after %d was acknowledged", j, got.Object.MinPoll, floor)
					return
				}
			}
		}()
	}
	for round := int64(4); round <= 17; round++ {
		for j := range ids {
			f.mustApply(f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0." + strconv.Itoa(j+1), "MinPoll": round, "MaxPoll": int64(17)}))
			mu.Lock()
			acked[j] = round
			mu.Unlock()
		}
	}
	close(stop)
	wg.Wait()
	// A deleted object is gone from the cache at once.
	f.mustApply(f.edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	if _, _, err := f.e.GetByID(context.Background(), k, ids[0], false, nil); status(err) != 404 {
		t.Fatalf("read of a deleted object: %v", err)
	}
}
