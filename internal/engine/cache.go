package engine

import (
	"sync"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
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
type objCache struct {
	mu    sync.RWMutex
	m     map[uuid.UUID]cacheEntry
	floor uint64
	max   int
}

type cacheEntry struct {
	kind    string
	public  []byte // nil for a deleted object
	modRev  uint64
	asOf    uint64 // the revision this entry is true at
	deleted bool
}

func newObjCache(max int) *objCache {
	return &objCache{m: make(map[uuid.UUID]cacheEntry), max: max}
}

func (c *objCache) get(id uuid.UUID) (cacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	return e, ok
}

// fill records what a reader saw at its snapshot revision e.asOf.
func (c *objCache) fill(id uuid.UUID, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.asOf < c.floor || len(c.m) >= c.max {
		return
	}
	if old, ok := c.m[id]; ok && old.asOf >= e.asOf {
		return
	}
	c.m[id] = e
}

// commit records a commit's changes, made at revision rev.
func (c *objCache) commit(rev uint64, changes []*change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		e := cacheEntry{kind: ch.Kind.Name, modRev: rev, asOf: rev}
		if ch.Op == backend.Delete {
			e.deleted = true
		} else if e.public = ch.public; e.public == nil {
			e.public = ch.Kind.AppendJSON(nil, ch.After, false)
		}
		c.m[ch.id] = e
	}
	for id, e := range c.m { // over the limit: drop entries, raising the floor
		if len(c.m) <= c.max {
			break
		}
		delete(c.m, id)
		c.floor = max(c.floor, e.asOf)
	}
}
