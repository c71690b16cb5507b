package engine

import (
	"sync"
)

// Event is one commit on the change feed: its revision and the revision
// record as JSON (secrets redacted).
type Event struct {
	Revision uint64
	Data     []byte
}

// SubscriberBuffer is how many events a subscriber may fall behind before it
// is dropped; commits never wait for a subscriber.
const SubscriberBuffer = 256

// Subscription receives events. Dropped is closed when the subscriber fell
// too far behind and was dropped.
type Subscription struct {
	C       chan Event
	Dropped chan struct{}
	b       *broker
}

// Close ends the subscription.
func (s *Subscription) Close() { s.b.remove(s) }

type broker struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func newBroker() *broker { return &broker{subs: map[*Subscription]struct{}{}} }

// publish runs on the committer, in commit order; it never blocks.
func (b *broker) publish(rev uint64, data []byte) {
	ev := Event{Revision: rev, Data: data}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.C <- ev:
		default:
			delete(b.subs, s)
			close(s.Dropped)
		}
	}
}

func (b *broker) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
	}
}

// Subscribe starts receiving every commit from now on.
func (e *Engine) Subscribe() *Subscription {
	s := &Subscription{C: make(chan Event, SubscriberBuffer), Dropped: make(chan struct{}), b: e.events}
	e.events.mu.Lock()
	e.events.subs[s] = struct{}{}
	e.events.mu.Unlock()
	return s
}

// Subscribers reports how many subscribers are attached.
func (e *Engine) Subscribers() int {
	e.events.mu.Lock()
	defer e.events.mu.Unlock()
	return len(e.events.subs)
}
