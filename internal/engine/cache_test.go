package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
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

// TestObjectCacheArena drives the cache with random commits, reader fills
// and evictions, and checks every entry against a plain map of what it
// should hold: the arena's offsets stay right through overwrites,
// tombstones, evictions and compactions, and a slice a reader took before
// a compaction still holds its bytes.
func TestObjectCacheArena(t *testing.T) {
	const maxEntries, ids = 200, 300
	ntp := &model.Kind{Name: "NtpServer"}
	vlan := &model.Kind{Name: "Vlan"}
	c := newObjCache(maxEntries)
	type want struct {
		kind    string
		public  string
		modRev  uint64
		deleted bool
	}
	expect := map[uuid.UUID]want{}
	var idList []uuid.UUID
	for i := range ids {
		idList = append(idList, uuid.UUID{byte(i), byte(i >> 8), 1})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// A big value makes the arena pass compactAt within the test.
	value := func(rev uint64, id uuid.UUID) string {
		return fmt.Sprintf(`{"Rev":%d,"Id":%q,"Pad":%q}`, rev, id, strings.Repeat("x", rng.IntN(8000)))
	}
	type held struct {
		b    []byte
		want string
	}
	var holds []held
	compactions := 0
	for rev := uint64(1); rev <= 3000; rev++ {
		if rng.IntN(4) == 0 { // a reader fills what it read at an older snapshot
			id := idList[rng.IntN(ids)]
			asOf := rev - 1
			if w, ok := expect[id]; ok && !w.deleted && asOf >= c.floor {
				before, had := c.index[id]
				c.fill(id, cacheEntry{kind: w.kind, public: []byte(w.public), modRev: w.modRev, asOf: asOf})
				if had && before.asOf >= asOf && c.index[id] != before {
					t.Fatalf("rev %d: a fill at %d replaced an entry true at %d", rev, asOf, before.asOf)
				}
			}
			continue
		}
		var changes []*change
		var publics [][]byte
		for range 1 + rng.IntN(3) {
			id := idList[rng.IntN(ids)]
			k := ntp
			if rng.IntN(2) == 0 {
				k = vlan
			}
			ch := &change{id: id}
			ch.Kind = k
			var public []byte
			if rng.IntN(5) == 0 {
				ch.Op = backend.Delete
				expect[id] = want{kind: k.Name, modRev: rev, deleted: true}
			} else {
				ch.Op = backend.Update
				public = []byte(value(rev, id))
				expect[id] = want{kind: k.Name, public: string(public), modRev: rev}
			}
			changes = append(changes, ch)
			publics = append(publics, public)
		}
		deadBefore := c.dead
		c.commit(rev, changes, publics)
		if deadBefore > 0 && c.dead == 0 {
			compactions++
		}
		if len(c.index) > maxEntries {
			t.Fatalf("rev %d: %d entries, more than %d", rev, len(c.index), maxEntries)
		}
		for id, s := range c.index {
			e := c.entry(s)
			w := expect[id]
			if e.deleted != w.deleted || e.modRev != w.modRev || (!w.deleted && (e.kind != w.kind || string(e.public) != w.public)) {
				t.Fatalf("rev %d: entry %v is %+v (public %.40q), want %+v", rev, id, s, e.public, w)
			}
		}
		if e, ok := c.get(idList[rng.IntN(ids)]); ok && !e.deleted {
			holds = append(holds, held{e.public, string(e.public)})
		}
	}
	if compactions == 0 {
		t.Fatal("the arena was never compacted: the test does not cover compaction")
	}
	for i, h := range holds {
		if string(h.b) != h.want {
			t.Fatalf("slice %d taken by a reader changed under it", i)
		}
	}
	// Dead bytes are bounded: at most as many as live ones past compactAt.
	if live := len(c.arena) - c.dead; c.dead > max(live, compactAt) {
		t.Fatalf("arena of %d bytes, %d dead", len(c.arena), c.dead)
	}
}

// TestObjectCacheHoldsNoPointers checks what keeps the full cache off the
// garbage collector's work: neither the index's keys nor its slots hold a
// pointer (a later field that did would make the GC scan every slot).
func TestObjectCacheHoldsNoPointers(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[uuid.UUID](), reflect.TypeFor[cacheSlot]()} {
		if p := pointerIn(typ); p != "" {
			t.Errorf("%v holds a pointer (%s): the GC would scan the cache's index", typ, p)
		}
	}
}

func pointerIn(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return ""
	case reflect.Array:
		return pointerIn(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if p := pointerIn(t.Field(i).Type); p != "" {
				return t.Field(i).Name + ": " + p
			}
		}
		return ""
	}
	return t.Kind().String()
}

// TestObjectCacheKeepsRefusedWrites checks that a commit the backend
// refuses leaves the cached object as it was: a read by id after the
// refusal returns the last committed value, not the refused one.
func TestObjectCacheKeepsRefusedWrites(t *testing.T) {
	f := newFixture(t, t.TempDir())
	k := f.kind("NtpServer")
	out := f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(5)}))
	id := out.IDs[0]
	if _, _, err := f.e.GetByID(context.Background(), k, id, false, nil); err != nil { // cached now
		t.Fatal(err)
	}
	f.fault = func(backend.Change) error { return errors.New("refused") }
	if _, err := f.apply(f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(7)})); err == nil {
		t.Fatal("the update went through the fault")
	}
	f.fault = nil
	got, _, err := f.e.GetByID(context.Background(), k, id, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"MinPoll":5`) {
		t.Fatalf("after a refused update the cache answers %s", got)
	}
}

// TestObjectCacheWarmsAtStart restarts an engine on a store of objects:
// the cache holds them once Start's warming is done, each exactly as the
// store has it, and a cache smaller than the store stops when full.
func TestObjectCacheWarmsAtStart(t *testing.T) {
	dir := t.TempDir()
	first := newFixture(t, dir)
	var ids []uuid.UUID
	for i := range 20 {
		out := first.mustApply(first.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.1." + strconv.Itoa(i+1)}))
		ids = append(ids, out.IDs[0])
	}
	first.e.Close()
	if err := first.st.Close(); err != nil {
		t.Fatal(err)
	}

	f := newFixture(t, dir)
	f.e.warming.Wait()
	k := f.kind("NtpServer")
	for _, id := range ids {
		e, ok := f.e.objects.get(id)
		if !ok {
			t.Fatalf("object %v is not in the cache after the start", id)
		}
		var stored []byte
		f.st.View(func(tx store.Txn) error {
			rec, _, err := tx.GetByID(id)
			stored = append(stored, rec.Public...)
			return err
		})
		if e.kind != k.Name || e.deleted || string(e.public) != string(stored) {
			t.Fatalf("object %v is cached as %+v (%s), stored as %s", id, e, e.public, stored)
		}
	}

	small := newObjCache(5)
	f.e.warming.Add(1)
	f.e.warmObjects(context.Background(), small)
	if n := len(small.index); n != 5 {
		t.Fatalf("a cache of 5 holds %d entries after warming", n)
	}
	// It stops at the end of its context: serve's, when the service stops.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	none := newObjCache(100)
	f.e.warming.Add(1)
	f.e.warmObjects(ctx, none)
	if n := len(none.index); n != 0 {
		t.Fatalf("warming with a finished context filled %d entries", n)
	}
}

// BenchmarkObjectCacheGC is the cost of one garbage collection with a full
// GET-by-id cache of 65,536 objects of 150 bytes live: empty (no cache),
// arena (objCache), and pointers (the same entries as the cache held them
// before its arena: a map of structs, each with its kind string and its
// own JSON slice). ns/op is one runtime.GC; a GET-by-id load starts a
// cycle every ~2 MiB of garbage when the live heap is small, every ~10 MiB
// with a full arena (docs/design.md, Reads).
//
//	go test -run '^$' -bench ObjectCacheGC ./internal/engine/
func BenchmarkObjectCacheGC(b *testing.B) {
	const entries, size = CachedObjects, 150
	public := []byte(`{"IpAddr":"10.0.0.1","MinPoll":6,"MaxPoll":10,"SourceIntf":"ma1","Prefer":false,"Pad":"` + strings.Repeat("x", size-90) + `"}`)
	type pointerEntry struct {
		kind   string
		public []byte
		modRev uint64
		asOf   uint64
		_      bool // the entry's deleted flag: the same layout
	}
	id := func(i int) uuid.UUID { return uuid.UUID{byte(i), byte(i >> 8), byte(i >> 16), 7} }
	for _, c := range []struct {
		name string
		fill func() any
	}{
		{"empty", func() any { return nil }},
		{"arena", func() any {
			c := newObjCache(entries)
			for i := range entries {
				c.fill(id(i), cacheEntry{kind: "NtpServer", public: public, modRev: 1, asOf: 1})
			}
			return c
		}},
		{"pointers", func() any {
			m := make(map[uuid.UUID]pointerEntry)
			for i := range entries {
				m[id(i)] = pointerEntry{kind: "NtpServer", public: append([]byte(nil), public...), modRev: 1, asOf: 1}
			}
			return m
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			held := c.fill()
			runtime.GC()
			for b.Loop() {
				runtime.GC()
			}
			runtime.KeepAlive(held)
		})
	}
}

// TestObjectCacheBulkCommit: a commit of far more objects than the cache
// holds (a restore) puts only its last ones, without first growing the
// index and the arena to hold them all; the others' older entries go, and
// a fill read before the commit is refused.
func TestObjectCacheBulkCommit(t *testing.T) {
	const max, n = 100, 5000
	k := &model.Kind{Name: "NtpServer"}
	public := []byte(`{"IpAddr":"10.0.0.1","MinPoll":6,"MaxPoll":10,"Pad":"` + strings.Repeat("x", 200) + `"}`)
	c := newObjCache(max)
	old := uuid.UUID{1}
	c.fill(old, cacheEntry{kind: k.Name, public: public, modRev: 1, asOf: 1})
	changes := make([]*change, n)
	publics := make([][]byte, n)
	for i := range changes {
		changes[i] = &change{Change: model.Change{Kind: k, Op: model.Create}, id: uuid.UUID{2, byte(i), byte(i >> 8)}}
		publics[i] = public
	}
	changes[0].id = old // updated by the commit, not among its last max
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.commit(2, changes, publics)
	runtime.ReadMemStats(&after)
	if len(c.index) > max {
		t.Fatalf("%d entries in a cache of %d", len(c.index), max)
	}
	if _, ok := c.get(old); ok {
		t.Fatal("an object the commit changed keeps its older entry")
	}
	for _, ch := range changes[n-max:] {
		if e, ok := c.get(ch.id); !ok || e.asOf != 2 || string(e.public) != string(public) {
			t.Fatalf("object %v of the commit's last is not cached: %+v", ch.id, e)
		}
	}
	c.fill(changes[1].id, cacheEntry{kind: k.Name, public: public, modRev: 1, asOf: 1})
	if _, ok := c.get(changes[1].id); ok {
		t.Fatal("a fill read before the commit went in")
	}
	// Held for all n, the arena alone would be n*len(public) bytes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(n*len(public)/4) {
		t.Fatalf("a commit of %d objects into a cache of %d allocated %d bytes", n, max, alloc)
	}
}
