package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Login checks a user name and password the way every front end does (HTTP
// Basic credentials, gNMI's metadata): the throttle first (read-only), the
// Verifier's cache, then a counted attempt (Throttle.Begin) whose slow check
// runs under the Verifier's bound. A request whose credential is being
// checked for another one joins that check and makes no attempt of its own.
//
// It returns the identity, or an *apierr.Error: 401 for a wrong name or
// password, 429 while the name is locked out for addr (RetryAfter says how
// long), 503 when too many checks run or the accounts cannot be read. what
// describes the request in the log lines of a failure ("GET /path",
// "gNMI Set").
func Login(ctx context.Context, v *Verifier, t *Throttle, log *slog.Logger, name, password string, addr netip.Addr, what string) (Identity, *Refusal) {
	if wait := t.Wait(name, addr); wait > 0 {
		return Identity{}, tooManyRefusal(log, name, addr, wait)
	}
	if id, ok := v.Cached(name, password); ok {
		t.Succeeded(name, addr)
		return id, nil
	}
	id, ok, joined, err := v.Joined(ctx, name, password)
	attempt := &Attempt{} // ends nothing for a joined request
	if !joined {
		var wait time.Duration
		if attempt, wait = t.Begin(name, addr); wait > 0 {
			return Identity{}, tooManyRefusal(log, name, addr, wait)
		}
		id, ok, err = v.Check(WithClientAddr(ctx, addr), name, password, attempt.Trusted())
	}
	switch {
	case errors.Is(err, ErrBusy):
		attempt.End(Aborted)
		log.Warn("login refused: too many password checks under way", "user", name, "addr", addr.String(), "err", err)
		return Identity{}, &Refusal{Err: apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "", "%v", err), RetryAfter: time.Second, Hold: true}
	case err != nil:
		attempt.End(Aborted)
		log.Error("cannot check credentials", "user", name, "addr", addr.String(), "err", err)
		return Identity{}, &Refusal{Err: apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "",
			"the switch's accounts cannot be read; try again later")}
	case !ok:
		lock := attempt.EndFailed(v.Credential(name, password))
		log.Warn("login failed", "user", name, "addr", addr.String(), "request", what, "locked_for", lock.String())
		return Identity{}, &Refusal{Err: apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "wrong user name or password")}
	}
	if joined {
		t.Succeeded(name, addr)
	} else {
		attempt.End(Succeeded)
	}
	return id, nil
}

// Refusal is a login Login refused.
type Refusal struct {
	Err        *apierr.Error
	RetryAfter time.Duration // 429 and 503: when to try again
	// Hold says the answer should wait Options.RefusalDelay (a lockout, the
	// bound on checks), so that an attacker's connections wait instead of
	// coming back at once.
	Hold bool
}

// tooManyRefusal is the 429 of a locked-out attempt.
func tooManyRefusal(log *slog.Logger, name string, addr netip.Addr, wait time.Duration) *Refusal {
	secs := int((wait + time.Second - 1) / time.Second)
	log.Warn("login refused: too many failures", "user", name, "addr", addr.String(), "retry_after_s", secs)
	return &Refusal{Err: apierr.New(http.StatusTooManyRequests, apierr.CodeTooManyAttempts, "", "", "too many failed logins for %q from %s; try again in %d s", name, addr, secs),
		RetryAfter: time.Duration(secs) * time.Second, Hold: true}
}

// HoldRefusal waits d, or until ctx ends: a refused login (Refusal.Hold)
// is answered late, so that a storm of refused logins costs a few requests
// a second per connection rather than thousands.
func HoldRefusal(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
