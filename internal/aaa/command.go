package aaa

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
)

// CommandAction is the action that takes the accounting record of a
// command line the CLI ran (declared in package model with
// RecordsCommands); the Service's Provider runs it.
const CommandAction = "AccountCommand"

// The bound of command records per user: CommandRate a second, in bursts
// of CommandBurst (a pasted configuration of a few hundred lines).
const (
	CommandRate  = 32
	CommandBurst = 256
)

// accountCommand queues the record of one CLI command: the user is the
// request's (authenticated), never the body's; the line's secret values
// are masked again here, whatever the client did; the record waits in the
// accounting queue with the commits' (a server down delays nothing). It
// answers Queued false when no server takes accounting, 429 past the
// user's rate and 503 when the queue is full, both counted as dropped.
func (p serviceRows) accountCommand(ctx context.Context, call bind.Call) (bind.Result, error) {
	s := p.s
	user := call.Meta.User
	if user == "" {
		user = "local"
	}
	now := s.o.Now()
	if !s.cmdRate.allow(user, now) {
		s.acct.dropped.Add(1)
		return bind.Result{}, apierr.New(http.StatusTooManyRequests, apierr.CodeTooManyAttempts, call.Kind.Name, "",
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
		Line:    p.reg.MaskCommandLine(call.Fields.Str("Command")),
		Context: p.reg.MaskCommandLine(call.Fields.Str("Context")),
		Session: call.Fields.Str("Session"), Seq: call.Fields.Int("Seq"),
	}
	queued, err := s.acct.command(r)
	if err != nil {
		return bind.Result{}, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, call.Kind.Name, "", "%v", err)
	}
	return bind.Result{Value: commandQueued{Result: "Success", Queued: queued}}, nil
}

// commandQueued is CommandAction's answer: whether a server takes the
// record.
type commandQueued struct {
	Result string
	Queued bool
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
