package auth_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// remoteEnv is the benchmark environment plus tacquito's TACACS+ server
// on loopback, configured in the engine, and the service's aaa.Service
// following it.
func remoteEnv(b *testing.B) (*benchEnv, *aaa.Service, *aaatest.Tacacs) {
	e := newBenchEnv(b)
	tac := aaatest.StartTacacs(b, "bench-key", []aaatest.User{{Name: "remote", Password: "remote-password", PrivLvl: 15}})
	// The service's own (its SourceAddr is the simulated switch's: each
	// connection reads the address of the server's SourceIntf, ma1, which
	// has none).
	svc := e.central
	reg := e.eng.Registry()
	if _, err := e.eng.Apply(context.Background(), []engine.Edit{
		{Kind: reg.Lookup(model.Config, "TacacsGlobal"), Op: backend.Update, Target: engine.Target{Key: model.Object{"ProfileName": "default"}}, Fields: model.Object{"Enable": "true"}},
		{Kind: reg.Lookup(model.Config, "Tacacs"), Op: backend.Create, Fields: model.Object{"ServerIp": tac.Host, "Port": int64(tac.Port), "Secret": "bench-key", "AuthService": "login"}},
	}, engine.Meta{Source: "test"}, nil); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !svc.Configured() {
		if time.Now().After(deadline) {
			b.Fatal("the service did not read the TACACS+ configuration")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return e, svc, tac
}

// BenchmarkTacacsLogin is the latency of one remote login (a PAP
// authentication and the shell authorization that gives the role, two
// TACACS+ sessions) against tacquito's server on loopback, whose bcrypt
// check at the minimum cost answers in about a millisecond. p50 and p99
// are reported.
func BenchmarkTacacsLogin(b *testing.B) {
	_, svc, _ := remoteEnv(b)
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := svc.Login(context.Background(), "remote", "remote-password", "127.0.0.1")
		lat = append(lat, time.Since(start))
		if err != nil || !r.OK || r.Group != aaa.RoleAdmin {
			b.Fatalf("login: %+v %v", r, err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkCachedRemoteVsLocal compares, in one run, authenticated HTTPS
// GETs by ObjectId with the credentials of a remote (TACACS+) user, cached
// after the first request, with those of a local user, cached the same way:
// two HTTPS listeners in front of one handler, one with a verifier that
// asks the TACACS+ server, one with the local accounts only. Every worker
// alternates its requests between them, so that both see the same machine
// at the same moments (the machine is shared and its load swings); the
// ratio is the mean latency of the local requests over that of the remote
// ones (remote throughput / local). Target: ratio >= 0.9.
func BenchmarkCachedRemoteVsLocal(b *testing.B) {
	e, svc, _ := remoteEnv(b)
	remote := auth.NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) { return "", false, nil },
		auth.VerifierOptions{Remote: func(ctx context.Context, name, password string) (auth.RemoteResult, error) {
			r, err := svc.Login(ctx, name, password, "")
			return auth.RemoteResult{Answered: r.Answered, OK: r.OK, Group: r.Group, TTL: r.TTL}, err
		}})
	urls := [2]string{e.secureURL, e.secureWith(remote)}
	authz := [2]string{e.authorization, "Basic " + base64.StdEncoding.EncodeToString([]byte("remote:remote-password"))}
	// Warm up: the first request of each checks its password once and
	// caches it; then connections and TLS handshakes.
	for i := range urls {
		e.rateOf(b, urls[i], e.tlsClient, authz[i], 1)
		e.rateOf(b, urls[i], e.tlsClient, authz[i], 500)
	}
	var total [2]atomic.Int64 // nanoseconds
	var count [2]atomic.Int64
	var left atomic.Int64
	left.Store(int64(b.N) * 2000)
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs [2]*http.Request
			for i := range reqs {
				reqs[i], _ = http.NewRequest("GET", urls[i], nil)
				reqs[i].Header.Set("Authorization", authz[i])
			}
			for n := 0; left.Add(-1) >= 0; n++ {
				i := n % 2
				start := time.Now()
				resp, err := e.tlsClient.Do(reqs[i])
				if err != nil {
					failed.Store(err.Error())
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Store(fmt.Sprintf("%s: status %d", urls[i], resp.StatusCode))
					return
				}
				total[i].Add(int64(time.Since(start)))
				count[i].Add(1)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	mean := func(i int) float64 { return float64(total[i].Load()) / float64(count[i].Load()) }
	b.ReportMetric(mean(0)/1e3, "local-us/req")
	b.ReportMetric(mean(1)/1e3, "remote-us/req")
	b.ReportMetric(mean(0)/mean(1), "ratio(target>=0.9)")
}
