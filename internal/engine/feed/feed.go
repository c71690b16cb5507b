// Package feed is the change feed: the commits of the engine's writer, in
// order, for clients of /public/v1/events and for swmgr's own followers
// (the archive scheduler, AAA accounting, the gNMI server's
// subscriptions).
//
// It is a leaf: the engine's writer loop publishes each commit's revision
// record into a Broker after the store write, and never waits for a
// subscriber. The broker keeps the last EventBuffer events (at most
// EventBytes) in one ring shared by every subscriber, so publishing costs
// no work per subscriber, and a subscriber wakes once for however many
// events arrived meanwhile. Clients of the change feed are signalled
// together, FlushDelay after the first event they have not been signalled
// of (up to MaxFlushDelay while commits come at BusyRate a second or
// more): 100 subscribers then wake 40 (at most 10) times a second, all at
// once (their writes and their readers' reads batch in the scheduler and
// in epoll), instead of 100 wakes at scattered times per commit. A
// subscriber that falls behind the ring is dropped (ErrDropped) and resumes
// from the stored revisions; an event too large to keep in memory is read
// back from the store by each subscriber that takes it (the Broker's load
// function).
package feed

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
	"unsafe"
	"weak"
)

// Event is one commit on the change feed: its revision, the revision
// record as JSON (secrets redacted), and the event as the change feed
// sends it (AppendFrame), framed once when it is published and shared by
// every subscriber; Data is a part of Frame.
type Event struct {
	Revision uint64
	Data     []byte
	Frame    []byte
	// State marks a change of state the switch made on its own (a BFD
	// session going down), not a commit: framed as `event: state` with no
	// id (a client resuming goes on from its last commit), for the change
	// feed's clients only (swmgr's own followers follow commits), never
	// replayed. Revision is the running revision when it happened.
	State bool
}

// AppendFrame appends the Server-Sent Event of one commit to dst: its
// revision as id, event type commit, and data on one line (the revision
// record is JSON without newlines), as docs/api.md describes.
func AppendFrame(dst []byte, rev uint64, data []byte) []byte {
	dst = appendFrameHead(dst, rev)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// appendFrameHead is AppendFrame up to the data.
func appendFrameHead(dst []byte, rev uint64) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendUint(dst, rev, 10)
	return append(dst, "\nevent: commit\ndata: "...)
}

// AppendStateFrame appends the Server-Sent Event of one change of state
// to dst: event type state, no id, data on one line (JSON without
// newlines), as docs/api.md describes.
func AppendStateFrame(dst []byte, data []byte) []byte {
	dst = append(dst, "event: state\ndata: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// newEvent frames the event of revision rev once, for every subscriber.
func newEvent(rev uint64, data []byte) Event {
	if data == nil {
		return Event{Revision: rev}
	}
	frame := AppendFrame(make([]byte, 0, len(data)+48), rev, data)
	start := len(frame) - 2 - len(data)
	return Event{Revision: rev, Data: frame[start : start+len(data) : start+len(data)], Frame: frame}
}

// EventBuffer is how many recent events are kept for subscribers, and
// EventBytes how many bytes of them at most (a commit of thousands of
// changes makes an event of megabytes): a subscriber that falls further
// behind is dropped, and resumes from the stored revisions. The newest
// event is always kept (one larger than MaxRingEvent only by its
// revision). Commits never wait for a subscriber.
const (
	EventBuffer = 4096
	EventBytes  = 32 << 20
)

// FlushDelay is the longest a published event waits before the change
// feed's clients are signalled of it, unless the feed is busy; swmgr's own
// followers are signalled at once.
//
// Under a sustained load each wake of a subscriber (a write, and its
// reader's reads) costs the switch more than the events it carries (on 2
// shared cores, ~20 us of CPU each side: with 100 subscribers, 16% of a
// core at 40 wakes a second, whatever the commit rate): an
// interval between signals in which events came at BusyRate commits a
// second or more doubles the next interval, up to MaxFlushDelay, and one
// at less than a quarter of that rate returns it to FlushDelay. So below
// 100 commits a second events wait at most 25 ms, and from 400 a second
// on they go out in batches up to 100 ms apart (docs/api.md).
const (
	FlushDelay    = 25 * time.Millisecond
	MaxFlushDelay = 100 * time.Millisecond
	BusyRate      = 400 // commits a second: 10 events in 25 ms
)

// ErrDropped means a subscriber fell more than EventBuffer events (or
// EventBytes) behind.
var ErrDropped = errors.New("subscriber fell too far behind and was dropped")

// Subscription follows the commits made after it started. Notify receives
// a signal (coalesced: one for any number of events) when Take has more:
// within FlushDelay (MaxFlushDelay when busy) for a client of the change
// feed, at once for swmgr's own follower.
type Subscription struct {
	Notify <-chan struct{}
	notify chan struct{}
	pos    uint64 // the number of events published before the next one to take
	b      *Broker
	own    bool // swmgr's own follower, not a client of the change feed
}

// Take appends the events published since the last Take to dst.
func (s *Subscription) Take(dst []Event) ([]Event, error) {
	b := s.b
	from := len(dst)
	b.mu.Lock()
	if s.pos < b.first {
		b.mu.Unlock()
		return dst, ErrDropped
	}
	for ; s.pos < b.total; s.pos++ {
		if ev := b.ring[s.pos%uint64(len(b.ring))]; !ev.State || !s.own {
			dst = append(dst, ev)
		}
	}
	b.mu.Unlock()
	for i := from; i < len(dst); i++ {
		if dst[i].Data == nil { // a large event, kept in the store only
			ev, err := b.loadLarge(dst[i].Revision)
			if err != nil {
				return dst[:i], ErrDropped
			}
			dst[i] = ev
		}
	}
	return dst, nil
}

// loadLarge reads a large event from the store (load), framed as it is
// read (no copy of its tens of MiB), once for every subscriber that takes
// it while another still holds it: swmgr's own followers (the archive
// scheduler, AAA) are signalled together and would each read a restore's
// event, ~60 MiB apiece. The broker keeps only a weak pointer to it, so the
// event goes when the last subscriber lets it go.
func (b *Broker) loadLarge(rev uint64) (Event, error) {
	b.largeMu.Lock()
	defer b.largeMu.Unlock()
	if b.large.rev == rev {
		if p := b.large.frame.Value(); p != nil {
			frame := unsafe.Slice(p, b.large.n)
			return Event{Revision: rev, Data: frame[b.large.data : b.large.n-2 : b.large.n-2], Frame: frame}, nil
		}
	}
	frame, err := b.load(appendFrameHead(nil, rev), rev)
	if err != nil {
		return Event{}, err
	}
	head := len(appendFrameHead(nil, rev))
	frame = append(frame, "\n\n"...)
	b.large.rev, b.large.frame, b.large.data, b.large.n = rev, weak.Make(&frame[0]), head, len(frame)
	return Event{Revision: rev, Data: frame[head : len(frame)-2 : len(frame)-2], Frame: frame}, nil
}

// MaxRingEvent is the largest event the ring keeps; a larger one (a restore
// of 100,000 objects makes tens of MiB) is kept only in the store and read
// from there by each subscriber that takes it, so the ring does not hold
// it in memory for the next 4096 commits.
const MaxRingEvent = 256 << 10

// Watch hands fn the events of each signal, as Take takes them, until ctx
// ends, then closes the subscription. A subscription the broker dropped
// (it fell behind) is replaced by a new one of the same kind, and fn is
// told (dropped): a follower reads afresh what it follows instead of
// missing the commits it did not see.
func (s *Subscription) Watch(ctx context.Context, fn func(events []Event, dropped bool)) {
	sub := s
	defer func() { sub.Close() }()
	var events []Event
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Notify:
		}
		var err error
		events, err = sub.Take(events[:0])
		dropped := err != nil
		if dropped {
			sub.Close()
			sub = sub.b.subscribe(sub.own)
		}
		fn(events, dropped)
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	delete(s.b.clients, s)
	delete(s.b.followers, s)
	s.b.mu.Unlock()
}

// Broker keeps the last EventBuffer events (at most EventBytes) in a ring
// shared by all subscribers: publishing signals only swmgr's own followers
// and arms one timer for the clients, and a subscriber wakes once for
// however many events arrived meanwhile.
type Broker struct {
	mu        sync.Mutex
	ring      []Event
	lastRev   uint64 // the revision of the last commit published
	first     uint64 // the number of events published before the oldest kept
	total     uint64
	bytes     int                                          // of the kept events' Data
	max       int                                          // EventBytes
	clients   map[*Subscription]struct{}                   // of the change feed, signalled by flush
	followers map[*Subscription]struct{}                   // swmgr's own, signalled at once
	load      func(dst []byte, rev uint64) ([]byte, error) // appends a large event's data, from the store

	flush      *time.Timer // signals the clients delay after the first event they were not signalled of
	flushArmed bool
	delay      time.Duration // FlushDelay, longer while the feed is busy
	signalled  uint64        // total before the first event of this interval
	armed      time.Time     // when the flush timer was armed

	// The last large event read (loadLarge): its frame, while someone
	// holds it, of n bytes, its data from byte data on.
	largeMu sync.Mutex
	large   struct {
		rev     uint64
		frame   weak.Pointer[byte]
		data, n int
	}
}

// New makes a broker; load reads a revision record that was too large for
// the ring (MaxRingEvent) from the store, appending it to dst.
func New(load func(dst []byte, rev uint64) ([]byte, error)) *Broker {
	return &Broker{ring: make([]Event, EventBuffer), max: EventBytes, clients: map[*Subscription]struct{}{}, followers: map[*Subscription]struct{}{}, load: load, delay: FlushDelay}
}

// Publish adds the event of one commit; the engine's writer calls it in
// commit order. data nil means the event is too large for the ring: each
// subscriber that takes it reads it with load. It never blocks.
func (b *Broker) Publish(rev uint64, data []byte) {
	b.publish(newEvent(rev, data))
}

// PublishState adds a change of state (data: JSON on one line) for the
// change feed's clients, after the commits published so far. It never
// blocks.
func (b *Broker) PublishState(data []byte) {
	frame := AppendStateFrame(make([]byte, 0, len(data)+24), data)
	start := len(frame) - 2 - len(data)
	b.mu.Lock()
	rev := b.lastRev
	b.mu.Unlock()
	b.publish(Event{Revision: rev, Data: frame[start : start+len(data) : start+len(data)], Frame: frame, State: true})
}

func (b *Broker) publish(ev Event) {
	data := ev.Data
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ev.State {
		b.lastRev = ev.Revision
	}
	if b.total-b.first == uint64(len(b.ring)) {
		b.evict()
	}
	b.ring[b.total%uint64(len(b.ring))] = ev
	b.total++
	b.bytes += len(data)
	for b.bytes > b.max && b.total-b.first > 1 {
		b.evict()
	}
	if !ev.State {
		for s := range b.followers {
			s.signal()
		}
	}
	if !b.flushArmed && len(b.clients) > 0 {
		b.flushArmed = true
		b.signalled = b.total - 1 // this interval starts with this event
		b.armed = time.Now()
		if b.flush == nil {
			b.flush = time.AfterFunc(b.delay, b.signalClients)
		} else {
			b.flush.Reset(b.delay)
		}
	}
}

// signalClients signals every client of the change feed of the events
// published since the last time.
func (b *Broker) signalClients() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushArmed = false
	b.delay = nextDelayOver(b.delay, b.total-b.signalled, time.Since(b.armed))
	for s := range b.clients {
		s.signal()
	}
}

// nextDelay is the interval before the clients' next signal, after an
// interval of delay that brought them events.
func nextDelay(delay time.Duration, events uint64) time.Duration {
	return nextDelayOver(delay, events, delay)
}

// nextDelayOver is nextDelay after an interval of delay that lasted
// elapsed: the rate is the events over the time they came in, so that a
// timer firing late on a loaded machine (its interval then holding more
// events) does not count as a busier feed.
func nextDelayOver(delay time.Duration, events uint64, elapsed time.Duration) time.Duration {
	elapsed = max(elapsed, delay)
	perSecond := time.Duration(events) * time.Second // events/elapsed*perSecond, in integers
	switch {
	case perSecond >= BusyRate*elapsed:
		return min(2*delay, MaxFlushDelay)
	case 4*perSecond < BusyRate*elapsed:
		return FlushDelay
	}
	return delay
}

func (s *Subscription) signal() {
	select {
	case s.notify <- struct{}{}:
	default: // already signalled
	}
}

// evict drops the oldest kept event.
func (b *Broker) evict() {
	i := b.first % uint64(len(b.ring))
	b.bytes -= len(b.ring[i].Data)
	b.ring[i] = Event{}
	b.first++
}

// Subscribe starts following every commit from now on, for a client of
// the change feed.
func (b *Broker) Subscribe() *Subscription { return b.subscribe(false) }

// Follow is Subscribe for swmgr's own followers (the archive scheduler,
// AAA accounting, the gNMI server, which hands each commit to its
// subscriptions at once), which Subscribers does not count.
func (b *Broker) Follow() *Subscription { return b.subscribe(true) }

func (b *Broker) subscribe(own bool) *Subscription {
	ch := make(chan struct{}, 1)
	s := &Subscription{Notify: ch, notify: ch, b: b, own: own}
	b.mu.Lock()
	s.pos = b.total
	if own {
		b.followers[s] = struct{}{}
	} else {
		b.clients[s] = struct{}{}
	}
	b.mu.Unlock()
	return s
}

// Subscribers reports how many clients of the change feed are attached
// (not swmgr's own followers).
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients)
}
