package linux

import (
	"sync"
	"time"
)

// readCache is what a daemon last reported (chronyd's sources, lldpd's
// neighbors, the relay's counters): read again once older than valid (the
// backend's StateCache), or after forget (a change was applied), so that
// a listing of many objects asks the daemon once.
type readCache[T any] struct {
	mu    sync.Mutex
	at    time.Time
	value T
	valid time.Duration
}

func newReadCache[T any](valid time.Duration) readCache[T] { return readCache[T]{valid: valid} }

// get returns the value, read with read when it is stale.
func (c *readCache[T]) get(read func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) > c.valid {
		v, err := read()
		if err != nil {
			var zero T
			return zero, err
		}
		c.value, c.at = v, time.Now()
	}
	return c.value, nil
}

// forget makes the next get read.
func (c *readCache[T]) forget() {
	c.mu.Lock()
	c.at = time.Time{}
	c.mu.Unlock()
}
