package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// DefaultReauthInterval is how often a held request is authorised again
// when nothing on the switch said its user changed (SessionOptions.Interval).
const DefaultReauthInterval = 5 * time.Minute

// reauthRetry is how soon an authorisation that could not be made (too many
// logins being checked, the accounts unreadable, a server error) is tried
// again, at most Interval.
const reauthRetry = 10 * time.Second

// SessionOptions configure Sessions.
type SessionOptions struct {
	// Verifier checks the credentials a held request presented, as a login
	// does: the central servers first, the local accounts when none
	// answers (VerifierOptions.Remote).
	Verifier *Verifier
	// Interval is how often a held request is authorised again although
	// nothing on the switch changed: a central server may stop accepting
	// its user at any time, and the host's accounts can be changed behind
	// swmgr's back. Default DefaultReauthInterval.
	Interval time.Duration
	Log      *slog.Logger
}

// Sessions ends long-lived requests (the change feed's streams, gNMI
// subscriptions) when their user's access ends. A request holds its
// identity (Hold, HoldRequest) and gets a context that is cancelled when
// that identity is no longer allowed what the request needs. The identity
// is authorised again, exactly as a new request with the same credentials
// would be:
//
//   - at once when its account changes on the switch (Changed: a User made
//     or deleted, a password set) or the central AAA configuration changes
//     (ChangedAll);
//   - every Interval, for what changes elsewhere (a central server that
//     stops accepting the user).
//
// A request that presented credentials is checked with them (Verifier:
// central servers, then the local accounts when no server answers; kept in
// memory only, for as long as the request lasts). A request without
// credentials from a local peer is its OS user's again (Peers: that user's
// User's role, or what local users who are not Users may do). A check that
// cannot be made (too many logins being checked, the accounts unreadable) ends
// nothing and is tried again shortly. The zero of *Sessions (nil) holds
// nothing: its contexts end only with their requests.
type Sessions struct {
	o      SessionOptions
	mu     sync.Mutex
	byName map[string]map[*session]struct{}
}

// NewSessions makes Sessions.
func NewSessions(o SessionOptions) *Sessions {
	if o.Interval <= 0 {
		o.Interval = DefaultReauthInterval
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Sessions{o: o, byName: map[string]map[*session]struct{}{}}
}

// session is one held request.
type session struct {
	s *Sessions
	// ctx is the held context: it carries the request's values (a local
	// peer's connection), and ends with the request or its revocation.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	name     string
	password string // "" for a local peer
	peer     *peerConn
	need     Need
	timer    *time.Timer

	mu                   sync.Mutex
	running, again, done bool
}

// revocation is the cause of a held context cancelled because its user's
// access ended.
type revocation struct{ err *apierr.Error }

func (r revocation) Error() string { return r.err.Message }

// Revoked is why ctx, a held context (Hold), ended because its user's
// access ended: a 401 (the credentials, or the local user, are no longer
// accepted) or a 403 (the user's role no longer allows the request); nil if
// it did not end that way.
func Revoked(ctx context.Context) *apierr.Error {
	var r revocation
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &r) {
		return r.err
	}
	return nil
}

// Hold holds a request authenticated with name and password (gNMI's
// metadata), which needs need, until the returned cancel is called: the
// returned context ends when the user's access ends.
func (s *Sessions) Hold(ctx context.Context, name, password string, need Need) (context.Context, context.CancelFunc) {
	return s.hold(ctx, name, password, nil, need)
}

// HoldRequest holds an HTTP request that Handler let through, which needs
// need, as Hold does: with its Basic credentials or its web session's, or as the local peer its
// connection comes from. A request that carries neither (the local admin
// of a listener without authentication) is never revoked.
func (s *Sessions) HoldRequest(r *http.Request, need Need) (context.Context, context.CancelFunc) {
	ctx := r.Context()
	if name, password, ok := r.BasicAuth(); ok {
		return s.hold(ctx, name, password, nil, need)
	}
	if name, password, ok := webCredentials(ctx); ok {
		return s.hold(ctx, name, password, nil, need)
	}
	if pc, ok := ctx.Value(identityKey{}).(*peerConn); ok && pc.peers != nil {
		return s.hold(ctx, pc.name, "", pc, need)
	}
	return context.WithCancel(ctx)
}

func (s *Sessions) hold(ctx context.Context, name, password string, peer *peerConn, need Need) (context.Context, context.CancelFunc) {
	if s == nil {
		return context.WithCancel(ctx)
	}
	held, cancel := context.WithCancelCause(ctx)
	x := &session{s: s, ctx: held, cancel: cancel, name: name, password: password, peer: peer, need: need}
	x.timer = time.AfterFunc(s.o.Interval, x.trigger)
	s.mu.Lock()
	set := s.byName[name]
	if set == nil {
		set = map[*session]struct{}{}
		s.byName[name] = set
	}
	set[x] = struct{}{}
	s.mu.Unlock()
	return held, func() { x.end(nil) }
}

// Changed authorises again, at once, every held request of the user
// name: its account changed (made, deleted, its password set).
func (s *Sessions) Changed(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for x := range s.byName[name] {
		x.trigger()
	}
}

// ChangedAll authorises again, at once, every held request: the central
// AAA configuration changed, so another server, or none, decides now.
func (s *Sessions) ChangedAll() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.byName {
		for x := range set {
			x.trigger()
		}
	}
}

// Len is how many requests are held.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, set := range s.byName {
		n += len(set)
	}
	return n
}

// trigger starts an authorisation of x, or, if one is under way (whose
// answer may predate the change that triggers this one), another after it.
func (x *session) trigger() {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.done:
	case x.running:
		x.again = true
	default:
		x.running = true
		go x.run()
	}
}

// run authorises x until no trigger came meanwhile, then ends it or waits
// for the next.
func (x *session) run() {
	for {
		refused, retry := x.s.authorise(x)
		if refused != nil {
			x.s.o.Log.Warn("stream closed: its user's access ended", "user", x.name, "local", x.peer != nil, "status", refused.Status, "reason", refused.Message)
			x.end(refused)
		}
		x.mu.Lock()
		if x.again && !x.done {
			x.again = false
			x.mu.Unlock()
			continue
		}
		x.running = false
		if !x.done {
			next := x.s.o.Interval
			if retry {
				next = min(next, reauthRetry)
			}
			x.timer.Reset(next)
		}
		x.mu.Unlock()
		return
	}
}

// end releases x: its context ends, with refused as the cause if its
// access ended.
func (x *session) end(refused *apierr.Error) {
	x.mu.Lock()
	if x.done {
		x.mu.Unlock()
		return
	}
	x.done = true
	x.timer.Stop()
	x.mu.Unlock()
	if refused != nil {
		x.cancel(revocation{refused})
	} else {
		x.cancel(context.Canceled)
	}
	s := x.s
	s.mu.Lock()
	if set := s.byName[x.name]; set != nil {
		delete(set, x)
		if len(set) == 0 {
			delete(s.byName, x.name)
		}
	}
	s.mu.Unlock()
}

// authorise checks x's identity again: refused says why its access ended;
// retry that the check could not be made, and should be tried again soon.
func (s *Sessions) authorise(x *session) (refused *apierr.Error, retry bool) {
	var id Identity
	if x.peer != nil {
		var err error
		id, err = x.peer.peers.identity(x.ctx)
		switch {
		case errors.Is(err, errNotAUser):
			return apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "%v; this stream is closed", err), false
		case err != nil:
			return s.cannotCheck(x, err)
		}
	} else {
		var ok bool
		var err error
		// Not from the cache: what a server answered within its cache
		// time is what is being asked again.
		id, ok, err = s.o.Verifier.Check(x.ctx, x.name, x.password, false)
		switch {
		case err != nil:
			return s.cannotCheck(x, err)
		case !ok:
			s.o.Verifier.Forget(x.name) // nor does a new request get in on the answer cached before
			return apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "user %s's access ended: the switch no longer accepts the credentials this stream was opened with (the User was deleted or its password set, or the central AAA server refused them); this stream is closed", x.name), false
		}
	}
	if !id.Role.May(x.need) {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "", "%s may no longer keep this stream open: that needs %s; this stream is closed", describe(id), x.need), false
	}
	return nil, false
}

// cannotCheck is the answer of a check that could not be made: the request
// goes on, and is checked again soon.
func (s *Sessions) cannotCheck(x *session, err error) (*apierr.Error, bool) {
	if x.ctx.Err() == nil {
		s.o.Log.Warn("cannot authorise a stream again; it goes on, and is checked again shortly", "user", x.name, "err", err)
	}
	return nil, true
}
