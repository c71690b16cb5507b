package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkWebUIPages measures what open web pages cost the switch: the
// server's CPU time while commits come at 100 a second, with no page open
// and with 20. A page is simulated as the page's script behaves (a web
// session; the change feed; the states of the ports whose admin state
// changed read at most once a second, one by one or, beyond eight, as the
// list and then not again for 2 s; the LLDP neighbours at most every 10 s; the pending confirmation
// read once no commit came for 300 ms; the host's CPU and memory,
// state/SystemStatus, every 5 s),
// since 20 Chromiums would measure the browsers rather than the switch.
// It reports cpu-none and cpu-20pages (CPU seconds per second of load) and
// their ratio none/20pages (the goal: at least 0.8).
//
//	go test -run '^$' -bench BenchmarkWebUIPages -benchtime 1x ./test/
func BenchmarkWebUIPages(b *testing.B) {
	const rate, pages = 100, 20
	secs := 10
	if v, err := strconv.Atoi(os.Getenv("SWMGR_BENCH_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	s := startServer(b, "")
	root := "http://" + s.addr
	s.expect(b, 201, "POST", "/config/User", `{"Name":"benchop","Group":"operator","Password":"bench-operator-pass"}`)
	for i := 0; i < b.N; i++ {
		none := commitLoad(b, s, rate, secs)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var counts pageCounts
		for p := 0; p < pages; p++ {
			cookie, csrf := webLogin(b, root, "benchop", "bench-operator-pass")
			wg.Add(1)
			go func() { defer wg.Done(); simulatePage(ctx, root, cookie, csrf, &counts) }()
		}
		time.Sleep(time.Second) // the pages subscribed
		with := commitLoad(b, s, rate, secs)
		cancel()
		wg.Wait()
		b.ReportMetric(none, "cpu-none")
		b.ReportMetric(with, "cpu-20pages")
		b.ReportMetric(none/with, "ratio")
		b.ReportMetric(float64(counts.requests.Load())/float64(secs), "page-requests/s")
		b.Logf("server CPU at %d commits/s: %.3f s/s with no page, %.3f s/s with %d pages (%d events read, %d requests made): ratio %.2f", rate, none, with, pages, counts.events.Load(), counts.requests.Load(), none/with)
	}
}

// commitLoad makes rate commits a second (a port's description, as an
// automation tool's edits would be; no state read by the pages; with
// SWMGR_BENCH_FIELD=AdminState, the admin state: the pages read the
// ports' states, coalesced) for secs seconds and answers the server's CPU seconds per second meanwhile.
func commitLoad(b *testing.B, s *server, rate, secs int) float64 {
	b.Helper()
	before := processCPU(b, s.cmd.Process.Pid)
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for n := 0; n < rate*secs; n++ {
		<-tick.C
		body := fmt.Sprintf(`{"Description":"load %d"}`, n)
		if os.Getenv("SWMGR_BENCH_FIELD") == "AdminState" {
			body = `{"AdminState":"` + [2]string{"UP", "DOWN"}[n/32%2] + `"}`
		}
		s.expect(b, 200, "PATCH", fmt.Sprintf("/config/Port?IntfRef=fpPort%d", n%32+1), body)
	}
	return (processCPU(b, s.cmd.Process.Pid) - before).Seconds() / time.Since(start).Seconds()
}

// pageCounts counts what the simulated pages read: feed events, and the
// requests they made besides.
type pageCounts struct{ events, requests atomic.Int64 }

// simulatePage does what the page's script does while it shows the front
// panel, until ctx ends.
func simulatePage(ctx context.Context, root string, cookie *http.Cookie, csrf string, counts *pageCounts) {
	get := func(path string) {
		counts.requests.Add(1)
		req, _ := http.NewRequestWithContext(ctx, "GET", root+path, nil)
		req.AddCookie(cookie)
		req.Header.Set("X-CSRF-Token", csrf)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", root+"/public/v1/events", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var statesDue, lldpDue, hostDue time.Time
	stale := map[string]bool{} // ObjectIds of the ports whose state is to be read again
	// The pending confirmation: read once no commit came for 300 ms.
	pendingWhenQuiet := time.AfterFunc(time.Hour, func() { get("/public/v1/revisions/pending") })
	defer pendingWhenQuiet.Stop()
	fresh := map[string]time.Time{} // ports whose state came on the feed, when
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		counts.events.Add(1)
		if event == "state" { // a port's link moved: the page takes its state as is
			var st struct {
				Kind   string
				Object struct{ IntfRef string }
			}
			if json.Unmarshal([]byte(data), &st) == nil && st.Kind == "Port" {
				fresh[st.Object.IntfRef] = time.Now()
			}
			continue
		}
		var rec struct {
			Changes []struct {
				Kind, ObjectID string
				Before, After  map[string]any
			}
		}
		if json.Unmarshal([]byte(data), &rec) != nil {
			continue
		}
		for _, c := range rec.Changes {
			name, _ := c.After["IntfRef"].(string)
			if c.Kind == "Port" && (c.Before == nil || c.Before["AdminState"] != c.After["AdminState"]) && time.Since(fresh[name]) > 2*time.Second {
				stale[c.ObjectID] = true
			}
		}
		if now := time.Now(); len(stale) > 0 && now.After(statesDue) {
			statesDue = now.Add(time.Second)
			if len(stale) > 8 {
				statesDue = now.Add(2 * time.Second) // the ports churn: the next read waits 2 s
				get("/public/v1/state/Ports?CurrentMarker=0&Count=1024")
			} else {
				for id := range stale {
					get("/public/v1/state/Port/" + id)
				}
			}
			clear(stale)
			if now.After(lldpDue) {
				lldpDue = now.Add(10 * time.Second)
				get("/public/v1/state/LLDPIntfs?CurrentMarker=0&Count=1024")
			}
		}
		if now := time.Now(); now.After(hostDue) {
			hostDue = now.Add(5 * time.Second)
			get("/public/v1/state/SystemStatus")
		}
		pendingWhenQuiet.Reset(300 * time.Millisecond)
	}
}
