package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
)

// CheckFunc checks a user name and password against the accounts: it
// reports the user's group when they match. It is slow (a yescrypt check
// costs tens of milliseconds).
type CheckFunc func(ctx context.Context, name, password string) (group string, ok bool, err error)

// VerifierOptions configure a Verifier.
type VerifierOptions struct {
	TTL        time.Duration    // how long a verified credential is trusted; default 30 s
	MaxEntries int              // cache bound; default 4096
	Now        func() time.Time // default time.Now
	// Checks is how many password checks may run at once (each costs
	// tens of milliseconds of CPU and, for yescrypt, 16 MiB); default
	// max(1, GOMAXPROCS-1), so that a storm of guesses leaves a CPU to
	// serve everyone else. One more is kept for priority checks (Check's
	// priority: a login from a trusted address).
	Checks int
	// Queue is how many checks may wait for a turn, and QueueWait how long
	// each may wait; past either, Check answers ErrBusy at once. Defaults
	// 32 and 2 s.
	Queue     int
	QueueWait time.Duration
	// Remote, if set, checks a credential with the central servers first
	// (package aaa). Its answer, yes or no, is final and cached for the
	// TTL it gives (0: not cached); only when it says no server answered
	// are the accounts checked. It takes no turn among Checks: it waits on
	// the network, bounded by its own limits, so a slow server holds no
	// other login.
	Remote RemoteFunc
}

// RemoteFunc checks a credential with the central servers. The client's
// address, when the check is a login's, is ClientAddr(ctx).
type RemoteFunc func(ctx context.Context, name, password string) (RemoteResult, error)

type clientAddrKey struct{}

// WithClientAddr attaches the address of the client that logs in to ctx
// (Login does), for the remote check: it is sent to the central servers
// and bounds one client's checks.
func WithClientAddr(ctx context.Context, addr netip.Addr) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// ClientAddr is the address WithClientAddr attached; the zero Addr if none.
func ClientAddr(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(clientAddrKey{}).(netip.Addr)
	return a
}

// RemoteResult is what the central servers said.
type RemoteResult struct {
	Answered bool   // false: no server answered (or none is configured)
	OK       bool   // the server accepted the credential
	Group    string // the role it gave, as a group name: admin, operator, read-only
	TTL      time.Duration
}

// ErrBusy is returned when too many password checks are running or waiting:
// the request is refused rather than queued without bound.
var ErrBusy = errors.New("too many logins are being checked; try again in a second")

// Busy is ErrBusy in cause's words (which bound refused the check, and for
// whom): errors.Is(Busy(cause), ErrBusy) holds, and its message is cause's.
func Busy(cause error) error { return &busyError{cause} }

type busyError struct{ cause error }

func (e *busyError) Error() string        { return e.cause.Error() }
func (e *busyError) Is(target error) bool { return target == ErrBusy }
func (e *busyError) Unwrap() error        { return e.cause }

// Verifier checks credentials, keeping those it verified for a short while
// so that a client sending the same Basic credentials on every request pays
// for the hash check once. The cache is keyed by an HMAC-SHA256, under a
// random key made at start, of the user name and password: it never holds a
// password or anything from which one could be checked offline. Forget drops
// a user's entries at once (a password change, a deletion).
//
// Password checks are bounded: at most Checks run at once (plus one for
// priority checks), at most Queue wait, none for longer than QueueWait; the
// rest get ErrBusy. So memory and CPU spent on logins do not grow with an
// attacker's concurrency, and a login from a trusted address always has a
// turn of its own.
type Verifier struct {
	check CheckFunc
	opts  VerifierOptions
	macs  sync.Pool // hash.Hash: HMAC-SHA256 under key

	slots    chan struct{} // a token per running check
	priority chan struct{} // the priority slot
	waiting  atomic.Int32

	mu       sync.RWMutex
	cache    map[[sha256.Size]byte]cached
	gen      uint64                         // bumped by Forget: a check that raced with it is not cached
	inflight map[[sha256.Size]byte]*pending // checks under way: the same credential is checked once
}

// pending is a check under way; done is closed when its result is set.
type pending struct {
	name  string
	done  chan struct{}
	group string
	ok    bool
	err   error
}

type cached struct {
	name, group string
	expires     time.Time
}

// NewVerifier makes a Verifier over check.
func NewVerifier(check CheckFunc, opts VerifierOptions) *Verifier {
	if opts.TTL <= 0 {
		opts.TTL = 30 * time.Second
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 4096
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Checks <= 0 {
		opts.Checks = max(1, runtime.GOMAXPROCS(0)-1)
	}
	if opts.Queue <= 0 {
		opts.Queue = 32
	}
	if opts.QueueWait <= 0 {
		opts.QueueWait = 2 * time.Second
	}
	key := make([]byte, 32)
	rand.Read(key) // never fails on Linux
	v := &Verifier{check: check, opts: opts, cache: map[[sha256.Size]byte]cached{}, inflight: map[[sha256.Size]byte]*pending{},
		slots: make(chan struct{}, opts.Checks), priority: make(chan struct{}, 1)}
	v.macs.New = func() any { return hmac.New(sha256.New, key) }
	return v
}

// key is the cache key of a credential.
func (v *Verifier) key(name, password string) [sha256.Size]byte {
	m := v.macs.Get().(hash.Hash)
	m.Reset()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(name)))
	m.Write(n[:])
	m.Write([]byte(name))
	m.Write([]byte(password))
	var k [sha256.Size]byte
	m.Sum(k[:0])
	v.macs.Put(m)
	return k
}

// Credential is the keyed hash of a user name and password the throttle
// remembers failures by (Attempt.EndFailed): it is no use offline, and the
// key dies with the process.
func (v *Verifier) Credential(name, password string) Credential {
	return Credential(v.key(name, password))
}

// Verify checks a user name and password and returns the user's identity:
// Cached, else Check without priority.
func (v *Verifier) Verify(ctx context.Context, name, password string) (Identity, bool, error) {
	if id, ok := v.Cached(name, password); ok {
		return id, true, nil
	}
	return v.Check(ctx, name, password, false)
}

// Cached returns the identity of a credential verified within TTL. It costs
// an HMAC, and no password check.
func (v *Verifier) Cached(name, password string) (Identity, bool) {
	k := v.key(name, password)
	v.mu.RLock()
	c, hit := v.cache[k]
	v.mu.RUnlock()
	if hit && c.name == name && v.opts.Now().Before(c.expires) {
		return Identity{Name: name, Group: c.group, Role: RoleOf(c.group)}, true
	}
	return Identity{}, false
}

// Joined waits for the check of the same credential already under way, if
// there is one, and returns its result (joined true): a client sending
// several requests at once with one credential makes one attempt, not one
// per request. joined false means no such check was under way.
func (v *Verifier) Joined(ctx context.Context, name, password string) (id Identity, ok, joined bool, err error) {
	k := v.key(name, password)
	v.mu.Lock()
	p := v.inflight[k]
	v.mu.Unlock()
	if p == nil {
		return Identity{}, false, false, nil
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return Identity{}, false, true, ctx.Err()
	}
	if p.err != nil || !p.ok {
		return Identity{}, false, true, p.err
	}
	return Identity{Name: name, Group: p.group, Role: RoleOf(p.group)}, true, true, nil
}

// Check checks a credential against the accounts (the slow check), once for
// concurrent requests with the same credential, and caches it if right. An
// error means the check did not run: ErrBusy (too many checks; the
// priority ones have a slot of their own), the context's, or the accounts
// could not be read. ok false is a wrong name or password.
func (v *Verifier) Check(ctx context.Context, name, password string, priority bool) (Identity, bool, error) {
	k := v.key(name, password)
	v.mu.Lock()
	gen := v.gen
	if p := v.inflight[k]; p != nil {
		// Concurrent requests with the same credentials (a client opening
		// several connections) wait for one check.
		v.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			return Identity{}, false, ctx.Err()
		}
		if p.err != nil || !p.ok {
			return Identity{}, false, p.err
		}
		return Identity{Name: name, Group: p.group, Role: RoleOf(p.group)}, true, nil
	}
	p := &pending{name: name, done: make(chan struct{})}
	v.inflight[k] = p
	v.mu.Unlock()

	ttl, answered := v.opts.TTL, false
	if v.opts.Remote != nil {
		r, err := v.opts.Remote(context.WithoutCancel(ctx), name, password)
		switch {
		case err != nil:
			p.err, answered = err, true
		case r.Answered:
			p.group, p.ok, ttl, answered = r.Group, r.OK, r.TTL, true
		}
	}
	if !answered {
		release, err := v.acquire(ctx, priority)
		if err == nil {
			p.group, p.ok, p.err = v.check(context.WithoutCancel(ctx), name, password)
			release()
		} else {
			p.err = err
		}
	}
	now := v.opts.Now()
	v.mu.Lock()
	if v.inflight[k] == p {
		delete(v.inflight, k)
	}
	if p.err == nil && p.ok && v.gen == gen && ttl > 0 {
		if len(v.cache) >= v.opts.MaxEntries {
			v.prune(now)
		}
		v.cache[k] = cached{name: name, group: p.group, expires: now.Add(ttl)}
	}
	v.mu.Unlock()
	close(p.done)
	if p.err != nil || !p.ok {
		return Identity{}, false, p.err
	}
	return Identity{Name: name, Group: p.group, Role: RoleOf(p.group)}, true, nil
}

// acquire takes a turn to check a password: a free slot at once, the
// priority slot for a priority check, or a slot freed within QueueWait if
// fewer than Queue are waiting.
func (v *Verifier) acquire(ctx context.Context, priority bool) (release func(), err error) {
	fromSlots := func() { <-v.slots }
	fromPriority := func() { <-v.priority }
	select {
	case v.slots <- struct{}{}:
		return fromSlots, nil
	default:
	}
	var prio chan struct{} // nil: never ready
	if priority {
		prio = v.priority
		select {
		case prio <- struct{}{}:
			return fromPriority, nil
		default:
		}
	}
	if v.waiting.Add(1) > int32(v.opts.Queue) {
		v.waiting.Add(-1)
		return nil, ErrBusy
	}
	defer v.waiting.Add(-1)
	timer := time.NewTimer(v.opts.QueueWait)
	defer timer.Stop()
	select {
	case v.slots <- struct{}{}:
		return fromSlots, nil
	case prio <- struct{}{}:
		return fromPriority, nil
	case <-timer.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prune drops expired entries, and if that is not enough, any entries, to
// make room. Called with mu held.
func (v *Verifier) prune(now time.Time) {
	for k, c := range v.cache {
		if !now.Before(c.expires) {
			delete(v.cache, k)
		}
	}
	for k := range v.cache {
		if len(v.cache) < v.opts.MaxEntries*3/4 {
			break
		}
		delete(v.cache, k)
	}
}

// Forget drops every cached credential of a user: the next request checks
// the accounts again.
func (v *Verifier) Forget(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gen++
	for k, c := range v.cache {
		if c.name == name {
			delete(v.cache, k)
		}
	}
	for k, p := range v.inflight {
		if p.name == name {
			delete(v.inflight, k) // later requests check again
		}
	}
}

// ForgetAll drops every cached credential: the central servers' answers
// are not to be trusted once their configuration changed.
func (v *Verifier) ForgetAll() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.gen++
	clear(v.cache)
	clear(v.inflight) // later requests check again
}

// CacheLen is how many credentials the cache holds.
func (v *Verifier) CacheLen() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.cache)
}

// AccountsCheck is a CheckFunc over the switch's accounts that accepts only
// the users known reports (the User objects: an account of the OS that is
// not a User, such as root, cannot log in to swmgr).
func AccountsCheck(a accounts.Accounts, known func(ctx context.Context, name string) (bool, error)) CheckFunc {
	return func(ctx context.Context, name, password string) (string, bool, error) {
		ok, group, err := a.Verify(ctx, name, password)
		if err != nil || !ok {
			return "", false, err
		}
		if known != nil {
			if ok, err := known(ctx, name); err != nil || !ok {
				return "", false, err
			}
		}
		return group, true, nil
	}
}
