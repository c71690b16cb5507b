package gnmi

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/feed"
)

// fanout is the server's one follower of the change feed, for every
// ON_CHANGE subscription of configuration. It takes each commit as soon
// as the engine publishes it (the commit is durable then; no flush timer),
// decodes it once, and hands it to each group of subscriptions alike (the
// same path, encoding and target: subscription.key). A group builds one
// notification of the commits it has taken, encodes it once, and queues
// the same encoded message on each member's sender; it takes the next
// commits once that message has been sent to every member that was free
// to send it. So the commits that arrive while a send is in progress make
// the next notification together: at a few commits a second each commit
// is sent on its own at once; under a sustained load (BusyRate) a group
// also leaves a gap between its notifications (nextGap). 100 subscribers
// to one path cost one notification's building and encoding and 100
// sends.
//
// Nothing of this runs on the commit path: publishing signals the follower
// and returns. A member whose sender is still busy with earlier
// notifications gets the next one queued without the group waiting for
// it; its queue is bounded (sender), and a member that fills it is cut
// off.
type fanout struct {
	s    *Server
	once sync.Once
	// ctx is the server's for as long as it serves (set by start): the
	// read of the objects membership leaves gather runs with it, not with
	// the context of the member that happened to make the first group.
	ctx    context.Context
	mu     sync.Mutex
	groups map[string]*group
	// memberState is read when the first group starts, kept by the
	// follower while any group lives, dropped with the last.
	state   *memberState
	members int          // attached, for Server.feedSubscribers
	builds  atomic.Int64 // notifications built and encoded
}

// maxPending is how many commits a group may have waiting to be built
// into a notification before its members are cut off (the server itself
// cannot keep up); the change feed keeps as many.
const maxPending = feed.EventBuffer

// maxFanoutWait bounds how long a group waits for one notification's
// sends before it takes the next commits: a member whose send is held
// longer (gRPC's flow control) gets the next notification queued, and the
// others do not wait for it.
const maxFanoutWait = 250 * time.Millisecond

var (
	errBehind      = status.Error(codes.ResourceExhausted, "cut off: swmgr's notifications fell behind the change feed's kept commits (commits came faster than they could be sent); subscribe again")
	errGroupBehind = status.Errorf(codes.ResourceExhausted, "cut off: the notifications of this path fell %d commits behind the change feed (commits came faster than they could be sent); subscribe again", maxPending)
)

// start follows the change feed from now on, until the server stops.
func (f *fanout) start() {
	f.once.Do(func() {
		sub := f.s.o.Engine.Feed().Follow()
		ctx, cancel := context.WithCancel(context.Background())
		f.ctx = ctx
		go func() { <-f.s.stop; cancel() }()
		go sub.Watch(ctx, f.take)
	})
}

// take hands the commits of one signal of the change feed to every group.
func (f *fanout) take(events []feed.Event, dropped bool) {
	f.mu.Lock()
	groups := make([]*group, 0, len(f.groups))
	for _, g := range f.groups {
		groups = append(groups, g)
	}
	state := f.state
	if dropped {
		f.state = nil // read again by the next group to start
	}
	f.mu.Unlock()
	if dropped {
		// The commits between are lost: every member would miss them.
		for _, g := range groups {
			g.cut(errBehind)
		}
		return
	}
	if len(groups) == 0 || len(events) == 0 {
		return
	}
	decoded := make([]*decodedEvent, len(events))
	for i, ev := range events {
		decoded[i] = decode(ev)
		state.apply(ev.Revision, decoded[i])
	}
	for _, g := range groups {
		g.add(decoded)
	}
}

// join adds a subscription's sender to its group (made on first use).
// The member holds what the group sends it until start: the subscription's
// initial values go first.
func (f *fanout) join(sc *subscription, out *sender, stream grpc.ServerStream, prefix *gpb.Path, enc gpb.Encoding) (*member, error) {
	f.start()
	m := &member{out: out, stream: stream}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups == nil {
		f.groups = map[string]*group{}
	}
	if f.state == nil {
		// Read before any group takes a commit after it: a commit it
		// does not hold was published after it.
		st, err := f.s.readMembers(f.ctx)
		if err != nil {
			return nil, err
		}
		f.state = st
	}
	g := f.groups[sc.key]
	if g == nil {
		g = &group{f: f, key: sc.key, t: sc.t, prefix: prefix, enc: enc, members: map[*member]struct{}{}, wake: make(chan struct{}, 1), quit: make(chan struct{})}
		f.groups[sc.key] = g
		go g.run()
	}
	m.g = g
	g.mu.Lock()
	g.members[m] = struct{}{}
	g.mu.Unlock()
	f.members++
	return m, nil
}

// leave removes a member; the group ends with its last member.
func (f *fanout) leave(m *member) {
	m.mu.Lock()
	m.gone, m.held = true, nil
	m.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	g := m.g
	g.mu.Lock()
	delete(g.members, m)
	last := len(g.members) == 0
	g.mu.Unlock()
	f.members--
	if last && f.groups[g.key] == g {
		delete(f.groups, g.key)
		close(g.quit)
	}
	if len(f.groups) == 0 {
		f.state = nil
	}
}

// group is the subscriptions alike: one notification of each run of
// commits, for all of them.
type group struct {
	f      *fanout
	key    string
	t      target
	prefix *gpb.Path
	enc    gpb.Encoding

	mu      sync.Mutex
	members map[*member]struct{}
	pending []*decodedEvent // taken from the feed, not yet built into a notification
	behind  bool            // pending overflowed: the members are cut off
	wake    chan struct{}
	quit    chan struct{}
}

// member is one subscription of a group.
type member struct {
	g      *group
	out    *sender
	stream grpc.ServerStream // to encode a notification with its codec
	mu     sync.Mutex
	held   []heldMsg // until started
	start  bool
	gone   bool // left: nothing more is queued
}

func (g *group) add(evs []*decodedEvent) {
	g.mu.Lock()
	if len(g.pending)+len(evs) > maxPending {
		g.pending, g.behind = nil, true
	} else {
		g.pending = append(g.pending, evs...)
	}
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// cut ends every member's subscription with err.
func (g *group) cut(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for m := range g.members {
		m.out.fail(err)
	}
}

// run builds and sends the group's notifications until its last member
// leaves.
func (g *group) run() {
	var members []*member
	var last time.Time    // when the last notification was built
	var lastCommit int64  // the time of the last commit it carried
	var gap time.Duration // the least time between two notifications now
	for {
		select {
		case <-g.quit:
			return
		case <-g.wake:
		}
		if wait := gap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-g.quit:
				t.Stop()
				return
			case <-t.C:
			}
		}
		g.mu.Lock()
		evs, behind := g.pending, g.behind
		g.pending, g.behind = nil, false
		members = members[:0]
		for m := range g.members {
			members = append(members, m)
		}
		g.mu.Unlock()
		if behind {
			g.cut(errGroupBehind)
			continue
		}
		if len(evs) == 0 || len(members) == 0 {
			continue
		}
		// The commits' rate is taken from their own times: a notification
		// built late on a loaded machine, carrying more of them, does not
		// count as a busier feed.
		made := evs[len(evs)-1].time
		gap = nextGap(gap, len(evs), len(members), time.Duration(made-lastCommit))
		last, lastCommit = time.Now(), made
		msgs, err := g.build(evs, members[0].stream)
		if err != nil {
			g.cut(grpcError(err))
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		d := &delivery{done: make(chan struct{})}
		d.left.Store(1)
		for _, m := range members {
			for _, msg := range msgs {
				m.deliver(msg, evs[len(evs)-1].rev, d)
			}
		}
		if d.left.Add(-1) == 0 {
			continue
		}
		t := time.NewTimer(maxFanoutWait)
		select {
		case <-d.done:
		case <-t.C:
		case <-g.quit:
		}
		t.Stop()
	}
}

// Under a sustained load each notification costs the switch more than the
// commits it carries: a write on each member's connection, and its
// reader's reads, whatever it carries. So a group counts the commits it
// takes once per member, from SendScale members up (sends a second):
// a group that took commits at BusyRate a second or more since its last
// notification (for SendScale members or fewer; BusyRate x SendScale
// sends a second for more) leaves at least MinBusyGap before the next
// one, doubling it at each busy notification up to MaxBusyGap; one at
// less than QuietRate sends at once again. So, for up to 100 members,
// below 200 commits a second each commit leaves as soon as it is durable
// (coalesced only with those that arrive while a notification is being
// built and sent), and from 400 a second on a group sends at most 10
// notifications a second; 1,000 members of one path are paced from 40
// commits a second on (40,000 sends a second), and sent at once again
// below 20.
const (
	BusyRate   = 400 // commits a second
	QuietRate  = 200
	SendScale  = 100 // members: past it, the rates are of sends
	MinBusyGap = 25 * time.Millisecond
	MaxBusyGap = 100 * time.Millisecond
)

// nextGap is the least time before a group's next notification, after one
// that carried n commits made over elapsed since the last one before, to
// members subscriptions.
func nextGap(gap time.Duration, n, members int, elapsed time.Duration) time.Duration {
	// Over MinBusyGap at least: two commits that happen to come together
	// are not a busy feed. In floating point: the first notification's
	// elapsed is the time since the epoch, which times a rate overflows
	// an integer.
	perSecond := float64(n) / max(elapsed, MinBusyGap).Seconds()
	// Past SendScale members, as that many commits to SendScale members.
	perSecond *= float64(max(members, SendScale)) / SendScale
	switch {
	case perSecond >= BusyRate:
		return min(max(2*gap, MinBusyGap), MaxBusyGap)
	case perSecond < QuietRate:
		return 0
	}
	return gap
}

// build is the notifications of evs for the group, encoded once; none
// when nothing concerns it.
func (g *group) build(evs []*decodedEvent, stream grpc.ServerStream) ([]*encoded, error) {
	rs := coalesce(evs, g.t, g.prefix, g.enc)
	if len(rs) == 0 {
		return nil, nil
	}
	g.f.builds.Add(1)
	return encode(stream, rs)
}

// delivery counts the sends of one notification under way.
type delivery struct {
	left atomic.Int32
	done chan struct{}
}

func (d *delivery) sent() {
	if d.left.Add(-1) == 0 {
		close(d.done)
	}
}

// deliver queues msg, whose last commit is rev, for the member, counted in
// d when its sender is free to send it now.
func (m *member) deliver(msg *encoded, rev uint64, d *delivery) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone {
		return
	}
	if !m.start {
		m.held = append(m.held, heldMsg{msg, rev})
		if len(m.held) > m.out.q.max {
			m.out.fail(errSlow)
		}
		return
	}
	if !m.out.idle() {
		d = nil
	} else {
		d.left.Add(1)
	}
	if m.out.putCounted(msg, d) != nil && d != nil {
		d.sent()
	}
}

// heldMsg is a notification held for a member that has not started, and
// the revision of the last commit it carries.
type heldMsg struct {
	msg *encoded
	rev uint64
}

// started queues what the group sent before the member's initial values
// were queued, and what it sends from now on. A notification held whose
// commits are all at or before read (the last commit before those values
// were read, whose changes they hold) would only tell again what they
// told: it is dropped.
func (m *member) started(read uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start = true
	for _, h := range m.held {
		if h.rev <= read {
			continue
		}
		if err := m.out.put(h.msg); err != nil {
			return err
		}
	}
	m.held = nil
	return nil
}

// decodedEvent is one commit of the change feed, decoded once for every
// group.
type decodedEvent struct {
	rev     uint64
	time    int64 // the commit's time, unix nanoseconds
	changes []*change
}

func decode(ev feed.Event) *decodedEvent {
	e := &decodedEvent{rev: ev.Revision, time: time.Now().UnixNano()}
	t, diffs, ok := parseRecord(ev.Data)
	if !ok {
		var rev engine.Revision
		if json.Unmarshal(ev.Data, &rev) != nil {
			return e
		}
		t, diffs = rev.Time, rev.Changes
	}
	if t, err := time.Parse(time.RFC3339Nano, t); err == nil {
		e.time = t.UnixNano()
	}
	e.changes = make([]*change, len(diffs))
	for i, df := range diffs {
		e.changes[i] = &change{Diff: df}
	}
	return e
}

// feedSubscribers is how many subscriptions take commits from the change
// feed now.
func (s *Server) feedSubscribers() int {
	s.fan.mu.Lock()
	defer s.fan.mu.Unlock()
	return s.fan.members
}
