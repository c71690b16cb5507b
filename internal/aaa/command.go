package aaa

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/apierr"
)

// CommandAction is the action that takes the accounting record of a
// command line the CLI ran (declared in package model with
// RecordsCommands); its handler is the Provider's.
const CommandAction = "AccountCommand"

// The bound of command records per user: CommandRate a second, in bursts
// of CommandBurst (a pasted configuration of a few hundred lines).
const (
	CommandRate  = 32
	CommandBurst = 256
)

// Actions returns the handler of CommandAction, for the composition root
// to bind.
func (p *Provider) Actions() map[string]api.ActionHandler {
	return map[string]api.ActionHandler{CommandAction: p.accountCommand}
}

// accountCommand queues the record of one CLI command: the user is the
// request's (authenticated), never the body's; the line's secret values
// are masked again here, whatever the client did; the record waits in the
// accounting queue with the commits' (a server down delays nothing). It
// answers Queued false when no server takes accounting, 429 past the
// user's rate and 503 when the queue is full, both counted as dropped.
func (p *Provider) accountCommand(ctx context.Context, call api.ActionCall) (api.ActionResult, error) {
	s := p.svc.Load()
	if s == nil {
		return api.ActionResult{}, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, call.Kind.Name, "", "accounting is not started yet")
	}
	user := call.Meta.User
	if user == "" {
		user = "local"
	}
	now := time.Now()
	if !s.cmdRate.allow(user, now) {
		s.acct.dropped.Add(1)
		return api.ActionResult{}, apierr.New(http.StatusTooManyRequests, apierr.CodeTooManyAttempts, call.Kind.Name, "",
			"more than %d command records a second from %s: this one is dropped (and counted in AAAGlobal's AccountingDropped)", CommandRate, user)
	}
	addr := call.Meta.Addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	} else {
		addr = "" // a local socket
	}
	r := Record{
		Time: now, User: user, Source: call.Meta.Source, Addr: addr,
		Line:    p.Registry.MaskCommandLine(call.Fields.Str("Command")),
		Context: p.Registry.MaskCommandLine(call.Fields.Str("Context")),
		Session: call.Fields.Str("Session"), Seq: call.Fields.Int("Seq"),
	}
	queued, err := s.acct.command(r)
	if err != nil {
		return api.ActionResult{}, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, call.Kind.Name, "", "%v", err)
	}
	return api.ActionResult{Body: fmt.Appendf(nil, `{"Result":"Success","Queued":%t}`, queued)}, nil
}

// rateByUser is a token bucket per user name.
type rateByUser struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateByUser(rate, burst float64) *rateByUser {
	return &rateByUser{rate: rate, burst: burst, buckets: map[string]*bucket{}}
}

// allow takes a token of user's bucket, if there is one.
func (l *rateByUser) allow(user string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[user]
	if b == nil {
		if len(l.buckets) >= 4096 {
			// Forget the buckets that are full again: they hold nothing.
			for u, o := range l.buckets {
				if o.tokens+now.Sub(o.last).Seconds()*l.rate >= l.burst {
					delete(l.buckets, u)
				}
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[user] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
