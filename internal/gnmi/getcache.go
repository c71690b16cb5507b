package gnmi

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// getCache answers a Get of the configuration in the native origin (a
// /config path: one leaf, one object, or a few) from the last Get of the
// same path, as long as no commit has changed the objects of its kind
// since it was read: automation polls the same leaves, and parsing the
// path, reading the objects and building the paths and values of the
// answer again is most of what swmgr itself spends on such a Get. It is
// exact: an entry is tagged with engine.LastCommitOf its kind (LastCommit
// for a path of every kind) as it was before its read, and used only
// while that has the same value still (a commit changes it before it is
// answered). What is kept are the answers' updates, encoded (appended to
// a Get's answer as they are).
type getCache struct {
	mu      sync.RWMutex
	entries map[string]getEntry
	size    int // bytes held
}

type getEntry struct {
	updates []byte // encoded as a notification's field 4 (answer.appendUpdate)
	rev     uint64 // what the kind's last commit was before the read
}

// Bounds of the cache: a path's updates larger than maxCachedAnswer are
// not kept; past maxCachedGets entries or maxCachedBytes, it starts over.
const (
	maxCachedGets   = 4096
	maxCachedAnswer = 4 << 10
	maxCachedBytes  = 4 << 20
)

// get returns the updates kept for key if they were read while the last
// commit of their kind was rev.
func (c *getCache) get(key []byte, rev uint64) ([]byte, bool) {
	c.mu.RLock()
	e, ok := c.entries[string(key)]
	c.mu.RUnlock()
	if !ok || e.rev != rev {
		return nil, false
	}
	return e.updates, true
}

// put keeps a copy of updates for key, read after the last commit of
// their kind was rev (an entry read after a later one is kept instead).
func (c *getCache) put(key []byte, rev uint64, updates []byte) {
	n := len(updates)
	if n > maxCachedAnswer {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.entries[string(key)]
	switch {
	case had && old.rev > rev:
		return
	case had:
		c.size -= len(old.updates)
	case c.entries == nil || len(c.entries) >= maxCachedGets || c.size+n > maxCachedBytes:
		c.entries, c.size = make(map[string]getEntry), 0
	}
	c.entries[string(key)] = getEntry{updates: bytes.Clone(updates), rev: rev}
	c.size += n
}

// getCacheKey appends to dst the key of a Get of full path p, and reports
// whether such a Get may be answered from the cache: a native path under
// /config (the configuration only: read from the store, never from the
// backend) when the Get wants the configuration; kind is the path's kind
// as it names it ("*": every kind). The key holds the origin, the data
// type and the encoding, then each element's name and keys (in order of
// name), every string after its length: no two paths have one key.
func getCacheKey(dst []byte, p *gpb.Path, dt dataType, enc gpb.Encoding) (key []byte, kind string, ok bool) {
	elems := p.GetElem()
	if !dt.config || len(elems) < 2 || elems[0].GetName() != "config" || len(elems[0].GetKey()) > 0 {
		return dst, "", false
	}
	if o := p.GetOrigin(); o != OriginNative && o != "" {
		return dst, "", false
	}
	dst = appendString(dst, p.GetOrigin())
	dst = append(dst, byte(enc), boolByte(dt.state))
	dst = binary.AppendUvarint(dst, uint64(len(elems)))
	for _, e := range elems[1:] {
		dst = appendString(dst, e.GetName())
		keys := e.GetKey()
		dst = binary.AppendUvarint(dst, uint64(len(keys)))
		var buf [4]string
		names := buf[:0]
		for n := range keys {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			dst = appendString(appendString(dst, n), keys[n])
		}
	}
	return dst, elems[1].GetName(), true
}

// lastCommitOf is the engine's last commit of the kind a cacheable path
// names (getCacheKey's kind); of any kind for "*", or a name that is no
// kind (its Get fails and is not kept).
func (s *Server) lastCommitOf(kind string) uint64 {
	if kind != "*" {
		if k := s.kindNamed(false, kind); k != nil {
			return s.o.Engine.LastCommitOf(k)
		}
	}
	return s.o.Engine.LastCommit()
}

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
