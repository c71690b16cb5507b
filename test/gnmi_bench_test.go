package test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// passCreds sends a user's name and password as gNMI clients do.
type passCreds struct{ user, password string }

func (c passCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": c.user, "password": c.password}, nil
}
func (passCreds) RequireTransportSecurity() bool { return true }

// processCPU is the CPU time (user and system) a process has used.
func processCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

// BenchmarkGNMISampleCPU: 100 subscribers sampling the counters of 64
// ports every second (OpenConfig, TLS): the CPU swmgr spends on them, as a
// share of one core (swmgr runs as its own process; the subscribers are
// this one).
func BenchmarkGNMISampleCPU(b *testing.B) {
	g := startGNMIServer(b, "", "--ports", "64")
	pid := g.cmd.Process.Pid
	tlsCreds, err := credentials.NewClientTLSFromFile(filepath.Join(g.dir, "tls-cert.pem"), "localhost")
	if err != nil {
		b.Fatal(err)
	}
	idle := func(d time.Duration) float64 {
		c0, t0 := processCPU(b, pid), time.Now()
		time.Sleep(d)
		return float64(processCPU(b, pid)-c0) / float64(time.Since(t0))
	}
	before := idle(5 * time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const subs = 100
	received := make(chan int, subs)
	// One login first: the other 99 find the password checked (as
	// collectors that reconnect do), not 100 checks at once.
	if out, ok := g.run(b, "admin", blackBoxAdminPassword, "-capabilities"); !ok {
		b.Fatal(out)
	}
	for range subs {
		// Each subscriber its own connection, as separate collectors have.
		conn, err := grpc.NewClient(g.gnmiAddr, grpc.WithTransportCredentials(tlsCreds), grpc.WithPerRPCCredentials(passCreds{"admin", blackBoxAdminPassword}))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		s, err := gpb.NewGNMIClient(conn).Subscribe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		err = s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF,
			Subscription: []*gpb.Subscription{{
				Path: &gpb.Path{Origin: "openconfig", Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "*"}}, {Name: "state"}, {Name: "counters"}}},
				Mode: gpb.SubscriptionMode_SAMPLE, SampleInterval: uint64(time.Second),
			}},
		}}})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			n := 0
			for {
				r, err := s.Recv()
				if err != nil {
					if ctx.Err() == nil {
						b.Errorf("a subscriber ended: %v", err)
					}
					received <- n
					return
				}
				n += len(r.GetUpdate().GetUpdate())
			}
		}()
	}
	time.Sleep(3 * time.Second) // every subscription set up and sampling
	const window = 10 * time.Second
	during := idle(window)
	cancel()
	total := 0
	for range subs {
		total += <-received
	}
	b.ReportMetric(100*during, "cpu%-of-a-core-100subs")
	b.ReportMetric(100*before, "cpu%-of-a-core-idle")
	b.ReportMetric(float64(total)/(window+3*time.Second).Seconds(), "leaves/s-received")
	for range b.N {
	}
}

// BenchmarkGNMIGetVsRESTGet compares the two front doors of one `swmgr
// serve` as a client meets them: a Get of one leaf over gNMI (TLS, the
// metadata credentials) against a REST GET by ObjectId over HTTPS (Basic
// credentials), both checked by the same login and credential cache, with
// the service's defaults (the access log on). 16 requests at once, each
// worker sending one after the other; the figures are ratios of
// throughputs (requests a second) and of swmgr's CPU time a request.
//
// Each protocol is used as its clients use it: REST's 16 workers each
// keep an HTTPS connection (HTTP/1.1 answers one request at a time on a
// connection), gNMI's share one gRPC connection (a client such as gnmic or
// pygnmi holds one channel to a target and sends concurrent RPCs on it as
// HTTP/2 streams). The same Gets from 16 gRPC connections (16 separate
// client programs) are measured too: "-conns" in the metric's name.
// Rounds of the three alternate, 9 of each.
func BenchmarkGNMIGetVsRESTGet(b *testing.B) {
	httpsAddr := freeAddr(b)
	g := startGNMIServer(b, "", "--https", httpsAddr)
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(filepath.Join(g.dir, "tls-cert.pem"))
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		b.Fatalf("the server's certificate: %v", err)
	}
	tlsConf := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	base := "https://" + httpsAddr + "/public/v1"
	var created struct{ ObjectId string }
	if r, err := g.call("POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`); err != nil || r.code != 201 {
		b.Fatalf("create: %v %v", r, err)
	} else if err := json.Unmarshal(r.raw, &created); err != nil {
		b.Fatal(err)
	}

	const workers, per, rounds = 16, 200, 9
	dial := func() gpb.GNMIClient {
		conn, err := grpc.NewClient(g.gnmiAddr, grpc.WithTransportCredentials(credentials.NewTLS(tlsConf)), grpc.WithPerRPCCredentials(passCreds{"admin", blackBoxAdminPassword}))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		return gpb.NewGNMIClient(conn)
	}
	type client struct {
		rest       *http.Client
		gnmi, conn gpb.GNMIClient // on the shared connection, on its own
	}
	shared := dial()
	clients := make([]client, workers)
	for i := range clients {
		clients[i] = client{
			rest: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: 1}},
			gnmi: shared,
			conn: dial(),
		}
	}
	restGet := func(c client) error {
		req, _ := http.NewRequest("GET", base+"/config/NtpServer/"+created.ObjectId, nil)
		req.SetBasicAuth("admin", blackBoxAdminPassword)
		resp, err := c.rest.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET: %d", resp.StatusCode)
		}
		return err
	}
	get := &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF, Path: []*gpb.Path{{Origin: "swmgr", Elem: []*gpb.PathElem{{Name: "config"}, {Name: "NtpServer", Key: map[string]string{"IpAddr": "10.0.0.1"}}, {Name: "MinPoll"}}}}}
	gnmiGet := func(c gpb.GNMIClient) error {
		r, err := c.Get(context.Background(), get)
		if err == nil && len(r.GetNotification()) != 1 {
			err = fmt.Errorf("Get: %v", r)
		}
		return err
	}
	sharedGet := func(c client) error { return gnmiGet(c.gnmi) }
	connGet := func(c client) error { return gnmiGet(c.conn) }
	round := func(fn func(client) error) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					if err := fn(c); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	// Every connection made and every credential cached before timing.
	kinds := []func(client) error{restGet, sharedGet, connGet}
	for _, fn := range kinds {
		round(fn)
	}
	pid := g.cmd.Process.Pid
	var took, cpu [3]time.Duration // REST, gNMI shared, gNMI own connections
	for range rounds {
		for i, fn := range kinds {
			c0 := processCPU(b, pid)
			took[i] += round(fn)
			cpu[i] += processCPU(b, pid) - c0
		}
	}
	n := float64(rounds * per * workers)
	for i, name := range []string{"", "-conns"} {
		g := i + 1
		b.ReportMetric(float64(took[0])/float64(took[g]), "get-gnmi"+name+"/rest-throughput")
		b.ReportMetric(float64(took[g].Microseconds())/n, "get-gnmi"+name+"-us")
		// What each costs swmgr (its CPU time a request): the clients
		// share the machine's cores here, not on a network.
		b.ReportMetric(float64(cpu[0])/float64(cpu[g]), "get-gnmi"+name+"/rest-server-cpu-throughput")
		b.ReportMetric(float64(cpu[g].Microseconds())/n, "get-gnmi"+name+"-server-cpu-us")
	}
	b.ReportMetric(float64(took[0].Microseconds())/n, "get-rest-us")
	b.ReportMetric(float64(cpu[0].Microseconds())/n, "get-rest-server-cpu-us")
	for range b.N {
	}
}
