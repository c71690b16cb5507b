package feed

import (
	"bytes"
	"testing"
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
