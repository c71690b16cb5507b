package test

// The process and its data: a second start on a data directory in use
// fails; SIGTERM stops cleanly; data survives restarts and kill -9; paging
// stays exact while objects come and go.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSecondStartOnADataDirInUseFails(t *testing.T) {
	p := startSwmgr(t, "")
	out, err := exec.Command(swmgrBinary(t), "serve", "--data-dir", p.dir, "--http", freeAddr(t), "--https", "").CombinedOutput()
	if err == nil {
		t.Fatal("a second swmgr started on the same data directory")
	}
	if !strings.Contains(string(out), "in use by another swmgr process") {
		t.Fatalf("unclear message: %s", out)
	}
	p.must(200, "GET", "/config/SystemParam", "") // the first one is unharmed
}

func TestRestartKeepsObjectsIdsAndETags(t *testing.T) {
	p := startSwmgr(t, "")
	c := p.must(201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1","MinPoll":5}`)
	etag := c.hdr.Get("ETag")
	port := p.must(200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	p.stop()
	q := startSwmgr(t, p.dir)
	g := q.must(200, "GET", "/config/NtpServer/"+c.str("ObjectId"), "")
	if g.object()["MinPoll"] != 5.0 || g.hdr.Get("ETag") != etag {
		t.Fatalf("after restart: %s ETag %s (was %s)", g.raw, g.hdr.Get("ETag"), etag)
	}
	if q.must(200, "GET", "/state/Port/"+port.str("ObjectId"), "").object()["OperState"] != "UP" {
		t.Fatal("the switch did not get its configuration back after a restart")
	}
}

// TestPagingUnderConcurrentChanges lists 3000 objects 100 at a time while
// other objects are created and deleted: each of the 3000 is seen exactly
// once.
func TestPagingUnderConcurrentChanges(t *testing.T) {
	p := startSwmgr(t, "")
	const n = 3000
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				p.must(201, "POST", "/config/NtpServer", fmt.Sprintf(`{"IpAddr":"10.1.%d.%d"}`, i/250, i%250+1))
			}
		}()
	}
	wg.Wait()
	stop := make(chan struct{})
	var churn atomic.Int64
	for w := range 4 { // churn: create and delete other objects
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				addr := fmt.Sprintf("10.2.%d.%d", w, i%250+1)
				p.must(201, "POST", "/config/NtpServer", `{"IpAddr":"`+addr+`"}`)
				p.must(200, "DELETE", "/config/NtpServer?IpAddr="+addr, "")
				churn.Add(2)
			}
		}()
	}
	seen := map[string]int{}
	pages := 0
	marker := 0.0
	for {
		r := p.must(200, "GET", fmt.Sprintf("/config/NtpServers?CurrentMarker=%d&Count=100", int64(marker)), "")
		pages++
		for _, o := range r.body["Objects"].([]any) {
			addr := o.(map[string]any)["Object"].(map[string]any)["IpAddr"].(string)
			seen[addr]++
		}
		if r.body["MoreExist"] != true {
			break
		}
		marker = r.body["NextMarker"].(float64)
		time.Sleep(2 * time.Millisecond) // let the churn interleave
	}
	close(stop)
	wg.Wait()
	for i := range n {
		addr := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		if seen[addr] != 1 {
			t.Fatalf("%s seen %d times", addr, seen[addr])
		}
	}
	for addr, c := range seen {
		if c != 1 {
			t.Fatalf("%s repeated %d times", addr, c)
		}
	}
	if churn.Load() == 0 || pages < 30 {
		t.Fatalf("no concurrency exercised: %d churn writes, %d pages", churn.Load(), pages)
	}
	t.Logf("listed %d objects in %d pages during %d concurrent writes", len(seen), pages, churn.Load())
}

// TestKill9LosesNoAcknowledgedWrite: 32 writers create objects as fast as
// they can; swmgr is killed with SIGKILL mid-stream and restarted; every
// create that was answered 201 is there with its ObjectId and fields. Ten
// cycles on one data directory.
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	dir := t.TempDir()
	type acked struct{ id, addr string }
	var all []acked
	serial := 0
	for cycle := range 10 {
		p := startSwmgr(t, dir)
		var mu sync.Mutex
		var wg sync.WaitGroup
		var stopped atomic.Bool
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stopped.Load(); i++ {
					addr := fmt.Sprintf("10.%d.%d.%d", 100+cycle, w, i%250+1)
					if i >= 250 {
						return
					}
					r, err := tryPost(p, "/config/NtpServer", fmt.Sprintf(`{"IpAddr":"%s","MinPoll":%d}`, addr, 4+i%10))
					if err != nil {
						return // the server is gone
					}
					if r.code == 201 {
						mu.Lock()
						all = append(all, acked{r.str("ObjectId"), addr})
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(150+rand.IntN(400)) * time.Millisecond)
		stopped.Store(true)
		p.kill9()
		wg.Wait()
		serial = len(all)

		q := startSwmgr(t, dir)
		for _, a := range all {
			r := q.do("GET", "/config/NtpServer/"+a.id, "")
			if r.code != 200 || r.object()["IpAddr"] != a.addr {
				t.Fatalf("cycle %d: acknowledged %s (%s) is lost after kill -9: %d %s", cycle, a.addr, a.id, r.code, r.raw)
			}
		}
		q.stop()
	}
	if serial < 100 {
		t.Fatalf("only %d acknowledged creates over 10 cycles: the test exercised too little", serial)
	}
	t.Logf("%d acknowledged creates survived 10 kill -9 cycles", serial)
}

// tryPost is do without failing the test when the server is gone.
func tryPost(p *proc, path, body string) (reply, error) {
	resp, err := client.Post(p.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	r := reply{code: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&r.body); err != nil {
		return reply{}, err // cut off mid-answer: not acknowledged
	}
	return r, nil
}

// TestSIGTERMWithAnOpenChangeFeed: a subscriber holding the event stream
// does not delay a clean shutdown.
func TestSIGTERMWithAnOpenChangeFeed(t *testing.T) {
	p := startSwmgr(t, "")
	resp, err := http.Get(p.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p.stop()
	if strings.Contains(p.stderr.String(), "deadline exceeded") {
		t.Fatalf("shutdown waited out its deadline for the change-feed client:\n%s", p.stderr)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
}
