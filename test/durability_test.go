// Durability: 32 writers create NtpServer objects as fast as they can; after
// a random 200-800 ms the server is killed with SIGKILL; every create that
// was answered 201 must be there after a restart on the same data
// directory, by key and by its ObjectId, with the fields that were sent. Ten
// cycles on one data directory, so objects accumulate; nothing that was
// never sent may appear either. The config log too: an entry a reader saw
// before the kill is still there after it, and SeqNum is not reused.

package test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ntpBody is the create body of writer w's i-th object in a cycle.
func ntpBody(cycle, w, i int) map[string]any {
	return map[string]any{
		"IpAddr":     fmt.Sprintf("c%d-w%d-n%d.example.com", cycle, w, i),
		"MinPoll":    4 + i%6,
		"MaxPoll":    10 + i%7,
		"SourceIntf": fmt.Sprintf("eth%d", w%4),
		"Prefer":     i%3 == 0,
	}
}

func TestKill9LosesNoAcknowledgedCreate(t *testing.T) {
	const (
		cycles  = 10
		writers = 32
	)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	t.Logf("seed %d", seed)
	dir := t.TempDir()

	type ack struct {
		id   string
		body map[string]any
	}
	var (
		mu        sync.Mutex
		acked     = map[string]ack{}            // IpAddr -> what the 201 said
		attempted = map[string]map[string]any{} // IpAddr -> body, acknowledged or not
	)
	begin := time.Now()
	for cycle := range cycles {
		s := startServer(t, dir)
		var (
			wg          sync.WaitGroup
			killed      atomic.Bool
			cycleAcked  atomic.Int64
			thisCycleMu sync.Mutex
			thisCycle   []string
		)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					body := ntpBody(cycle, w, i)
					addr := body["IpAddr"].(string)
					mu.Lock()
					attempted[addr] = body
					mu.Unlock()
					r, err := s.call("POST", "/config/NtpServer", jsonOf(body))
					if err != nil {
						if !killed.Load() {
							t.Errorf("cycle %d: create %s before the kill: %v", cycle, addr, err)
						}
						return // the server is gone: the create is not acknowledged
					}
					if r.code != 201 {
						t.Errorf("cycle %d: create %s: %s", cycle, addr, r)
						return
					}
					id := r.str("ObjectId")
					if !uuidRE.MatchString(id) {
						t.Errorf("cycle %d: create %s: ObjectId %q", cycle, addr, id)
						return
					}
					mu.Lock()
					acked[addr] = ack{id: id, body: body}
					mu.Unlock()
					thisCycleMu.Lock()
					thisCycle = append(thisCycle, addr)
					thisCycleMu.Unlock()
					cycleAcked.Add(1)
				}
			}()
		}
		// A reader follows the config log while the writers write.
		var (
			seenMu  sync.Mutex
			maxSeen float64
			lastRaw string
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var marker int64
			for !killed.Load() {
				r, err := s.call("GET", fmt.Sprintf("/state/configlogs?CurrentMarker=%d&Count=1024", marker), "")
				if err != nil {
					return
				}
				p, err := getPage(r, marker, 1024)
				if err != nil {
					t.Errorf("cycle %d: the config log: %v", cycle, err)
					return
				}
				seenMu.Lock()
				for _, e := range p.objects {
					if n := e["Object"].(map[string]any)["SeqNum"].(float64); n > maxSeen {
						maxSeen, lastRaw = n, jsonOf(e)
					}
				}
				seenMu.Unlock()
				marker = int64(p.next)
				if !p.more {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
		time.Sleep(time.Duration(200+rng.IntN(601)) * time.Millisecond)
		// On a loaded machine the window may pass before any create is
		// acknowledged or read back: the kill waits for both (no timing
		// assumption).
		sawLog := func() bool { seenMu.Lock(); defer seenMu.Unlock(); return maxSeen > 0 }
		for wait := time.Now(); (cycleAcked.Load() == 0 || !sawLog()) && time.Since(wait) < 20*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		killed.Store(true)
		s.kill9()
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		if len(thisCycle) == 0 {
			t.Fatalf("cycle %d: no create was acknowledged before the kill", cycle)
		}

		// Restart on the same data directory.
		s = startServer(t, dir)
		// Every acknowledged object, of every cycle so far, is listed with
		// its ObjectId and fields; every listed object was sent, as sent.
		listed := map[string]bool{}
		for _, e := range s.listAll(t, "/config/NtpServers", 1024) {
			o := e["Object"].(map[string]any)
			addr := o["IpAddr"].(string)
			if listed[addr] {
				t.Errorf("cycle %d: %s is listed twice", cycle, addr)
			}
			listed[addr] = true
			body, ok := attempted[addr]
			if !ok {
				t.Errorf("cycle %d: %s is listed but was never sent", cycle, addr)
				continue
			}
			checkFields(t, fmt.Sprintf("cycle %d: listed %s", cycle, addr), o, body)
			if a, ok := acked[addr]; ok && a.id != e["ObjectId"] {
				t.Errorf("cycle %d: %s is listed with ObjectId %v; its 201 said %s", cycle, addr, e["ObjectId"], a.id)
			}
		}
		for addr, a := range acked {
			if !listed[addr] {
				t.Errorf("cycle %d: %s (ObjectId %s) was acknowledged and is lost", cycle, addr, a.id)
			}
		}
		// This cycle's acknowledged objects, one by one: by key and by id.
		var next atomic.Int64
		var rg sync.WaitGroup
		for range 8 {
			rg.Add(1)
			go func() {
				defer rg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(thisCycle) {
						return
					}
					a := acked[thisCycle[i]]
					for _, path := range []string{"/config/NtpServer?IpAddr=" + thisCycle[i], "/config/NtpServer/" + a.id} {
						r, err := s.call("GET", path, "")
						if err != nil || r.code != 200 || r.str("ObjectId") != a.id {
							t.Errorf("cycle %d: GET %s of an acknowledged create: %v %v", cycle, path, r, err)
							continue
						}
						checkFields(t, fmt.Sprintf("cycle %d: GET %s", cycle, path), r.object(), a.body)
					}
				}
			}()
		}
		rg.Wait()

		// The config log kept what the reader saw; SeqNum goes on after it.
		log := configLog(t, s)
		last := lastSeq(log)
		if maxSeen == 0 {
			t.Errorf("cycle %d: the config log reader saw no entry before the kill", cycle)
		}
		if last < maxSeen {
			t.Errorf("cycle %d: the config log ends at SeqNum %v; a reader saw %v before the kill", cycle, last, maxSeen)
		}
		for _, e := range s.listAll(t, "/state/configlogs", 1024) {
			if e["Object"].(map[string]any)["SeqNum"] == maxSeen && jsonOf(e) != lastRaw {
				t.Errorf("cycle %d: log entry %v is\n%s\nafter the kill; a reader saw\n%s", cycle, maxSeen, jsonOf(e), lastRaw)
			}
		}
		s.expect(t, 409, "POST", "/config/NtpServer", jsonOf(acked[thisCycle[0]].body))
		if log = configLog(t, s); lastSeq(log) != last+1 || log[len(log)-1].Result == "Success" {
			t.Errorf("cycle %d: the first write after the restart is logged as %+v; want SeqNum %v", cycle, log[len(log)-1], last+1)
		}
		s.stop(t)
		t.Logf("cycle %d: %d creates acknowledged before kill -9, %d objects now, %v so far", cycle, cycleAcked.Load(), len(listed), time.Since(begin).Round(time.Millisecond))
		if t.Failed() {
			t.FailNow()
		}
	}
}
