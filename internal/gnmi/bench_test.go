package gnmi

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// The benchmarks compare gNMI with REST on the same engine, in one run,
// and report the ratios (docs/gnmi.md quotes them). Both go over loopback
// TCP without TLS.

func restServer(b *testing.B, fx *fixture) *httptest.Server {
	b.Helper()
	var h http.Handler = api.New(api.Options{Engine: fx.f.E, History: history.New(fx.f.E), Candidates: candidates.New(fx.f.E)})
	if o := fx.srv.o; o.Access != nil || o.Metrics != nil {
		h = obs.Wrap(h, obs.HandlerOptions{Access: o.Access, Metrics: o.Metrics})
	}
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
//
// With SWMGR_BENCH_OBS=1 both front doors write the access log (JSON, to
// io.Discard) and record the request metrics, as swmgr serve does.
func BenchmarkGNMIVsREST(b *testing.B) {
	fx := start(b, benchObs())
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
	const rounds, per, workers = 9, 3200, 16
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

// BenchmarkCommitsWithSubscribers measures, in one run, commit throughput
// (16 writers for a second) with 100 ON_CHANGE subscribers on / against
// none, and on /config against none: 7 rounds of each, every one compared
// with the mean of the rounds without subscribers just before and after
// it (medians of the rounds' ratios); and, at 100 commits a second, the
// time from a commit's answer (it is durable) to its notification at a
// subscriber on / (p50, p99; and p99 from the commit's start). The
// subscribers are another process, as they would be (this test binary
// re-executed: TestHelperGNMISubscribers), each on its own connection;
// all but the first skim what they receive (skimCodec), so that their
// process costs the shared cores little. SWMGR_GNMI_PATH sets the path
// of the latency's subscribers.
func BenchmarkCommitsWithSubscribers(b *testing.B) {
	const (
		writers = 16
		round   = time.Second
		subs    = 100
	)
	fx := start(b, Options{})
	var next atomic.Int64
	// Each commit changes one port's Mtu to a value the port had not in
	// the last 8,000 commits, so that its notification is told apart.
	port := func(i int64) string { return fmt.Sprint("fpPort", i%8+1) }
	mtu := func(i int64) int64 { return 1000 + i%8000 }
	commit := func() int64 {
		i := next.Add(1)
		fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": port(i), "Mtu": mtu(i)}))
		return i
	}
	// A round is 16 writers committing for a second: long enough for the
	// subscribers' notifications to settle at their sustained rate.
	run := func() float64 {
		var wg sync.WaitGroup
		var n atomic.Int64
		t0 := time.Now()
		end := t0.Add(round)
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					commit()
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / time.Since(t0).Seconds()
	}
	type arrival struct {
		key string
		at  time.Time
	}
	// The subscribers' process connects once; its subscriptions come and
	// go between rounds.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperGNMISubscribers$")
	cmd.Env = append(os.Environ(), "SWMGR_GNMI_SUBSCRIBERS="+strconv.Itoa(subs), "SWMGR_GNMI_ADDR="+fx.addr)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	arrivals := make(chan arrival, 1<<16)
	var recording atomic.Bool // arrivals are kept
	said := make(chan string)
	go func() {
		defer close(said)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch len(f) {
			case 1:
				said <- f[0]
			case 3:
				if !recording.Load() {
					continue
				}
				ns, _ := strconv.ParseInt(f[2], 10, 64)
				select {
				case arrivals <- arrival{f[0] + " " + f[1], time.Unix(0, ns)}:
				default:
				}
			}
		}
	}()
	expect := func(what string) {
		if got, ok := <-said; !ok || got != what {
			b.Fatalf("the subscribers' process said %q (ended: %v); want %q", got, !ok, what)
		}
	}
	expect("ready")
	// subscribe subscribes the 100 to path ("": none), and waits until
	// swmgr has them all (or none).
	subscribe := func(path string) {
		want := subs
		if path == "" {
			fmt.Fprintln(stdin, "unsubscribe")
			expect("unsubscribed")
			want = 0
		} else {
			fmt.Fprintln(stdin, "subscribe", path)
			expect("subscribed")
		}
		for fx.srv.feedSubscribers() != want {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // settled
	}
	// Each round with subscribers is compared with the mean of the rounds
	// without them just before and just after it (the machine's load
	// drifts); the figures are the medians of the rounds' ratios.
	const rounds = 9
	var without, with, withConfig, ratio, ratioConfig []float64
	withSubs := func(path string) float64 {
		subscribe(path)
		defer subscribe("")
		return run()
	}
	before := run()
	without = append(without, before)
	for range rounds {
		w := withSubs("/")
		after := run()
		with, ratio = append(with, w), append(ratio, 2*w/(before+after))
		wc := withSubs("/config")
		before = run()
		withConfig, ratioConfig = append(withConfig, wc), append(ratioConfig, 2*wc/(after+before))
		without = append(without, after, before)
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(median(ratio), "commits-100subs/none")
	b.ReportMetric(median(ratioConfig), "commits-100subs-config/none")
	b.ReportMetric(median(without), "commits/s-none")
	b.ReportMetric(median(with), "commits/s-100subs")
	b.ReportMetric(median(withConfig), "commits/s-100subs-config")

	// 100 commits a second for 5 s, one writer: commit start to the
	// notification at subscriber 0 that carries it, or a later value of
	// the same port (commits taken together come as one notification,
	// each path with its last value).
	subscribe(cmp.Or(os.Getenv("SWMGR_GNMI_PATH"), "/"))
	recording.Store(true)
	type sent struct {
		i      int64
		t0, t1 time.Time // the commit's start, and its answer (durable)
	}
	index := map[string]int64{}    // port and Mtu -> commit
	pending := map[string][]sent{} // port -> commits not seen yet, in order
	tick := time.NewTicker(10 * time.Millisecond)
	for range 500 {
		<-tick.C
		t0 := time.Now()
		i := commit()
		index[fmt.Sprint(port(i), " ", mtu(i))] = i
		pending[port(i)] = append(pending[port(i)], sent{i, t0, time.Now()})
	}
	tick.Stop()
	time.Sleep(time.Second)
	subscribe("") // what it received is in arrivals once it has said so
	recording.Store(false)
	close(arrivals)
	var lat, fromStart []time.Duration
	for a := range arrivals {
		j, ok := index[a.key]
		if !ok {
			continue
		}
		pt, _, _ := strings.Cut(a.key, " ")
		ps := pending[pt]
		for len(ps) > 0 && ps[0].i <= j {
			lat = append(lat, a.at.Sub(ps[0].t1))
			fromStart = append(fromStart, a.at.Sub(ps[0].t0))
			ps = ps[1:]
		}
		pending[pt] = ps
	}
	for pt, ps := range pending {
		if len(ps) > 0 {
			b.Fatalf("%d commits to %s did not reach the subscriber", len(ps), pt)
		}
	}
	slices.Sort(lat)
	slices.Sort(fromStart)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "notify-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "notify-p99-ms")
	b.ReportMetric(float64(fromStart[len(fromStart)*99/100].Microseconds())/1000, "start-to-notify-p99-ms")
	for range b.N {
	}
}

// TestHelperGNMISubscribers is BenchmarkCommitsWithSubscribers's
// subscribers' process: SWMGR_GNMI_SUBSCRIBERS connections to
// SWMGR_GNMI_ADDR, made once ("ready" when they are); then, for each line
// "subscribe <path>" on its standard input, a STREAM subscription
// ON_CHANGE to that path on each connection ("subscribed" once all are
// synced), and for each line "unsubscribe", their end ("unsubscribed").
// For each Port update the first subscription receives it prints
// "<port> <mtu> <unix ns>". It exits when its standard input ends.
func TestHelperGNMISubscribers(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SWMGR_GNMI_SUBSCRIBERS"))
	if n == 0 {
		t.Skip("helper process for BenchmarkCommitsWithSubscribers")
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(line string) {
		mu.Lock()
		fmt.Fprintln(out, line)
		out.Flush()
		mu.Unlock()
	}
	go func() {
		for {
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			out.Flush()
			mu.Unlock()
		}
	}()
	conns := make([]gpb.GNMIClient, n)
	for i := range conns {
		conns[i] = dial(t, os.Getenv("SWMGR_GNMI_ADDR"), creds{"admin", "admin-pass"})
		// The connection is made now, not at the first subscription.
		if _, err := conns[i].Capabilities(context.Background(), &gpb.CapabilityRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	say("ready")
	var cancel context.CancelFunc = func() {}
	var ended sync.WaitGroup
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, path, _ := strings.Cut(in.Text(), " ")
		cancel()
		ended.Wait()
		if cmd == "unsubscribe" {
			say("unsubscribed")
			continue
		}
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		var synced sync.WaitGroup
		for i, c := range conns {
			var opts []grpc.CallOption
			if i != 0 {
				opts = append(opts, grpc.ForceCodec(skimCodec{}))
			}
			s, err := c.Subscribe(ctx, opts...)
			if err != nil {
				t.Fatal(err)
			}
			s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
				Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
				Subscription: []*gpb.Subscription{{Path: p("swmgr", path), Mode: gpb.SubscriptionMode_ON_CHANGE}},
			}}})
			synced.Add(1)
			ended.Add(1)
			go func() {
				defer ended.Done()
				sync := false
				for {
					r, err := s.Recv()
					if err != nil {
						if !sync {
							synced.Done()
						}
						return
					}
					if !sync && r.GetSyncResponse() {
						sync = true
						synced.Done()
					}
					if i != 0 {
						continue
					}
					now := time.Now().UnixNano()
					for _, u := range r.GetUpdate().GetUpdate() {
						el := u.GetPath().GetElem()
						if len(el) < 2 || el[0].GetName() != "config" || el[1].GetName() != "Port" {
							continue
						}
						var o struct{ Mtu int64 }
						json.Unmarshal(u.GetVal().GetJsonVal(), &o)
						mu.Lock()
						fmt.Fprintln(out, el[1].GetKey()["IntfRef"], o.Mtu, now)
						mu.Unlock()
					}
				}
			}()
		}
		synced.Wait()
		say("subscribed")
	}
	cancel()
	mu.Lock()
	out.Flush()
	mu.Unlock()
	os.Exit(0)
}

// skimCodec is the codec of the benchmark's subscribers but the first:
// they read every notification off their connection as any client does,
// but decode only whether it is the sync_response, so that the
// subscribers' process, which shares the machine's cores with swmgr,
// costs little beside it. A collector decodes on its own machine.
type skimCodec struct{}

func (skimCodec) Name() string { return "proto" }

func (skimCodec) Marshal(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }

func (skimCodec) Unmarshal(data []byte, v any) error {
	r := v.(*gpb.SubscribeResponse)
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if num == 3 && typ == protowire.VarintType { // sync_response
			v, _ := protowire.ConsumeVarint(data)
			r.Response = &gpb.SubscribeResponse_SyncResponse{SyncResponse: v != 0}
		}
		n = protowire.ConsumeFieldValue(num, typ, data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
	}
	return nil
}

// benchObs is the Options of a benchmark's server: with SWMGR_BENCH_OBS=1,
// an access log (JSON, to io.Discard) and metrics.
func benchObs() Options {
	if os.Getenv("SWMGR_BENCH_OBS") != "1" {
		return Options{}
	}
	return Options{Access: obs.NewAccessLog(io.Discard, "json", slog.LevelInfo), Metrics: obs.NewMetrics()}
}

// BenchmarkGetLeaf is one Get of one leaf, for profiles (SWMGR_BENCH_OBS
// as BenchmarkGNMIVsREST).
func BenchmarkGetLeaf(b *testing.B) {
	fx := start(b, benchObs())
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

// BenchmarkGetHandler is the server's part of a Get of one leaf, without
// gRPC: what swmgr itself spends on the request, answered from the Get
// cache (cached) and read (read: the cache emptied before each Get, as
// after a commit).
func BenchmarkGetHandler(b *testing.B) {
	fx := start(b, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	get := &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF, Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll")}}
	ctx := context.Background()
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "read"}[cached], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !cached {
					fx.srv.gets.mu.Lock()
					fx.srv.gets.entries = nil
					fx.srv.gets.mu.Unlock()
				}
				if _, err := fx.srv.Get(ctx, get); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
