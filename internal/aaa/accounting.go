package aaa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// Record is one accounting record: a commit, who made it, and what it
// changed; or a command line a user ran in the CLI (Line set).
type Record struct {
	Revision uint64
	Time     time.Time
	User     string
	Source   string // rest, cli, rollback, ...
	Comment  string
	Changes  []string // "create NtpServer IpAddr=192.0.2.10"

	// A CLI command's record: the line (secret values masked), the mode
	// and context it ran in, the CLI session's id and the command's number
	// in it, and the address the CLI called from ("" for a local socket).
	Line, Context, Session string
	Seq                    int64
	Addr                   string
}

// Command is the record as one line: what TACACS+ accounting calls the
// command, and what RADIUS accounting carries. For a CLI command, the
// command line.
func (r Record) Command() string {
	if r.Line != "" {
		return r.Line
	}
	var b strings.Builder
	fmt.Fprintf(&b, "commit revision %d (%s)", r.Revision, r.Source)
	for i, c := range r.Changes {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if i == 5 {
			fmt.Fprintf(&b, "and %d more", len(r.Changes)-i)
			break
		}
		b.WriteString(c)
	}
	return b.String()
}

// taskID names the record to the server: a commit's revision; a CLI
// command's session and number in it.
func (r Record) taskID() string {
	if r.Line == "" {
		return "rev-" + strconv.FormatUint(r.Revision, 10)
	}
	if r.Session == "" {
		return "cli-" + strconv.FormatInt(r.Seq, 10)
	}
	return "cli-" + r.Session + "-" + strconv.FormatInt(r.Seq, 10)
}

// what is the record in the log's words.
func (r Record) what() []any {
	if r.Line != "" {
		return []any{"command", r.taskID()}
	}
	return []any{"revision", r.Revision}
}

// accounting sends records through a bounded queue: a commit never waits
// for a server, and a record that cannot be queued or sent is counted.
//
// A record is given once to each method, in order: the first server of
// the method that acknowledges takes it. A server that refuses it (answers
// with an error) has answered: it is not asked again, and the next server
// of the method is. A method whose servers did not answer (connection
// refused, timed out) gets the record again later, from a retry queue of
// its own, so that the records behind it are not held up: at most
// attempts in all, retryWait apart.
type accounting struct {
	s       *Service
	queue   chan Record
	retries chan retry // records to give again to the methods that did not answer
	sent    atomic.Int64
	dropped atomic.Int64
	// retrying counts the records waiting for their next attempt: those in
	// retries and the one whose time the retrier waits for.
	retrying atomic.Int64
	wg       sync.WaitGroup
	// retryWait is how long a record waits before it is given again to
	// a method none of whose servers answered; attempts bounds how many
	// times it is given.
	retryWait time.Duration
	attempts  int

	mu      sync.Mutex
	servers map[string]*serverCounts // kind NUL ServerIp
}

// serverCounts are one server's accounting counters (its state).
type serverCounts struct {
	sent, refused, unanswered int64
}

// retry is a record waiting to be given again to the methods none of
// whose servers answered it.
type retry struct {
	r       Record
	methods []string // their names
	attempt int      // attempts made
	due     time.Time
	taken   bool // a method took it already: counted as sent
}

func newAccounting(s *Service, n int) *accounting {
	return &accounting{s: s, queue: make(chan Record, n), retries: make(chan retry, n), retryWait: time.Second, attempts: 3,
		servers: map[string]*serverCounts{}}
}

func (a *accounting) counters() model.Object {
	return model.Object{"AccountingSent": a.sent.Load(), "AccountingDropped": a.dropped.Load(), "AccountingQueued": int64(len(a.queue)),
		"AccountingRetrying": a.retrying.Load()}
}

// serverState is the accounting state of one server.
func (a *accounting) serverState(kind, server string) model.Object {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.servers[kind+"\x00"+server]
	if c == nil {
		c = &serverCounts{}
	}
	return model.Object{"AccountingSent": c.sent, "AccountingRefused": c.refused, "AccountingUnanswered": c.unanswered}
}

// note counts one exchange of a record with a server.
func (a *accounting) note(kind, server string, outcome func(*serverCounts)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.servers[kind+"\x00"+server]
	if c == nil {
		c = &serverCounts{}
		a.servers[kind+"\x00"+server] = c
	}
	outcome(c)
}

// revisionSummary is what a record needs of a revision record.
type revisionSummary struct {
	Revision uint64
	Time     string
	User     string
	Source   string
	Comment  string
	Changes  []struct{ Kind, Key, Op string }
}

// commit queues the record of one commit, if accounting is on and a
// server would take it.
func (a *accounting) commit(ev feed.Event) {
	c := a.s.cfg.Load()
	if !c.accounting || !c.accounts() {
		return
	}
	var rs revisionSummary
	if err := json.Unmarshal(ev.Data, &rs); err != nil {
		a.dropped.Add(1)
		a.s.o.Log.Warn("accounting record dropped: unreadable revision record", "revision", ev.Revision, "err", err)
		return
	}
	r := Record{Revision: rs.Revision, User: rs.User, Source: rs.Source, Comment: rs.Comment}
	r.Time, _ = time.Parse(time.RFC3339Nano, rs.Time)
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if r.User == "" {
		r.User = "local"
	}
	for _, ch := range rs.Changes {
		r.Changes = append(r.Changes, ch.Op+" "+ch.Kind+" "+ch.Key)
	}
	a.enqueue(r)
}

func (a *accounting) enqueue(r Record) bool {
	select {
	case a.queue <- r:
		return true
	default:
		a.dropped.Add(1)
		a.s.o.Log.Warn("accounting record dropped: the queue is full (servers slow or down)", append(r.what(), "user", r.User, "dropped", a.dropped.Load())...)
		return false
	}
}

// errQueueFull: a record was dropped (and counted) because the queue is
// full.
var errQueueFull = errors.New("the accounting queue is full (the servers are slow or down): the record is dropped and counted")

// command queues the record of a CLI command. queued is false when no
// server would take it (accounting off, or no server of AuthOrder takes
// accounting).
func (a *accounting) command(r Record) (queued bool, err error) {
	c := a.s.cfg.Load()
	if !c.accounting || !c.accounts() {
		return false, nil
	}
	if !a.enqueue(r) {
		return false, errQueueFull
	}
	return true, nil
}

// accounts reports whether a server would receive accounting records.
func (c *config) accounts() bool {
	for _, m := range c.methods {
		for _, srv := range m.servers {
			if srv.account != nil {
				return true
			}
		}
	}
	return false
}

func (a *accounting) start(ctx context.Context) {
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-a.queue:
				a.give(ctx, retry{r: r})
			}
		}
	}()
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case rt := <-a.retries:
				// In the order they failed, each retryWait after its last
				// attempt.
				t := time.NewTimer(time.Until(rt.due))
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				a.retrying.Add(-1)
				a.give(ctx, rt)
			}
		}
	}()
}

func (a *accounting) wait() { a.wg.Wait() }

// give makes one attempt of a record: it gives it to each method of rt
// (every method that takes accounting, on the first attempt). The record
// counts as sent when a method takes it; a method none of whose servers
// answered gets it again later, up to attempts; a record no method took,
// and none will, is counted as dropped and logged.
func (a *accounting) give(ctx context.Context, rt retry) {
	c := a.s.cfg.Load()
	if !c.accounting || !c.accounts() {
		return // turned off meanwhile
	}
	rt.attempt++
	var (
		again []string
		errs  []string
	)
	for _, m := range c.methods {
		if rt.methods != nil && !slices.Contains(rt.methods, m.name) {
			continue
		}
		took, unanswered := false, false
		for _, srv := range m.servers {
			if srv.account == nil {
				continue
			}
			err := srv.account(ctx, rt.r)
			switch {
			case err == nil:
				a.note(m.kind, srv.key, func(c *serverCounts) { c.sent++ })
				took = true
			case errors.Is(err, errRefused):
				a.note(m.kind, srv.key, func(c *serverCounts) { c.refused++ })
			default:
				a.note(m.kind, srv.key, func(c *serverCounts) { c.unanswered++ })
				unanswered = true
			}
			if took {
				break
			}
			errs = append(errs, srv.acctAddr+": "+err.Error())
		}
		switch {
		case took:
			if !rt.taken {
				rt.taken = true
				a.sent.Add(1)
			}
		case unanswered:
			again = append(again, m.name)
		}
	}
	if len(again) > 0 && rt.attempt < a.attempts && ctx.Err() == nil {
		rt.methods, rt.due = again, time.Now().Add(a.retryWait)
		a.retrying.Add(1)
		select {
		case a.retries <- rt:
			return
		default:
			a.retrying.Add(-1)
			errs = append(errs, "the retry queue is full")
		}
	}
	if rt.taken {
		if len(again) > 0 {
			a.s.o.Log.Warn("accounting record not taken by every method: "+strings.Join(again, ", ")+" did not answer", append(rt.r.what(), "user", rt.r.User, "errors", errs)...)
		}
		return
	}
	a.dropped.Add(1)
	a.s.o.Log.Warn("accounting record dropped: no server took it", append(rt.r.what(), "user", rt.r.User, "errors", errs, "dropped", a.dropped.Load())...)
}
