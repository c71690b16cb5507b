package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
)

// The benchmarks compare gNMI with REST on the same engine, in one run,
// and report the ratios (docs/gnmi.md quotes them). Both go over loopback
// TCP without TLS.

func restServer(b *testing.B, fx *fixture) *httptest.Server {
	b.Helper()
	h := api.New(fx.f.E, history.New(fx.f.E), candidates.New(fx.f.E), nil)
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}

func restDo(b *testing.B, c *http.Client, method, url, body string) []byte {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, data)
	}
	return data
}

// BenchmarkGNMIVsREST measures, in one run: Get of one leaf against REST's
// GET by ObjectId (throughput ratio), and one SetRequest of 1,000 updates
// against 1,000 single REST creates (speed-up).
func BenchmarkGNMIVsREST(b *testing.B) {
	fx := start(b, Options{})
	srv := restServer(b, fx)
	c := srv.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 64 // a kept connection per client
	base := srv.URL + "/public/v1"
	var created struct{ ObjectId string }
	json.Unmarshal(restDo(b, c, "POST", base+"/config/NtpServer", `{"IpAddr":"10.0.0.1"}`), &created)
	ctx := context.Background()
	get := &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll")}}
	// Throughput: 16 clients at once, each its own requests one after the
	// other; rounds of REST and gNMI alternate.
	const rounds, per, workers = 5, 800, 16
	parallel := func(fn func()) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per / workers {
					fn()
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	var tREST, tGNMI time.Duration
	for range rounds {
		tREST += parallel(func() { restDo(b, c, "GET", base+"/config/NtpServer/"+created.ObjectId, "") })
		tGNMI += parallel(func() {
			if _, err := fx.c.Get(ctx, get); err != nil {
				b.Error(err)
			}
		})
	}
	b.ReportMetric(float64(tREST)/float64(tGNMI), "get-gnmi/rest-throughput")
	b.ReportMetric(float64(tGNMI.Microseconds())/(rounds*per), "get-gnmi-us")
	b.ReportMetric(float64(tREST.Microseconds())/(rounds*per), "get-rest-us")

	// 1,000 creates: one SetRequest against 1,000 REST POSTs.
	const n = 1000
	t0 := time.Now()
	for i := range n {
		restDo(b, c, "POST", base+"/config/NtpServer", fmt.Sprintf(`{"IpAddr":"10.1.%d.%d"}`, i/250, i%250+1))
	}
	rest := time.Since(t0)
	set := &gpb.SetRequest{}
	for i := range n {
		set.Update = append(set.Update, &gpb.Update{Path: p("swmgr", fmt.Sprintf("/config/NtpServer[IpAddr=10.2.%d.%d]", i/250, i%250+1)), Val: jv(`{"MinPoll":5}`)})
	}
	t0 = time.Now()
	if _, err := fx.c.Set(ctx, set); err != nil {
		b.Fatal(err)
	}
	gnmi := time.Since(t0)
	b.ReportMetric(float64(rest)/float64(gnmi), "set1000-speedup")
	b.ReportMetric(float64(gnmi.Milliseconds()), "set1000-gnmi-ms")
	b.ReportMetric(float64(rest.Milliseconds()), "set1000-rest-ms")
	for range b.N {
	}
}

// BenchmarkCommitsWithSubscribers measures commit throughput with 100
// ON_CHANGE subscribers on / against none (ratio), and, at 100 commits a
// second, the time from a commit's start to its notification at a
// subscriber (p50, p99).
func BenchmarkCommitsWithSubscribers(b *testing.B) {
	fx := start(b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each commit changes one port's Mtu to a value not used in the
	// last 8,000 commits, so that its notification is told apart.
	port := func(i int) string { return fmt.Sprint("fpPort", i%8+1) }
	mtu := func(i int) int64 { return int64(1000 + i%8000) }
	commit := func(i int) {
		fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": port(i), "Mtu": mtu(i)}))
	}
	seq := 1
	rate := func(d time.Duration) float64 {
		n := 0
		t0 := time.Now()
		for time.Since(t0) < d {
			commit(seq)
			seq++
			n++
		}
		return float64(n) / time.Since(t0).Seconds()
	}
	subs := 100
	if v := os.Getenv("GNMI_BENCH_SUBS"); v != "" {
		subs, _ = strconv.Atoi(v)
	}
	var mu sync.Mutex
	arrived := map[string]time.Time{} // port and Mtu -> when subscriber 0 saw it
	// subscribe opens the subscriptions and waits for their syncs; the
	// returned function closes them.
	subscribe := func() func() {
		sctx, scancel := context.WithCancel(ctx)
		var ready sync.WaitGroup
		for i := range subs {
			s, err := fx.c.Subscribe(sctx)
			if err != nil {
				b.Fatal(err)
			}
			s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
				Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
				Subscription: []*gpb.Subscription{{Path: p("swmgr", "/"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
			}}})
			ready.Add(1)
			go func() {
				synced := false
				for {
					r, err := s.Recv()
					if err != nil {
						if i == 0 && sctx.Err() == nil {
							b.Errorf("subscriber 0: %v", err)
						}
						return
					}
					if !synced && r.GetSyncResponse() {
						synced = true
						ready.Done()
					}
					if i != 0 {
						continue
					}
					now := time.Now()
					for _, u := range r.GetUpdate().GetUpdate() {
						el := u.GetPath().GetElem()
						if el[0].GetName() != "config" || el[1].GetName() != "Port" {
							continue
						}
						var o struct{ Mtu int64 }
						json.Unmarshal(u.GetVal().GetJsonVal(), &o)
						key := fmt.Sprint(el[1].GetKey()["IntfRef"], " ", o.Mtu)
						mu.Lock()
						if _, seen := arrived[key]; !seen {
							arrived[key] = now
						}
						mu.Unlock()
					}
				}
			}()
		}
		ready.Wait()
		return scancel
	}
	// Rounds without and with the subscribers, alternating, so that the
	// machine's other load weighs on both alike.
	var none, with float64
	const rounds = 4
	for range rounds {
		none += rate(time.Second) / rounds
		closeSubs := subscribe()
		with += rate(time.Second) / rounds
		closeSubs()
	}
	b.ReportMetric(with/none, "commits-100subs/none")
	b.ReportMetric(none, "commits/s-none")
	b.ReportMetric(with, "commits/s-100subs")

	defer subscribe()()
	// 100 commits a second for 5 s: commit start to notification.
	started := map[string]time.Time{}
	tick := time.NewTicker(10 * time.Millisecond)
	for range 500 {
		<-tick.C
		started[fmt.Sprint(port(seq), " ", mtu(seq))] = time.Now()
		commit(seq)
		seq++
	}
	tick.Stop()
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	var lat []time.Duration
	for ip, t0 := range started {
		if t1, ok := arrived[ip]; ok {
			lat = append(lat, t1.Sub(t0))
		}
	}
	mu.Unlock()
	if len(lat) < len(started) {
		b.Fatalf("%d of %d commits reached the subscriber", len(lat), len(started))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "notify-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "notify-p99-ms")
	for range b.N {
	}
}

// BenchmarkGetLeaf is one Get of one leaf, for profiles.
func BenchmarkGetLeaf(b *testing.B) {
	fx := start(b, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	get := &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fx.c.Get(ctx, get); err != nil {
			b.Fatal(err)
		}
	}
}
