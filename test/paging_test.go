// Paging under concurrency: 3000 NtpServer objects that exist throughout
// are listed 100 at a time, following NextMarker, while other goroutines
// create and delete other NtpServer objects (some interleaved with the 3000,
// some new at the end). Each of the 3000 is seen exactly once, with its
// ObjectId, and nothing is repeated.

package test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// createAll creates the NtpServer objects of addrs with workers
// concurrent clients and returns their ObjectIds by address.
func createAll(t *testing.T, s *server, addrs []string, workers int) map[string]string {
	t.Helper()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next atomic.Int64
		out  = make(map[string]string, len(addrs))
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(addrs) || t.Failed() {
					return
				}
				r, err := s.call("POST", "/config/NtpServer", `{"IpAddr":"`+addrs[i]+`"}`)
				if err != nil || r.code != 201 {
					t.Errorf("create %s: %v %v", addrs[i], r, err)
					return
				}
				mu.Lock()
				out[addrs[i]] = r.str("ObjectId")
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func TestPagingUnderConcurrentCreatesAndDeletes(t *testing.T) {
	s := startServer(t, "", "--ports", "4")
	const stable, count = 3000, 100

	// The 3000 objects that stay, and 600 "victims" created among them
	// (concurrently, so in a mixed order) that are deleted while listing.
	var addrs, stay, victims []string
	for i := range stable + stable/5 {
		a := fmt.Sprintf("10.%d.%d.%d", 1+i/60000, i/250%240, i%250+1)
		addrs = append(addrs, a)
		if i%6 == 5 {
			victims = append(victims, a)
		} else {
			stay = append(stay, a)
		}
	}
	stay = stay[:stable]
	start := time.Now()
	created := createAll(t, s, addrs, 32)
	t.Logf("created %d objects in %v", len(created), time.Since(start))

	// Churn while listing: deleters remove the victims in a random order;
	// creators add new objects and delete each one again a little later.
	// Each create and delete done is counted, then announced on progress;
	// a churn goroutine that fails closes failed.
	var (
		wg               sync.WaitGroup
		stop             = make(chan struct{})
		creates, deletes atomic.Int64
		victimIdx        atomic.Int64
		gone, alive      sync.Map // victims deleted; churn objects that exist
		progress         = make(chan struct{}, 1)
		failed           = make(chan struct{})
		failOnce         sync.Once
		stopped          = func() bool {
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}
		done = func(n *atomic.Int64) {
			n.Add(1)
			select {
			case progress <- struct{}{}:
			default: // one already waits to be seen
			}
		}
		fail = func(format string, args ...any) {
			t.Errorf(format, args...)
			failOnce.Do(func() { close(failed) })
		}
	)
	rand.Shuffle(len(victims), func(i, j int) { victims[i], victims[j] = victims[j], victims[i] })
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped() {
				i := int(victimIdx.Add(1)) - 1
				if i >= len(victims) {
					return
				}
				if r, err := s.call("DELETE", "/config/NtpServer?IpAddr="+victims[i], ""); err != nil || r.code != 200 {
					fail("delete %s: %v %v", victims[i], r, err)
					return
				}
				gone.Store(victims[i], true)
				done(&deletes)
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev string
			for i := 0; !stopped(); i++ {
				addr := fmt.Sprintf("churn-%d-%d.example.com", w, i)
				if r, err := s.call("POST", "/config/NtpServer", `{"IpAddr":"`+addr+`"}`); err != nil || r.code != 201 {
					fail("create %s: %v %v", addr, r, err)
					return
				}
				alive.Store(addr, true)
				done(&creates)
				if prev != "" {
					if r, err := s.call("DELETE", "/config/NtpServer", `{"IpAddr":"`+prev+`"}`); err != nil || r.code != 200 {
						fail("delete %s: %v %v", prev, r, err)
						return
					}
					alive.Delete(prev)
					done(&deletes)
				}
				if i%2 == 0 {
					prev = addr // every other one stays
				} else {
					prev = ""
				}
			}
		}()
	}

	// churned waits until the churn has done a create and a delete more
	// than c and d: the listing goes on between churn, whatever the
	// machine's load lets each side do in a given time.
	churned := func(c, d int64) {
		t.Helper()
		for creates.Load() == c || deletes.Load() == d {
			select {
			case <-progress:
			case <-failed:
				close(stop)
				wg.Wait()
				t.FailNow()
			}
		}
	}

	// The listing: 100 at a time, NextMarker back as CurrentMarker, with
	// a create and a delete at least before the first page and between
	// every two pages.
	seenAddr := map[string]int{}
	seenID := map[string]int{}
	pages := 0
	var marker int64
	startCreates, startDeletes := creates.Load(), deletes.Load()
	churned(startCreates, startDeletes)
	for {
		r, err := s.call("GET", fmt.Sprintf("/config/NtpServers?CurrentMarker=%d&Count=%d", marker, count), "")
		c, d := creates.Load(), deletes.Load() // what the next page must follow
		if err != nil {
			t.Fatal(err)
		}
		p, err := getPage(r, marker, count)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.more && len(p.objects) == 0 {
			t.Fatalf("page %d: MoreExist with no objects", pages)
		}
		for _, o := range p.objects {
			addr := o["Object"].(map[string]any)["IpAddr"].(string)
			id := o["ObjectId"].(string)
			seenAddr[addr]++
			seenID[id]++
			if want, ok := created[addr]; ok && want != id {
				t.Errorf("%s is listed with ObjectId %s; its create said %s", addr, id, want)
			}
		}
		if !p.more {
			break
		}
		if int64(p.next) <= marker {
			t.Fatalf("NextMarker %v does not move past CurrentMarker %d", p.next, marker)
		}
		marker = int64(p.next)
		churned(c, d)
	}
	duringCreates, duringDeletes := creates.Load()-startCreates, deletes.Load()-startDeletes
	close(stop)
	wg.Wait()

	for _, a := range stay {
		if seenAddr[a] != 1 {
			t.Errorf("%s, which existed throughout, was seen %d times", a, seenAddr[a])
		}
	}
	for a, n := range seenAddr {
		if n != 1 {
			t.Errorf("%s was seen %d times", a, n)
		}
	}
	for id, n := range seenID {
		if n != 1 {
			t.Errorf("ObjectId %s was seen %d times", id, n)
		}
	}
	if pages < stable/count || duringCreates < 10 || duringDeletes < 10 {
		t.Errorf("too little concurrency to mean anything: %d pages, %d creates and %d deletes during the listing", pages, duringCreates, duringDeletes)
	}
	t.Logf("listed %d objects (%d stable) in %d pages during %d creates and %d deletes", len(seenAddr), stable, pages, duringCreates, duringDeletes)

	// At rest, a listing is exact: the stable ones, the victims not yet
	// deleted, and the churn objects left.
	final := s.listAll(t, "/config/NtpServers", count)
	names := map[string]bool{}
	for _, o := range final {
		names[o["Object"].(map[string]any)["IpAddr"].(string)] = true
	}
	if len(names) != len(final) {
		t.Errorf("the final listing repeats objects: %d entries, %d names", len(final), len(names))
	}
	want := map[string]bool{}
	for _, a := range addrs {
		want[a] = true
	}
	gone.Range(func(k, _ any) bool { delete(want, k.(string)); return true })
	alive.Range(func(k, _ any) bool { want[k.(string)] = true; return true })
	for a := range want {
		if !names[a] {
			t.Errorf("%s is missing from the final listing", a)
		}
	}
	for a := range names {
		if !want[a] {
			t.Errorf("%s is in the final listing but was deleted or never created", a)
		}
	}
}
