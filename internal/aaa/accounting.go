package aaa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
		return strconv.FormatUint(r.Revision, 10)
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
type accounting struct {
	s       *Service
	queue   chan Record
	sent    atomic.Int64
	dropped atomic.Int64
	wg      sync.WaitGroup
	// retryWait is how long a record waits before it is sent again, after
	// no server took it; three attempts in all.
	retryWait time.Duration
}

func newAccounting(s *Service, n int) *accounting {
	return &accounting{s: s, queue: make(chan Record, n), retryWait: time.Second}
}

func (a *accounting) counters() model.Object {
	return model.Object{"AccountingSent": a.sent.Load(), "AccountingDropped": a.dropped.Load(), "AccountingQueued": int64(len(a.queue))}
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
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-a.queue:
				a.send(ctx, r)
			}
		}
	}()
}

func (a *accounting) wait() { a.wg.Wait() }

// send gives r to the first server of each method that takes it, trying
// three times; a record no server took is counted as dropped and logged.
func (a *accounting) send(ctx context.Context, r Record) {
	var errs []string
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				a.dropped.Add(1)
				return
			case <-time.After(a.retryWait):
			}
		}
		c := a.s.cfg.Load()
		if !c.accounting || !c.accounts() {
			return // turned off meanwhile
		}
		errs = errs[:0]
		took := false
		for _, m := range c.methods {
			for _, srv := range m.servers {
				if srv.account == nil {
					continue
				}
				err := srv.account(ctx, r)
				if err == nil {
					took = true
					break
				}
				errs = append(errs, srv.acctAddr+": "+err.Error())
			}
		}
		if took {
			a.sent.Add(1)
			return
		}
	}
	a.dropped.Add(1)
	a.s.o.Log.Warn("accounting record dropped: no server took it", append(r.what(), "user", r.User, "errors", errs, "dropped", a.dropped.Load())...)
}
