package test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// scaleUsers are the users of BenchmarkGNMIThousandSubscribers's
// subscribers: one user (and one connection) holds at most 64 Subscribe
// streams (gnmi.DefaultUserSubscriptions, DefaultConnSubscriptions), so
// 1,000 streams are 50 users' 20 each, each user on its own connection,
// and the 600 stalled ones 10 users' 60, as fleet tools spread over
// several collectors would be. The bounds are swmgr's defaults, not
// raised.
const (
	scaleLiveUsers    = 50
	scaleLivePerUser  = 20
	scaleStallUsers   = 10
	scaleStallPerUser = 60
	scalePassword     = "scale-password-1"
)

// BenchmarkGNMIThousandSubscribers: one `swmgr serve --ports 64 --gnmi
// --https` process under 200 commits a second (REST PATCHes of a port's
// Mtu from 16 workers, offered on a 5 ms clock for 10 s), with:
//
//   - none (the baseline);
//   - 1,000 gNMI STREAM subscriptions ON_CHANGE of / (TLS, the users'
//     metadata credentials; initial values, then every commit and every
//     change of state), each read and decoded (protobuf) by its client;
//   - 1,000 change-feed subscribers over HTTPS (SSE, Basic credentials),
//     each reading every event;
//   - the 1,000 gNMI subscriptions again beside 600 that never read past
//     their first response (their HTTP/2 windows 64 KiB).
//
// The subscribers are another process (this test binary re-executed:
// TestHelperScaleSubscribers), so that their CPU is not swmgr's; both
// share the machine's cores. Figures per case: commits/s, commit p50 and
// p99 (request to answer), swmgr's peak RSS during the load (VmHWM reset
// after the subscribers are set up) and while they were set up, its CPU
// as a share of a core and per commit, the subscribers' processes' CPU
// per commit (CPU per commit is what other work on the shared machine
// moves least), what the subscribers received, and for the live gNMI
// subscribers the time from a commit to its notification (the
// notification's timestamp, its last commit's time, to its arrival
// decoded; both processes read the same clock). --max-conns-per-client
// is raised so that 1,000 HTTPS connections from loopback are served at
// all.
func BenchmarkGNMIThousandSubscribers(b *testing.B) {
	httpsAddr := freeAddr(b)
	g := startGNMIServer(b, "", "--ports", "64", "--https", httpsAddr, "--max-conns-per-client", "4096")
	pid := g.cmd.Process.Pid
	for i := range scaleLiveUsers {
		g.expect(b, 201, "POST", "/config/User", fmt.Sprintf(`{"Name":"live%d","Group":"users","Password":%q}`, i, scalePassword))
	}
	for i := range scaleStallUsers {
		g.expect(b, 201, "POST", "/config/User", fmt.Sprintf(`{"Name":"stall%d","Group":"users","Password":%q}`, i, scalePassword))
	}
	ports := map[string]string{} // IntfRef -> ObjectId
	for i := 1; i <= 8; i++ {
		r := g.expect(b, 200, "PATCH", "/config/Port", fmt.Sprintf(`{"IntfRef":"fpPort%d","Mtu":1500}`, i))
		ports[fmt.Sprint("fpPort", i)] = r.str("ObjectId")
	}

	// helper starts the subscribers' process in mode and waits until its
	// subscribers are set up.
	type helper struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		lines *bufio.Scanner
	}
	startHelper := func(mode string) *helper {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScaleSubscribers$")
		cmd.Env = append(os.Environ(), "SWMGR_SCALE_MODE="+mode, "SWMGR_SCALE_GNMI="+g.gnmiAddr, "SWMGR_SCALE_HTTPS="+httpsAddr,
			"SWMGR_SCALE_CERT="+filepath.Join(g.dir, "tls-cert.pem"))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		h := &helper{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
		if !h.lines.Scan() || h.lines.Text() != "ready" {
			b.Fatalf("the %s subscribers' process said %q", mode, h.lines.Text())
		}
		return h
	}
	stopHelper := func(name, mode string, h *helper) {
		h.stdin.Close()
		for h.lines.Scan() {
			line := h.lines.Text()
			var p50, p99 float64
			if _, err := fmt.Sscanf(line, "notify p50 %f ms p99 %f ms", &p50, &p99); err == nil {
				b.ReportMetric(p50, "notify-p50-ms-"+name)
				b.ReportMetric(p99, "notify-p99-ms-"+name)
			}
			b.Logf("%s subscribers: %s", mode, line)
		}
		h.cmd.Wait()
	}

	// load offers 200 commits a second for 10 s; it returns the commits
	// answered a second and their latencies, sorted.
	load := func() (float64, []time.Duration) {
		const rate, window, workers = 200, 10 * time.Second, 16
		work := make(chan int, rate*int(window/time.Second))
		var mu sync.Mutex
		var lat []time.Duration
		var failed atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		var last atomic.Int64 // when the last answer came, since t0
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					port := fmt.Sprint("fpPort", i%8+1)
					s := time.Now()
					r, err := g.call("PATCH", "/config/Port/"+ports[port], fmt.Sprintf(`{"Mtu":%d}`, 1000+i%8000))
					d := time.Since(s)
					if err != nil || r.code != 200 {
						failed.Add(1)
						continue
					}
					last.Store(int64(time.Since(t0)))
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		tick := time.NewTicker(time.Second / rate)
		for i := 0; time.Since(t0) < window; i++ {
			<-tick.C
			work <- i
		}
		tick.Stop()
		close(work)
		wg.Wait()
		if n := failed.Load(); n > 0 {
			b.Errorf("%d commits failed", n)
		}
		slices.Sort(lat)
		return float64(len(lat)) / time.Duration(last.Load()).Seconds(), lat
	}
	kib := func(field string) float64 { return float64(procKiB(b, pid, field)) / 1024 }
	var none float64
	run := func(name string, modes ...string) {
		resetPeak(b, pid)
		var hs []*helper
		for _, m := range modes {
			hs = append(hs, startHelper(m))
		}
		setupPeak := kib("VmHWM")
		time.Sleep(2 * time.Second) // the first polls of the new subscriptions
		resetPeak(b, pid)
		cpu := processCPU(b, pid)
		var subsCPU time.Duration // the subscribers' processes'
		for _, h := range hs {
			subsCPU -= processCPU(b, h.cmd.Process.Pid)
		}
		t0 := time.Now()
		perSecond, lat := load()
		used := processCPU(b, pid) - cpu
		cpuShare := float64(used) / float64(time.Since(t0))
		for _, h := range hs {
			subsCPU += processCPU(b, h.cmd.Process.Pid)
		}
		b.ReportMetric(perSecond, "commits/s-"+name)
		if name == "none" {
			none = perSecond
		} else {
			b.ReportMetric(perSecond/none, "commits-"+name+"/none")
		}
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "commit-p50-ms-"+name)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "commit-p99-ms-"+name)
		b.ReportMetric(kib("VmHWM"), "peak-rss-MiB-"+name)
		b.ReportMetric(setupPeak, "setup-peak-rss-MiB-"+name)
		b.ReportMetric(100*cpuShare, "cpu%-of-a-core-"+name)
		// The CPU a commit costs, whatever else the machine runs: swmgr's,
		// and its subscribers' (reading, decrypting, decoding).
		b.ReportMetric(float64(used.Microseconds())/1000/float64(len(lat)), "cpu-ms/commit-"+name)
		if len(hs) > 0 {
			b.ReportMetric(float64(subsCPU.Microseconds())/1000/float64(len(lat)), "subscribers-cpu-ms/commit-"+name)
		}
		for i, h := range hs {
			stopHelper(name, modes[i], h)
		}
	}
	run("none")
	run("gnmi1000", "gnmi")
	run("sse1000", "sse")
	run("gnmi1000+600stalled", "gnmi", "stalled")
	for range b.N {
	}
}

// TestHelperScaleSubscribers is BenchmarkGNMIThousandSubscribers's
// subscribers' process, in SWMGR_SCALE_MODE: "gnmi" (the live users'
// 1,000 STREAM subscriptions ON_CHANGE of /, each decoded), "sse" (1,000
// change-feed streams over HTTPS, each read) or "stalled" (600
// subscriptions of / that read their first response and no more). It
// says "ready" once every subscription is set up (synced; for the
// stalled, its first response read), and when its standard input ends,
// what its subscribers received (for "gnmi", the p50 and p99 of the
// time from a commit to its notification: notifyLatency), then exits.
func TestHelperScaleSubscribers(t *testing.T) {
	mode := os.Getenv("SWMGR_SCALE_MODE")
	if mode == "" {
		t.Skip("helper process for BenchmarkGNMIThousandSubscribers")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var received, ended atomic.Int64 // notifications (events), streams ended early
	var latency notifyLatency
	var ready sync.WaitGroup
	tlsCreds, err := credentials.NewClientTLSFromFile(os.Getenv("SWMGR_SCALE_CERT"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "gnmi", "stalled":
		users, per, prefix := scaleLiveUsers, scaleLivePerUser, "live"
		opts := []grpc.DialOption{grpc.WithTransportCredentials(tlsCreds)}
		if mode == "stalled" {
			users, per, prefix = scaleStallUsers, scaleStallPerUser, "stall"
			opts = append(opts, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
		}
		for u := range users {
			conn, err := grpc.NewClient(os.Getenv("SWMGR_SCALE_GNMI"), append(opts, grpc.WithPerRPCCredentials(passCreds{fmt.Sprint(prefix, u), scalePassword}))...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := gpb.NewGNMIClient(conn)
			// One login per user first, one user after the other (as
			// collectors that reconnect find their password checked):
			// 1,000 logins at once are refused by the bound on password
			// checks under way.
			if _, err := c.Capabilities(ctx, &gpb.CapabilityRequest{}); err != nil {
				t.Fatal(err)
			}
			for range per {
				s, err := c.Subscribe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
					Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF,
					Subscription: []*gpb.Subscription{{Path: &gpb.Path{}, Mode: gpb.SubscriptionMode_ON_CHANGE}},
				}}})
				ready.Add(1)
				go func() {
					synced := false
					for {
						r, err := s.Recv()
						if err != nil {
							if !synced {
								ready.Done()
							}
							if ctx.Err() == nil && ended.Add(1) <= 3 {
								fmt.Fprintf(os.Stderr, "a %s subscription ended: %v\n", mode, err)
							}
							return
						}
						if mode == "stalled" {
							ready.Done()
							<-ctx.Done()
							return
						}
						if !synced && r.GetSyncResponse() {
							synced = true
							ready.Done()
						}
						if n := r.GetUpdate(); synced && n != nil {
							latency.add(n)
						}
						received.Add(1)
					}
				}()
			}
		}
	case "sse":
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(os.Getenv("SWMGR_SCALE_CERT"))
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("the server's certificate: %v", err)
		}
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}, MaxConnsPerHost: 0}
		c := &http.Client{Transport: tr}
		for i := range scaleLiveUsers * scaleLivePerUser {
			if i == scaleLiveUsers {
				time.Sleep(time.Second) // the first streams' logins cached
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+os.Getenv("SWMGR_SCALE_HTTPS")+"/public/v1/events", nil)
			req.SetBasicAuth(fmt.Sprint("live", i%scaleLiveUsers), scalePassword)
			// Each stream its own connection, as separate subscribers.
			req.Close = true
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("GET /events: %s", resp.Status)
			}
			go func() {
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "data:") {
						received.Add(1)
					}
				}
				if ctx.Err() == nil {
					ended.Add(1)
				}
			}()
		}
	}
	ready.Wait()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	fmt.Println("received " + strconv.FormatInt(received.Load(), 10) + ", streams ended early " + strconv.FormatInt(ended.Load(), 10))
	if p50, p99, ok := latency.quantiles(); ok {
		fmt.Printf("notify p50 %.1f ms p99 %.1f ms\n", p50, p99)
	}
	cancel()
	os.Exit(0)
}

// notifyLatency counts the times from commits to their notifications at
// the subscribers, in buckets of notifyBucket up to notifyBuckets of them
// (the last holds everything longer): counters, so that 1,000 subscribers
// add to it without a lock.
type notifyLatency struct {
	n [notifyBuckets]atomic.Int64
}

const (
	notifyBucket  = 100 * time.Microsecond
	notifyBuckets = 50_000 // 5 s
)

// add counts a notification of the configuration (the change feed's: its
// timestamp is its last commit's time); state polls' are left out.
func (l *notifyLatency) add(n *gpb.Notification) {
	if len(n.GetUpdate()) == 0 && len(n.GetDelete()) == 0 {
		return
	}
	p := n.GetDelete()
	if len(n.GetUpdate()) > 0 {
		p = []*gpb.Path{n.GetUpdate()[0].GetPath()}
	}
	if e := p[0].GetElem(); len(e) == 0 || e[0].GetName() != "config" {
		return
	}
	d := time.Duration(time.Now().UnixNano() - n.GetTimestamp())
	l.n[min(max(int(d/notifyBucket), 0), notifyBuckets-1)].Add(1)
}

// quantiles are the p50 and p99, in milliseconds (a bucket's upper bound).
func (l *notifyLatency) quantiles() (p50, p99 float64, ok bool) {
	var total int64
	for i := range l.n {
		total += l.n[i].Load()
	}
	if total == 0 {
		return 0, 0, false
	}
	at := func(q float64) float64 {
		var seen int64
		for i := range l.n {
			if seen += l.n[i].Load(); float64(seen) >= q*float64(total) {
				return float64(time.Duration(i+1)*notifyBucket) / float64(time.Millisecond)
			}
		}
		return float64(notifyBuckets*notifyBucket) / float64(time.Millisecond)
	}
	return at(0.5), at(0.99), true
}
