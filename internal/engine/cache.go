package engine

import (
	"context"
	"math"
	"sync"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// objCache serves GET by ObjectId, the hottest read, from memory. It is
// exact, never stale:
//
//   - every commit writes each object it changed into the cache (its new
//     public JSON, or a tombstone), from a store hook that runs after the
//     commit is durable and in commit order, tagged with the commit's revision;
//   - a reader that missed fills the entry with what it read, tagged with its
//     snapshot's revision, and only if nothing newer is there;
//   - when the cache is full, evicting an entry raises a floor: fills read
//     before the evicted entry's revision are refused, so an eviction can
//     never let an older read back in.
//
// It holds no pointer the garbage collector must follow: the entries'
// JSON lies back to back in one byte arena, and the index maps a fixed-size
// key (the ObjectId) to a fixed-size slot (offsets, revisions, a kind
// number). A full cache (65,536 objects, ~10 MiB) is then three objects to
// the GC instead of 65,536 slices and strings to scan at every cycle; and,
// being live heap that costs no marking, it spaces the cycles that the
// request path's garbage (net/http's own, mostly) triggers.
type objCache struct {
	mu    sync.RWMutex
	index map[uuid.UUID]cacheSlot
	arena []byte // the public JSON of the entries; bytes in use never change
	dead  int    // bytes of arena that no slot points at any more
	kinds []string
	kindN map[string]uint16 // kind name -> its number in kinds, plus one
	floor uint64
	max   int
}

// cacheSlot locates an entry: its JSON is arena[off : off+n].
type cacheSlot struct {
	off, n  uint32
	modRev  uint64
	asOf    uint64 // the revision this entry is true at
	kind    uint16 // number in kinds, plus one; 0 for a deleted object
	deleted bool
}

// cacheEntry is an entry as callers see it. public is a slice of the arena:
// read-only, and valid for as long as the caller holds it (bytes in use
// are never overwritten; compaction copies them to a new arena).
type cacheEntry struct {
	kind    string
	public  []byte // nil for a deleted object
	modRev  uint64
	asOf    uint64
	deleted bool
}

// compactAt is the least arena size worth compacting: below it, dead bytes
// cost less than copying the live ones.
const compactAt = 1 << 20

func newObjCache(max int) *objCache {
	return &objCache{index: make(map[uuid.UUID]cacheSlot), kindN: make(map[string]uint16), max: max}
}

func (c *objCache) get(id uuid.UUID) (cacheEntry, bool) {
	c.mu.RLock()
	s, ok := c.index[id]
	var e cacheEntry
	if ok {
		e = c.entry(s)
	}
	c.mu.RUnlock()
	return e, ok
}

// entry is s as a cacheEntry; c.mu held.
func (c *objCache) entry(s cacheSlot) cacheEntry {
	e := cacheEntry{modRev: s.modRev, asOf: s.asOf, deleted: s.deleted}
	if s.kind != 0 {
		e.kind = c.kinds[s.kind-1]
	}
	if !s.deleted {
		e.public = c.arena[s.off : s.off+s.n : s.off+s.n]
	}
	return e
}

// fill records what a reader saw at its snapshot revision e.asOf. e.public
// is copied: it may be the store's memory, valid only in its transaction.
func (c *objCache) fill(id uuid.UUID, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.asOf < c.floor || len(c.index) >= c.max {
		return
	}
	if old, ok := c.index[id]; ok && old.asOf >= e.asOf {
		return
	}
	c.put(id, e)
	c.compact()
}

// commit records a commit's changes, made at revision rev.
// publics holds each change's stored public JSON, or is nil (then it is
// encoded from the change).
func (c *objCache) commit(rev uint64, changes []*change, publics [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A commit of more objects than the cache holds (a restore's 300,000)
	// puts only its last c.max: the others would be evicted at once, after
	// growing the index and the arena to hold them all. They are dropped
	// instead, which, like their eviction, raises the floor.
	if skip := len(changes) - c.max; skip > 0 {
		for _, ch := range changes[:skip] {
			if s, ok := c.index[ch.id]; ok {
				c.drop(ch.id, s)
			}
		}
		c.floor = max(c.floor, rev)
		changes = changes[skip:]
		if publics != nil {
			publics = publics[skip:]
		}
	}
	for i, ch := range changes {
		e := cacheEntry{kind: ch.Kind.Name, modRev: rev, asOf: rev}
		if publics != nil {
			e.public = publics[i]
		}
		if ch.Op == backend.Delete {
			e.deleted = true
			e.public = nil
		} else if e.public == nil {
			e.public = ch.Kind.AppendJSON(nil, ch.After, false)
		}
		c.put(ch.id, e)
	}
	for id, s := range c.index { // over the limit: drop entries, raising the floor
		if len(c.index) <= c.max {
			break
		}
		c.drop(id, s)
		c.floor = max(c.floor, s.asOf)
	}
	c.compact()
}

// put sets id's entry to e, copying e.public into the arena; c.mu held.
// An object too large for the arena's offsets is dropped instead (read
// from the store), which, like an eviction, raises the floor.
func (c *objCache) put(id uuid.UUID, e cacheEntry) {
	if old, ok := c.index[id]; ok {
		c.dead += int(old.n)
	}
	s := cacheSlot{modRev: e.modRev, asOf: e.asOf, deleted: e.deleted}
	if !e.deleted {
		if uint64(len(c.arena))+uint64(len(e.public)) > math.MaxUint32 {
			delete(c.index, id)
			c.floor = max(c.floor, e.asOf)
			return
		}
		s.kind = c.kindNumber(e.kind)
		s.off, s.n = uint32(len(c.arena)), uint32(len(e.public))
		c.arena = append(c.arena, e.public...)
	}
	c.index[id] = s
}

// drop removes id's entry; c.mu held.
func (c *objCache) drop(id uuid.UUID, s cacheSlot) {
	delete(c.index, id)
	c.dead += int(s.n)
}

func (c *objCache) kindNumber(name string) uint16 {
	n, ok := c.kindN[name]
	if !ok {
		c.kinds = append(c.kinds, name)
		n = uint16(len(c.kinds))
		c.kindN[name] = n
	}
	return n
}

// compact copies the entries in use to a new arena once most of the old
// one is dead; c.mu held. Readers still holding slices of the old arena
// keep it alive until they are done.
func (c *objCache) compact() {
	if len(c.arena) < compactAt || c.dead*2 < len(c.arena) {
		return
	}
	live := len(c.arena) - c.dead
	arena := make([]byte, 0, live+live/4)
	for id, s := range c.index {
		if s.deleted {
			continue
		}
		b := c.arena[s.off : s.off+s.n]
		s.off = uint32(len(arena))
		arena = append(arena, b...)
		c.index[id] = s
	}
	c.arena, c.dead = arena, 0
}

// warmChunk is how many objects warmObjects reads per read transaction: a
// long one would hold back the store's remapping when the file grows.
const warmChunk = 4096

// warmObjects fills c, the GET-by-id cache, from the store after a start,
// kind by kind in creation order, until it is full: reads by id are then
// served from memory from the start, as they are after the objects were
// written, and the process's heap does not depend on whether it restarted
// (the arena is the bulk of a steady heap, and the GC paces its cycles on
// it; see docs/design.md). Each object goes in as a reader's fill, tagged
// with its snapshot's revision, so a commit that lands meanwhile wins.
// Runs in the background from Start, until Close or the end of Start's
// ctx (serve's: the service stopping, before its store closes); Close
// waits for it.
func (e *Engine) warmObjects(ctx context.Context, c *objCache) {
	defer e.warming.Done()
	for _, k := range e.reg.Kinds() {
		if k.Class != model.Config {
			continue
		}
		for marker, more := uint64(0), true; more; {
			select {
			case <-e.stopLoop:
				return
			case <-ctx.Done():
				return
			default:
			}
			if c.full() {
				return
			}
			err := e.store.View(func(tx store.Txn) error {
				rev := tx.Revision()
				var err error
				marker, more, err = tx.List(k.Name, marker, warmChunk, func(rec store.Record) error {
					if isObject(rec.Public) { // a damaged one is read from the store, and refused there
						c.fill(rec.ID, cacheEntry{kind: k.Name, public: rec.Public, modRev: rec.ModRev, asOf: rev})
					}
					return nil
				})
				return err
			})
			if err != nil && ctx.Err() == nil { // reads by id still work, from the store
				e.log.Warn("cannot fill the object cache at start", "kind", k.Name, "err", err)
			}
			if err != nil {
				return
			}
		}
	}
}

// full reports whether c holds as many entries as it may.
func (c *objCache) full() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.index) >= c.max
}
