package feed

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestFeedBoundedInBytes: the events kept for subscribers never hold more
// than EventBytes (the newest one excepted, whatever its size), a
// subscriber behind the evicted ones is dropped, and one that kept up
// still gets every event in order.
func TestFeedBoundedInBytes(t *testing.T) {
	const max = 1 << 20
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"small events", []int{100, 200, 300}},
		{"events of 300 KiB", []int{300 << 10, 300 << 10, 300 << 10, 300 << 10, 300 << 10, 300 << 10}},
		{"one event over the bound", []int{10, 3 << 20, 10}},
		{"more events than the ring", func() []int {
			s := make([]int, EventBuffer+10)
			for i := range s {
				s[i] = 64
			}
			return s
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(nil)
			b.max = max
			slow, live := b.Subscribe(), b.Subscribe()
			var got []Event
			for i, n := range tc.sizes {
				b.Publish(uint64(i+1), bytes.Repeat([]byte{'x'}, n))
				kept := 0
				for j := b.first; j < b.total; j++ {
					kept += len(b.ring[j%uint64(len(b.ring))].Data)
				}
				if kept != b.bytes || (b.total-b.first > 1 && kept > max) || b.total-b.first > uint64(len(b.ring)) {
					t.Fatalf("after event %d: %d events of %d bytes kept (counted %d)", i+1, b.total-b.first, kept, b.bytes)
				}
				var err error
				if got, err = live.Take(got); err != nil {
					t.Fatalf("a subscriber that keeps up: %v", err)
				}
			}
			for i, ev := range got {
				if ev.Revision != uint64(i+1) || len(ev.Data) != tc.sizes[i] {
					t.Fatalf("event %d: revision %d, %d bytes", i, ev.Revision, len(ev.Data))
				}
			}
			total := 0
			for _, n := range tc.sizes {
				total += n
			}
			_, err := slow.Take(nil)
			if behind := total > max || len(tc.sizes) > EventBuffer; behind != (err == ErrDropped) {
				t.Errorf("a subscriber that never read (%d bytes behind): %v", total, err)
			}
		})
	}
}

// TestFollowersAreNotSubscribers: swmgr's own followers (the archive
// scheduler) are not counted as clients of the change feed.
func TestFollowersAreNotSubscribers(t *testing.T) {
	b := New(nil)
	own := b.Follow()
	client := b.Subscribe()
	if n := b.Subscribers(); n != 1 {
		t.Errorf("%d subscribers with one client and one follower", n)
	}
	client.Close()
	own.Close()
	if n := b.Subscribers(); n != 0 {
		t.Errorf("%d subscribers after both closed", n)
	}
}

// TestEventsFramedOnceAndShared: every subscriber takes the same framed
// bytes (no copy per subscriber), the frame is the Server-Sent Event of
// docs/api.md, Data is the published record, and an event too large for
// the ring is read with load and framed the same way, once for the
// subscribers that take it while another holds it.
func TestEventsFramedOnceAndShared(t *testing.T) {
	large := []byte(`{"Revision":2,"Changes":["large"]}`)
	loads := 0
	b := New(func(dst []byte, rev uint64) ([]byte, error) {
		if rev != 2 {
			t.Errorf("load(%d); only revision 2 was published without data", rev)
		}
		loads++
		return append(dst, large...), nil
	})
	one, two := b.Subscribe(), b.Subscribe()
	b.Publish(1, []byte(`{"Revision":1}`))
	b.Publish(2, nil)
	got1, err1 := one.Take(nil)
	got2, err2 := two.Take(nil)
	if err1 != nil || err2 != nil || len(got1) != 2 || len(got2) != 2 {
		t.Fatalf("took %d (%v) and %d (%v) events; want 2 each", len(got1), err1, len(got2), err2)
	}
	for i, want := range []struct {
		data  string
		frame string
	}{
		{`{"Revision":1}`, "id: 1\nevent: commit\ndata: {\"Revision\":1}\n\n"},
		{string(large), "id: 2\nevent: commit\ndata: " + string(large) + "\n\n"},
	} {
		for _, ev := range []Event{got1[i], got2[i]} {
			if ev.Revision != uint64(i+1) || string(ev.Data) != want.data || string(ev.Frame) != want.frame {
				t.Errorf("event %d: revision %d, data %q, frame %q; want %q, %q", i+1, ev.Revision, ev.Data, ev.Frame, want.data, want.frame)
			}
		}
	}
	for i := range 2 {
		if &got1[i].Frame[0] != &got2[i].Frame[0] {
			t.Errorf("two subscribers took two copies of event %d's frame", i+1)
		}
	}
	if loads != 1 {
		t.Errorf("the large event was read %d times for two subscribers; want once", loads)
	}
	if d := got1[0].Data; cap(d) != len(d) {
		t.Errorf("Data has room to grow (%d of %d) into the frame's trailer", len(d), cap(d))
	}
}

// TestClientsSignalledTogetherFollowersAtOnce: a publish signals swmgr's
// own followers at once, and the clients of the change feed all together
// once the flush delay has passed, one signal for many events.
func TestClientsSignalledTogetherFollowersAtOnce(t *testing.T) {
	b := New(nil)
	own := b.Follow()
	clients := []*Subscription{b.Subscribe(), b.Subscribe(), b.Subscribe()}
	b.Publish(1, []byte("1"))
	select {
	case <-own.Notify:
	default:
		t.Fatal("the follower was not signalled by the publish")
	}
	b.Publish(2, []byte("2"))
	for i, c := range clients {
		select {
		case <-c.Notify:
		case <-time.After(10 * time.Second):
			t.Fatalf("client %d never signalled", i)
		}
		evs, err := c.Take(nil)
		if err != nil || len(evs) != 2 {
			t.Fatalf("client %d took %d events (%v) after one signal; want both", i, len(evs), err)
		}
	}
}

// TestFlushDelayFollowsLoad: an interval in which events came at
// BusyRate or more doubles the next one, up to MaxFlushDelay; one at less
// than a quarter of that rate returns it to FlushDelay; in between it
// stays.
func TestFlushDelayFollowsLoad(t *testing.T) {
	// events in an interval of d at BusyRate
	busy := func(d time.Duration) uint64 { return uint64(BusyRate * d / time.Second) }
	delay := FlushDelay
	for i, step := range []struct {
		events uint64
		want   time.Duration
	}{
		{1, FlushDelay},
		{busy(FlushDelay), 2 * FlushDelay},
		{busy(2 * FlushDelay), 4 * FlushDelay},
		{10 * busy(4*FlushDelay), MaxFlushDelay},
		{busy(MaxFlushDelay) / 2, MaxFlushDelay},       // in between: kept
		{busy(MaxFlushDelay)/4 - 1, FlushDelay},        // quiet
		{busy(FlushDelay) - 1, FlushDelay},             // in between: kept
		{busy(FlushDelay), 2 * FlushDelay},             // busy again
		{(busy(2*FlushDelay) + 3) / 4, 2 * FlushDelay}, // a quarter: kept
		{(busy(2*FlushDelay)+3)/4 - 1, FlushDelay},     // less: quiet
		{0, FlushDelay},
	} {
		if delay = nextDelay(delay, step.events); delay != step.want {
			t.Fatalf("step %d: after an interval of %d events the delay is %v; want %v", i, step.events, delay, step.want)
		}
	}
	if MaxFlushDelay > 100*time.Millisecond {
		t.Errorf("MaxFlushDelay %v: an operator waits at most 100 ms for an event (docs/api.md)", MaxFlushDelay)
	}
}

// TestBusyFeedLengthensTheDelay: the broker counts the events of each
// interval between signals to the clients, and a busy interval lengthens
// the next one, a quiet one returns it to FlushDelay.
func TestBusyFeedLengthensTheDelay(t *testing.T) {
	b := New(nil)
	c := b.Subscribe()
	defer c.Close()
	rev := uint64(0)
	for _, step := range []struct {
		events int
		want   time.Duration
	}{
		{BusyRate * 2, MaxFlushDelay},
		{BusyRate*2/4 - 1, FlushDelay},
		{BusyRate * 2 / 4, 2 * time.Second}, // neither busy nor quiet: kept
	} {
		b.mu.Lock()
		b.delay = 2 * time.Second // the test signals itself, well before
		b.mu.Unlock()
		for range step.events {
			rev++
			b.Publish(rev, []byte("x"))
		}
		b.flush.Stop()
		b.signalClients()
		if _, err := c.Take(nil); err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		delay := b.delay
		b.mu.Unlock()
		if delay != step.want {
			t.Errorf("after an interval of %d events the delay is %v; want %v", step.events, delay, step.want)
		}
	}
	select {
	case <-c.Notify:
	default:
		t.Error("signalClients did not signal the client")
	}
}

// TestLateFlushIsNotBusy: the rate of an interval is its events over the
// time it lasted: a timer that fired late (a loaded machine) and so
// gathered more events does not lengthen the delay, nor keep it long.
func TestLateFlushIsNotBusy(t *testing.T) {
	// 100 commits a second: 10 events in a flush of 25 ms that fired
	// 75 ms late.
	if d := nextDelayOver(FlushDelay, 10, 100*time.Millisecond); d != FlushDelay {
		t.Errorf("100 commits/s in a late flush: delay %v; want %v", d, FlushDelay)
	}
	// At 90 commits a second the long delay a busy moment left ends,
	// though a late flush of it gathered 18 events.
	if d := nextDelayOver(MaxFlushDelay, 18, 200*time.Millisecond); d != FlushDelay {
		t.Errorf("90 commits/s after a busy moment, late flush: delay %v; want %v", d, FlushDelay)
	}
	// A busy feed is still busy.
	if d := nextDelayOver(FlushDelay, 40, 50*time.Millisecond); d != 2*FlushDelay {
		t.Errorf("800 commits/s: delay %v; want %v", d, 2*FlushDelay)
	}
}

// TestWatchFollowsAgainAfterADrop: a follower that fell behind is told
// (dropped) and goes on with a new subscription of its own, which sees the
// next commits; when ctx ends the subscription is closed.
func TestWatchFollowsAgainAfterADrop(t *testing.T) {
	b := New(nil)
	b.max = 1 << 10
	type call struct {
		revs    []uint64
		dropped bool
	}
	calls := make(chan call, 16)
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	sub := b.Follow()
	go func() {
		defer close(done)
		first := true
		sub.Watch(ctx, func(events []Event, dropped bool) {
			c := call{dropped: dropped}
			for _, ev := range events {
				c.revs = append(c.revs, ev.Revision)
			}
			calls <- c
			if first {
				first = false
				<-release // fall behind while more is published
			}
		})
	}()
	b.Publish(1, []byte("{}"))
	if c := <-calls; c.dropped || len(c.revs) != 1 {
		t.Fatalf("first call: %+v", c)
	}
	for rev := uint64(2); rev < 10; rev++ {
		b.Publish(rev, bytes.Repeat([]byte{'x'}, 512))
	}
	close(release)
	if c := <-calls; !c.dropped {
		t.Fatalf("after falling behind: %+v; want dropped", c)
	}
	b.Publish(10, []byte("{}"))
	if c := <-calls; c.dropped || len(c.revs) != 1 || c.revs[0] != 10 {
		t.Fatalf("after following again: %+v; want revision 10", c)
	}
	cancel()
	<-done
	b.mu.Lock()
	n := len(b.followers)
	b.mu.Unlock()
	if n != 0 {
		t.Errorf("%d followers left after ctx ended", n)
	}
}

// TestStateEventsForClientsOnly: a change of state goes to the change
// feed's clients in order with the commits, framed `event: state` with no
// id (a client's Last-Event-ID stays its last commit); swmgr's own
// followers, which follow commits, neither take it nor are woken by it.
func TestStateEventsForClientsOnly(t *testing.T) {
	b := New(nil)
	client, follower := b.Subscribe(), b.Follow()
	b.Publish(1, []byte(`{"r":1}`))
	<-follower.Notify
	b.PublishState([]byte(`{"Kind":"BfdSessionState"}`))
	select {
	case <-follower.Notify:
		t.Fatal("a follower was woken by a change of state")
	case <-time.After(3 * FlushDelay):
	}
	b.Publish(2, []byte(`{"r":2}`))
	got, err := client.Take(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].State || !got[1].State || got[2].State || got[1].Revision != 1 {
		t.Fatalf("the client took %+v", got)
	}
	if want := "event: state\ndata: {\"Kind\":\"BfdSessionState\"}\n\n"; string(got[1].Frame) != want || string(got[1].Data) != `{"Kind":"BfdSessionState"}` {
		t.Errorf("frame %q data %q, want %q", got[1].Frame, got[1].Data, want)
	}
	evs, err := follower.Take(nil)
	if err != nil || len(evs) != 2 || evs[0].Revision != 1 || evs[1].Revision != 2 {
		t.Errorf("the follower took %+v %v, want the two commits", evs, err)
	}
}
