// Package feed is the change feed: the commits of the engine's writer, in
// order, for clients of /public/v1/events and for swmgr's own followers
// (the archive scheduler).
//
// It is a leaf: the engine's writer loop publishes each commit's revision
// record into a Broker after the store write, and never waits for a
// subscriber. The broker keeps the last EventBuffer events (at most
// EventBytes) in one ring shared by every subscriber, so publishing costs
// one non-blocking signal per subscriber whatever their number, and a
// subscriber wakes once for however many events arrived meanwhile. A
// subscriber that falls behind the ring is dropped (ErrDropped) and resumes
// from the stored revisions; an event too large to keep in memory is read
// back from the store by each subscriber that takes it (the Broker's load
// function).
package feed

import (
	"errors"
	"sync"
)

// Event is one commit on the change feed: its revision and the revision
// record as JSON (secrets redacted).
type Event struct {
	Revision uint64
	Data     []byte
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

// ErrDropped means a subscriber fell more than EventBuffer events (or
// EventBytes) behind.
var ErrDropped = errors.New("subscriber fell too far behind and was dropped")

// Subscription follows the commits made after it started. Notify receives
// a signal (coalesced: one for any number of events) when Take has more.
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
		dst = append(dst, b.ring[s.pos%uint64(len(b.ring))])
	}
	b.mu.Unlock()
	for i := from; i < len(dst); i++ {
		if dst[i].Data == nil { // a large event, kept in the store only
			data, err := b.load(dst[i].Revision)
			if err != nil {
				return dst[:i], ErrDropped
			}
			dst[i].Data = data
		}
	}
	return dst, nil
}

// MaxRingEvent is the largest event the ring keeps; a larger one (a restore
// of 100,000 objects makes tens of MiB) is kept only in the store and read
// from there by each subscriber that takes it, so the ring does not hold
// it in memory for the next 4096 commits.
const MaxRingEvent = 256 << 10

// Close ends the subscription.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	delete(s.b.subs, s)
	s.b.mu.Unlock()
}

// Broker keeps the last EventBuffer events (at most EventBytes) in a ring
// shared by all subscribers: publishing costs one non-blocking signal per
// subscriber, and a subscriber wakes once for however many events arrived
// meanwhile.
type Broker struct {
	mu    sync.Mutex
	ring  []Event
	first uint64 // the number of events published before the oldest kept
	total uint64
	bytes int // of the kept events' Data
	max   int // EventBytes
	subs  map[*Subscription]struct{}
	load  func(rev uint64) ([]byte, error) // a large event's data, from the store
}

// New makes a broker; load reads a revision record that was too large for
// the ring (MaxRingEvent) from the store.
func New(load func(rev uint64) ([]byte, error)) *Broker {
	return &Broker{ring: make([]Event, EventBuffer), max: EventBytes, subs: map[*Subscription]struct{}{}, load: load}
}

// Publish adds the event of one commit; the engine's writer calls it in
// commit order. data nil means the event is too large for the ring: each
// subscriber that takes it reads it with load. It never blocks.
func (b *Broker) Publish(rev uint64, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total-b.first == uint64(len(b.ring)) {
		b.evict()
	}
	b.ring[b.total%uint64(len(b.ring))] = Event{Revision: rev, Data: data}
	b.total++
	b.bytes += len(data)
	for b.bytes > b.max && b.total-b.first > 1 {
		b.evict()
	}
	for s := range b.subs {
		select {
		case s.notify <- struct{}{}:
		default: // already signalled
		}
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

// Follow is Subscribe for swmgr's own followers (the archive scheduler),
// which Subscribers does not count.
func (b *Broker) Follow() *Subscription { return b.subscribe(true) }

func (b *Broker) subscribe(own bool) *Subscription {
	ch := make(chan struct{}, 1)
	s := &Subscription{Notify: ch, notify: ch, b: b, own: own}
	b.mu.Lock()
	s.pos = b.total
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Subscribers reports how many clients of the change feed are attached
// (not swmgr's own followers).
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.subs {
		if !s.own {
			n++
		}
	}
	return n
}
