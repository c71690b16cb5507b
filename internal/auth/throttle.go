package auth

import (
	"net/netip"
	"slices"
	"sync"
	"time"
)

// ThrottleOptions configure a Throttle.
type ThrottleOptions struct {
	MaxFailures int           // failures of one (name, address) within Window that lock it; default 5
	Window      time.Duration // default 5 minutes
	Lockout     time.Duration // the first lockout; default 1 minute
	MaxLockout  time.Duration // lockouts double up to this; default 15 minutes
	// UserBudget is how many failures of one user name, from all untrusted
	// addresses together, may happen within Window; past it, the name is
	// refused from every address but its trusted ones. Default 20.
	UserBudget int
	// TrustFor is how long an address stays trusted for a user name after
	// a successful login from it. Default 30 days.
	TrustFor   time.Duration
	MaxEntries int              // tracked pairs, names and trusted pairs, each; default 16384
	Now        func() time.Time // default time.Now
	// OnLockout, if set, is told of each lockout started (metrics).
	OnLockout func(d time.Duration)
}

// Throttle limits guessing. It counts an attempt when it starts (Begin), so
// a burst of concurrent guesses cannot pass it before the first failure is
// known:
//
//   - per (user name, client address): MaxFailures failures, or attempts
//     under way, within Window lock the pair for Lockout; each failure after
//     a lockout locks it again for twice as long, up to MaxLockout, and only
//     one attempt at a time is let through between lockouts. A success, or
//     Window without a failure after the last lockout, resets the pair.
//   - per user name, across addresses: UserBudget failures within Window
//     refuse the name from every address that is not trusted for it; an
//     address is trusted for a name for TrustFor after a successful login
//     from it, so the real user keeps getting in from where they usually
//     work while their name is attacked from elsewhere.
//
// A failure that repeats a credential that already failed for the pair
// (EndFailed) is not counted again: it guesses nothing new. A client that
// keeps sending one stale or refused credential (a scraper or a script
// whose password the central servers do not know) thus gets 401 on every
// request and never locks the name out at its address, nor spends the
// name's budget: the real user of that name, from that address or another,
// still gets in. Guessing needs new passwords, and each counts.
//
// Attempts that are refused are not counted. Memory is bounded by
// MaxEntries, whatever the attacker's concurrency or number of names.
type Throttle struct {
	opts ThrottleOptions

	mu      sync.Mutex
	m       map[throttleKey]*throttleState // per pair
	users   map[string]*userState
	trusted map[throttleKey]time.Time // last success
}

type throttleKey struct {
	name string
	addr netip.Addr
}

type throttleState struct {
	failures []time.Time // within Window, at most MaxFailures
	inflight int         // attempts begun and not ended
	level    int         // lockouts so far
	until    time.Time   // end of the current lockout
	// failed are the credentials that failed since the pair was last
	// reset, the latest MaxFailures: repeating one is not counted.
	failed []Credential
}

// Credential identifies a user name and password without holding either:
// Verifier.Credential's keyed hash.
type Credential [32]byte

type userState struct {
	failures []time.Time // from untrusted addresses, within Window, at most UserBudget
	inflight int         // untrusted attempts under way
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
	if opts.UserBudget <= 0 {
		opts.UserBudget = 20
	}
	if opts.TrustFor <= 0 {
		opts.TrustFor = 30 * 24 * time.Hour
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 16384
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Throttle{opts: opts, m: map[throttleKey]*throttleState{}, users: map[string]*userState{}, trusted: map[throttleKey]time.Time{}}
}

// retryBusy is the wait answered while other attempts of the same pair or
// name are under way: their outcome decides, within a second or so.
const retryBusy = time.Second

// Wait reports how long an attempt of name from addr would be refused; 0
// means it may go ahead. It changes nothing.
func (t *Throttle) Wait(name string, addr netip.Addr) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wait(throttleKey{name, addr}, t.opts.Now(), false)
}

// wait is Wait with mu held; starting says an attempt would begin now (so
// attempts under way count as failures to come).
func (t *Throttle) wait(k throttleKey, now time.Time, starting bool) time.Duration {
	if s := t.m[k]; s != nil {
		t.forgive(s, now)
		if d := s.until.Sub(now); d > 0 {
			return d
		}
		if starting {
			// Between lockouts, one attempt at a time; before the first,
			// no more at once than could fail before it locks.
			if s.level > 0 && s.inflight > 0 || s.level == 0 && recent(s.failures, now, t.opts.Window)+s.inflight >= t.opts.MaxFailures {
				return retryBusy
			}
		}
	}
	if t.isTrusted(k, now) {
		return 0
	}
	if u := t.users[k.name]; u != nil {
		n := recent(u.failures, now, t.opts.Window)
		if n >= t.opts.UserBudget {
			// Until the oldest counted failure leaves the window.
			return u.failures[len(u.failures)-n].Add(t.opts.Window).Sub(now)
		}
		if starting && n+u.inflight >= t.opts.UserBudget {
			return retryBusy
		}
	}
	return 0
}

func (t *Throttle) isTrusted(k throttleKey, now time.Time) bool {
	last, ok := t.trusted[k]
	return ok && now.Sub(last) < t.opts.TrustFor
}

// forgive resets a pair after a quiet Window following its last lockout.
func (t *Throttle) forgive(s *throttleState, now time.Time) {
	if s.level > 0 && now.Sub(s.until) >= t.opts.Window && s.inflight == 0 {
		*s = throttleState{}
	}
}

// recent is how many of the times (oldest first) are within window of now.
func recent(times []time.Time, now time.Time, window time.Duration) int {
	for i, f := range times {
		if now.Sub(f) < window {
			return len(times) - i
		}
	}
	return 0
}

// Attempt is a login attempt under way, counted from Begin until End.
type Attempt struct {
	t       *Throttle
	key     throttleKey
	trusted bool
}

// Trusted reports whether the attempt comes from an address where the user
// logged in successfully within TrustFor.
func (a *Attempt) Trusted() bool { return a.trusted }

// Outcome is how an attempt ended.
type Outcome int

const (
	Succeeded Outcome = iota + 1
	Failed            // a wrong name or password
	Aborted           // not decided (the check could not run): not counted
)

// Begin counts an attempt of name from addr that is about to check a
// password, or reports how long it is refused. Every Attempt must End.
func (t *Throttle) Begin(name string, addr netip.Addr) (*Attempt, time.Duration) {
	now := t.opts.Now()
	k := throttleKey{name, addr}
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.wait(k, now, true); d > 0 {
		return nil, d
	}
	a := &Attempt{t: t, key: k, trusted: t.isTrusted(k, now)}
	t.pair(k, now).inflight++
	if !a.trusted {
		t.user(name, now).inflight++
	}
	return a, 0
}

// End records how an attempt ended and returns the lockout a failure
// started, if any.
func (a *Attempt) End(o Outcome) time.Duration { return a.end(o, nil) }

// EndFailed records a failure of credential: End(Failed), except that a
// credential that already failed for the pair counts nothing.
func (a *Attempt) EndFailed(credential Credential) time.Duration { return a.end(Failed, &credential) }

func (a *Attempt) end(o Outcome, credential *Credential) time.Duration {
	t := a.t
	if t == nil { // a request that joined another's check: nothing to end
		return 0
	}
	now := t.opts.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[a.key] // nil only if pruned while under way
	if s != nil {
		s.inflight--
	}
	var u *userState
	if !a.trusted {
		if u = t.users[a.key.name]; u != nil {
			u.inflight--
		}
	}
	switch o {
	case Succeeded:
		if s != nil && s.inflight == 0 {
			delete(t.m, a.key)
		}
		if len(t.trusted) >= t.opts.MaxEntries {
			t.pruneTrusted(now)
		}
		t.trusted[a.key] = now
	case Failed:
		if credential != nil && s != nil && slices.Contains(s.failed, *credential) {
			return 0
		}
		if u != nil {
			u.failures = appendRecent(u.failures, now, t.opts.Window, t.opts.UserBudget)
		}
		if s == nil {
			s = t.pair(a.key, now)
		}
		t.forgive(s, now)
		s.failures = appendRecent(s.failures, now, t.opts.Window, t.opts.MaxFailures)
		if credential != nil {
			s.failed = append(s.failed, *credential)
			if len(s.failed) > t.opts.MaxFailures {
				s.failed = s.failed[1:]
			}
		}
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
	return 0
}

// appendRecent appends now to times, dropping those outside window and
// keeping at most max.
func appendRecent(times []time.Time, now time.Time, window time.Duration, max int) []time.Time {
	times = append(times[:0:0], times[len(times)-recent(times, now, window):]...)
	times = append(times, now)
	if len(times) > max {
		times = times[len(times)-max:]
	}
	return times
}

// Failed records a failed login that was not begun with Begin and returns
// the lockout it started, if any.
func (t *Throttle) Failed(name string, addr netip.Addr) time.Duration {
	k := throttleKey{name, addr}
	t.mu.Lock()
	a := &Attempt{t: t, key: k, trusted: t.isTrusted(k, t.opts.Now())}
	t.pair(k, t.opts.Now()).inflight++
	if !a.trusted {
		t.user(name, t.opts.Now()).inflight++
	}
	t.mu.Unlock()
	return a.End(Failed)
}

// Succeeded records a successful login that needed no check (a cached
// credential): it resets the pair and keeps the address trusted.
func (t *Throttle) Succeeded(name string, addr netip.Addr) {
	k := throttleKey{name, addr}
	now := t.opts.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[k]; s != nil && s.inflight == 0 {
		delete(t.m, k)
	}
	// Refreshed at most once a minute: a cached credential is used on
	// every request.
	if last, ok := t.trusted[k]; !ok || now.Sub(last) > time.Minute {
		if !ok && len(t.trusted) >= t.opts.MaxEntries {
			t.pruneTrusted(now)
		}
		t.trusted[k] = now
	}
}

// pair returns the state of a pair, made if need be. Called with mu held.
func (t *Throttle) pair(k throttleKey, now time.Time) *throttleState {
	s := t.m[k]
	if s == nil {
		if len(t.m) >= t.opts.MaxEntries {
			t.prune(now)
		}
		s = &throttleState{}
		t.m[k] = s
	}
	return s
}

// user returns the state of a name, made if need be. Called with mu held.
func (t *Throttle) user(name string, now time.Time) *userState {
	u := t.users[name]
	if u == nil {
		if len(t.users) >= t.opts.MaxEntries {
			t.pruneUsers(now)
		}
		u = &userState{}
		t.users[name] = u
	}
	return u
}

// prune makes room: it drops pairs that are not locked and have no recent
// failure, then, if need be, pairs that are not locked, then any but those
// with attempts under way. Called with mu held.
func (t *Throttle) prune(now time.Time) {
	target := t.opts.MaxEntries * 3 / 4
	for pass := 0; pass < 3 && len(t.m) > target; pass++ {
		for k, s := range t.m {
			if len(t.m) <= target {
				break
			}
			if s.inflight > 0 {
				continue
			}
			locked := now.Before(s.until)
			fresh := recent(s.failures, now, t.opts.Window) > 0
			if pass == 2 || pass == 1 && !locked || !locked && !fresh {
				delete(t.m, k)
			}
		}
	}
}

// pruneUsers drops names without recent failures, then names with the
// fewest. Called with mu held.
func (t *Throttle) pruneUsers(now time.Time) {
	target := t.opts.MaxEntries * 3 / 4
	for pass := 0; pass < 2 && len(t.users) > target; pass++ {
		for name, u := range t.users {
			if len(t.users) <= target {
				break
			}
			if u.inflight > 0 {
				continue
			}
			n := recent(u.failures, now, t.opts.Window)
			if n == 0 || pass == 1 && n < t.opts.UserBudget {
				delete(t.users, name)
			}
		}
	}
}

// pruneTrusted drops expired trust, then the oldest quarter. Called with mu
// held.
func (t *Throttle) pruneTrusted(now time.Time) {
	for k, last := range t.trusted {
		if now.Sub(last) >= t.opts.TrustFor {
			delete(t.trusted, k)
		}
	}
	if len(t.trusted) < t.opts.MaxEntries*3/4 {
		return
	}
	var oldest time.Time
	for _, last := range t.trusted {
		if oldest.IsZero() || last.Before(oldest) {
			oldest = last
		}
	}
	cut := oldest.Add(now.Sub(oldest) / 4)
	for k, last := range t.trusted {
		if !last.After(cut) {
			delete(t.trusted, k)
		}
	}
}
