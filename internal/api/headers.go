package api

import (
	"strconv"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/engine"
)

// headerValues keeps the header values of GET by ObjectId answers once
// made, so that a read in the engine's cache allocates none: a response's
// header map may share them, since net/http copies the values it writes
// and nobody modifies a value in place (as hdrJSON is shared).
type headerValues struct {
	lengths [4096]atomic.Pointer[headerValue] // Content-Length by length
	etags   [1024]atomic.Pointer[headerValue] // ETag by revision, the slot revision % 1024
}

// headerValue is one value of a header and what it was made for.
type headerValue struct {
	of  uint64
	arr [1]string
}

func (v *headerValue) get() []string { return v.arr[:] }

// contentLength is the Content-Length value of n bytes.
func (c *headerValues) contentLength(n int) []string {
	if n < 0 || n >= len(c.lengths) {
		return []string{strconv.Itoa(n)}
	}
	slot := &c.lengths[n]
	if v := slot.Load(); v != nil {
		return v.get()
	}
	v := &headerValue{of: uint64(n), arr: [1]string{strconv.Itoa(n)}}
	slot.Store(v)
	return v.get()
}

// etag is the ETag value of an object last modified at revision rev. One
// slot per residue: a hot object's ETag stays, others replace each other
// (a miss costs what making the value always cost).
func (c *headerValues) etag(rev uint64) []string {
	slot := &c.etags[rev%uint64(len(c.etags))]
	if v := slot.Load(); v != nil && v.of == rev {
		return v.get()
	}
	v := &headerValue{of: rev, arr: [1]string{engine.ETag(rev)}}
	slot.Store(v)
	return v.get()
}
