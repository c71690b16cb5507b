package auth

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// ThrottleOptions configure a Throttle.
type ThrottleOptions struct {
	MaxFailures int              // failures within Window that lock; default 5
	Window      time.Duration    // default 5 minutes
	Lockout     time.Duration    // the first lockout; default 1 minute
	MaxLockout  time.Duration    // lockouts double up to this; default 15 minutes
	MaxEntries  int              // tracked (name, address) pairs; default 65536
	Now         func() time.Time // default time.Now
	// OnLockout, if set, is told of each lockout started (metrics).
	OnLockout func(d time.Duration)
}

// Throttle limits failed logins per user name and client address. After
// MaxFailures failures within Window, the pair is locked out for Lockout;
// each failure after a lockout locks it again for twice as long, up to
// MaxLockout. A success, or Window without a failure after the last
// lockout, resets the pair. Attempts during a lockout are refused without
// checking the password (and are not counted).
type Throttle struct {
	opts ThrottleOptions

	n  atomic.Int64 // len(m): a success skips the lock when nothing is tracked
	mu sync.Mutex
	m  map[throttleKey]*throttleState
}

type throttleKey struct {
	name string
	addr netip.Addr
}

type throttleState struct {
	failures []time.Time // within Window
	level    int         // lockouts so far
	until    time.Time   // end of the current lockout
}

// NewThrottle makes a Throttle.
func NewThrottle(opts ThrottleOptions) *Throttle {
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = 5
	}
	if opts.Window <= 0 {
		opts.Window = 5 * time.Minute
	}
	if opts.Lockout <= 0 {
		opts.Lockout = time.Minute
	}
	if opts.MaxLockout <= 0 {
		opts.MaxLockout = 15 * time.Minute
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 65536
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Throttle{opts: opts, m: map[throttleKey]*throttleState{}}
}

// Wait reports how long a user name is still locked out for an address; 0
// means an attempt may go ahead.
func (t *Throttle) Wait(name string, addr netip.Addr) time.Duration {
	if t.n.Load() == 0 {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[throttleKey{name, addr}]
	if s == nil {
		return 0
	}
	if d := s.until.Sub(t.opts.Now()); d > 0 {
		return d
	}
	return 0
}

// Failed records a failed login and returns the lockout it started, if any.
func (t *Throttle) Failed(name string, addr netip.Addr) time.Duration {
	now := t.opts.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	k := throttleKey{name, addr}
	s := t.m[k]
	if s == nil {
		if len(t.m) >= t.opts.MaxEntries {
			t.prune(now)
		}
		s = &throttleState{}
		t.m[k] = s
		t.n.Store(int64(len(t.m)))
	}
	if s.level > 0 && now.Sub(s.until) >= t.opts.Window {
		*s = throttleState{} // forgiven after a quiet window
	}
	kept := s.failures[:0]
	for _, f := range s.failures {
		if now.Sub(f) < t.opts.Window {
			kept = append(kept, f)
		}
	}
	s.failures = append(kept, now)
	if s.level == 0 && len(s.failures) < t.opts.MaxFailures {
		return 0
	}
	d := t.opts.MaxLockout
	if s.level < 30 && t.opts.Lockout<<s.level < d {
		d = t.opts.Lockout << s.level
	}
	s.level++
	s.until = now.Add(d)
	if t.opts.OnLockout != nil {
		t.opts.OnLockout(d)
	}
	return d
}

// Succeeded resets a user name's failures from an address.
func (t *Throttle) Succeeded(name string, addr netip.Addr) {
	if t.n.Load() == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, throttleKey{name, addr})
	t.n.Store(int64(len(t.m)))
}

// prune makes room: it drops pairs that are not locked and have no recent
// failure, then, if need be, pairs that are not locked, then any. Called
// with mu held.
func (t *Throttle) prune(now time.Time) {
	target := t.opts.MaxEntries * 3 / 4
	for pass := 0; pass < 3 && len(t.m) > target; pass++ {
		for k, s := range t.m {
			if len(t.m) <= target {
				break
			}
			locked := now.Before(s.until)
			recent := len(s.failures) > 0 && now.Sub(s.failures[len(s.failures)-1]) < t.opts.Window
			if pass == 2 || pass == 1 && !locked || !locked && !recent {
				delete(t.m, k)
			}
		}
	}
	t.n.Store(int64(len(t.m)))
}
