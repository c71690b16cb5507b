package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

func TestEventsAreOrderedAndSlowSubscribersDropped(t *testing.T) {
	f := newFixture(t, t.TempDir())
	fast, slow := f.e.Feed().Subscribe(), f.e.Feed().Subscribe()
	defer fast.Close()
	defer slow.Close()
	start := f.e.Revision()
	const n = 300
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := f.apply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.9." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250+1)}))
			errs <- err
		}()
	}
	var got []feed.Event
	for len(got) < n {
		select {
		case <-fast.Notify:
			var err error
			if got, err = fast.Take(got); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d events", len(got), n)
		}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, ev := range got {
		if ev.Revision != start+uint64(i)+1 {
			t.Fatalf("event %d has revision %d; want %d (in order, none lost)", i, ev.Revision, start+uint64(i)+1)
		}
	}
	// The slow one has not read yet: it gets everything, then falls behind.
	if evs, err := slow.Take(nil); err != nil || len(evs) != n {
		t.Fatalf("slow subscriber: %d events, %v", len(evs), err)
	}
	for i := range feed.EventBuffer + 1 {
		f.e.events.Publish(uint64(i), nil)
	}
	if _, err := slow.Take(nil); err != feed.ErrDropped {
		t.Fatalf("a subscriber %d events behind: %v; want feed.ErrDropped", feed.EventBuffer+1, err)
	}
}
