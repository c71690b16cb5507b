package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/peercred"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// benchEnv is swmgr's REST handler behind two listeners, wired as `swmgr
// serve` wires them: plain HTTP on loopback (no credentials) and HTTPS with
// Basic credentials checked against yescrypt hashes in account files.
type benchEnv struct {
	plainURL, secureURL string
	plainURLs           []string
	plainClient         *http.Client
	tlsClient           *http.Client
	authorization       string
	// secureWith serves the REST handler on another HTTPS listener with
	// verifier v, and returns the URL of the benchmark's object there.
	secureWith func(v *auth.Verifier) string
	eng        *engine.Engine
	central    *aaa.Service // the service's central AAA, as serve has it
}

const benchWorkers = 16

// newBenchEnv makes the environment; each of creds is the peer lookup of
// one more plain listener (plainURLs; nil: peercred.Of), the first of which
// is plainURL.
func newBenchEnv(b *testing.B, creds ...func(net.Conn) (peercred.Cred, error)) *benchEnv {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	box, err := secrets.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.FilesOptions{Scheme: accounts.Yescrypt})
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	verifier := auth.NewVerifier(auth.AccountsCheck(acc, func(ctx context.Context, name string) (bool, error) { return users.Exists(ctx, st, name) }), auth.VerifierOptions{})
	svc, err := service.Open(ctx, service.Options{Store: st, Box: box, DataDir: dir, Version: "bench", Log: log, Dataplane: service.Sim, Ports: 4,
		Accounts: accounts.Observe(acc, verifier.Forget), OwnAccounts: true, Lifecycle: lifecycle.Options{NoScheduler: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	eng := svc.Engine
	reg := eng.Registry()
	out, err := eng.Apply(ctx, []engine.Edit{
		{Kind: reg.Lookup(model.Config, "User"), Op: backend.Create, Fields: model.Object{"Name": "bench", "Group": "operator", "Password": "bench-password"}},
		{Kind: reg.Lookup(model.Config, "NtpServer"), Op: backend.Create, Fields: model.Object{"IpAddr": "192.0.2.1"}},
	}, engine.Meta{Source: "test"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	path := "/public/v1/config/NtpServer/" + out.IDs[1].String()

	handler := svc.Handler
	throttle := auth.NewThrottle(auth.ThrottleOptions{})
	newPeers := func(cred func(net.Conn) (peercred.Cred, error)) *auth.Peers {
		return auth.NewPeers(auth.PeerOptions{UserGroup: func(ctx context.Context, name string) (string, bool, error) {
			ok, err := users.Exists(ctx, eng.Store(), name)
			return "operator", ok, err
		}, Cred: cred})
	}
	serve := func(h http.Handler, cfg *tls.Config, peers *auth.Peers) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: h, TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second, ConnContext: peers.ConnContext}
		if cfg != nil {
			go srv.ServeTLS(ln, "", "")
		} else {
			go srv.Serve(ln)
		}
		b.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)

	e := &benchEnv{authorization: "Basic " + base64.StdEncoding.EncodeToString([]byte("bench:bench-password"))}
	if len(creds) == 0 {
		creds = append(creds, nil)
	}
	for _, cred := range creds {
		peers := newPeers(cred)
		e.plainURLs = append(e.plainURLs, "http://"+serve(auth.Handler(handler, auth.Options{Verifier: verifier, Throttle: throttle, Peers: peers, Log: log, Access: handler.Access}), nil, peers)+path)
	}
	e.plainURL = e.plainURLs[0]
	e.eng, e.central = eng, svc.AAA
	e.secureWith = func(v *auth.Verifier) string {
		return "https://" + serve(auth.Handler(handler, auth.Options{Verifier: v, Throttle: throttle, Log: log, Access: handler.Access}), tlscert.Config(cert), newPeers(nil)) + path
	}
	e.secureURL = "https://" + serve(auth.Handler(handler, auth.Options{Verifier: verifier, Throttle: throttle, Log: log, Access: handler.Access}), tlscert.Config(cert), newPeers(nil)) + path
	// The same kind of client for both: HTTP/1.1 with keep-alive.
	e.plainClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}}
	e.tlsClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return e
}

// rate sends n GET requests from benchWorkers goroutines and returns
// requests per second.
func (e *benchEnv) rate(b *testing.B, secure bool, n int) float64 {
	url, client, authz := e.plainURL, e.plainClient, ""
	if secure {
		url, client, authz = e.secureURL, e.tlsClient, e.authorization
	}
	return e.rateOf(b, url, client, authz, n)
}

// rateOf sends n GET requests of url with authz from benchWorkers
// goroutines and returns requests per second.
func (e *benchEnv) rateOf(b *testing.B, url string, client *http.Client, authz string, n int) float64 {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", url, nil)
			if authz != "" {
				req.Header.Set("Authorization", authz)
			}
			for left.Add(-1) >= 0 {
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Store(fmt.Sprintf("status %d", resp.StatusCode))
					return
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatalf("GET %s: %v", url, f)
	}
	return float64(n) / time.Since(start).Seconds()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkAuthGetByID compares, in one run, authenticated HTTPS GETs by
// ObjectId (Basic credentials on every request, as clients send them)
// with unauthenticated plain-HTTP GETs by ObjectId on loopback. Each
// iteration is one round of each, alternated; the medians are reported.
// Target: ratio >= 0.7 (bench/auth.sh checks it).
func BenchmarkAuthGetByID(b *testing.B) {
	e := newBenchEnv(b)
	const perRound = 4000
	// Warm up: one request first, so the password is checked once and
	// cached (a burst of first logins would start more checks at once than
	// the throttle lets one user and address begin, and get 429s), then
	// connections and TLS handshakes.
	e.rate(b, true, 1)
	e.rate(b, false, 500)
	e.rate(b, true, 500)
	var plain, secure []float64
	b.ResetTimer()
	for range b.N {
		plain = append(plain, e.rate(b, false, perRound))
		secure = append(secure, e.rate(b, true, perRound))
	}
	b.StopTimer()
	p, s := median(plain), median(secure)
	b.ReportMetric(p, "plain-req/s")
	b.ReportMetric(s, "https-auth-req/s")
	b.ReportMetric(s/p, "ratio(target>=0.85)")
}

// BenchmarkLoopbackPeerCheck compares, in one run, plain-HTTP GETs by
// ObjectId on loopback without credentials, each on a new connection (so
// that each pays the kernel lookup of its peer), with the peer check as it
// is (peercred.Of: only the client's live socket counts) and as it was
// before that check (whatever the kernel answered for the client's
// address): two listeners in front of one handler, one with each check,
// and every worker alternates its requests between them, so that both
// see the same machine at the same moments. The ratio is the mean latency
// before over the mean latency now (throughput now / before). Target:
// ratio >= 0.95.
func BenchmarkLoopbackPeerCheck(b *testing.B) {
	lenient := func(c net.Conn) (peercred.Cred, error) {
		for {
			nc, ok := c.(interface{ NetConn() net.Conn })
			if !ok {
				break
			}
			c = nc.NetConn()
		}
		remote := c.RemoteAddr().(*net.TCPAddr).AddrPort()
		local := c.LocalAddr().(*net.TCPAddr).AddrPort()
		s, err := peercred.TCPSocket(remote, local)
		return peercred.Cred{UID: s.UID}, err
	}
	e := newBenchEnv(b, lenient, nil)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(url string) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), nil
	}
	const perIteration = 2000
	var spent [2]atomic.Int64 // ns: before, now
	var done [2]atomic.Int64
	run := func(n int, record bool) {
		var left atomic.Int64
		left.Store(int64(n))
		var wg sync.WaitGroup
		var failed atomic.Value
		for w := range benchWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; left.Add(-1) >= 0; i++ {
					which := i % 2 // each worker alternates, starting on either
					d, err := get(e.plainURLs[which])
					if err != nil {
						failed.Store(err.Error())
						return
					}
					if record {
						spent[which].Add(int64(d))
						done[which].Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			b.Fatal(f)
		}
	}
	run(1000, false)
	b.ResetTimer()
	for range b.N {
		run(perIteration, true)
	}
	b.StopTimer()
	before := float64(spent[0].Load()) / float64(done[0].Load())
	now := float64(spent[1].Load()) / float64(done[1].Load())
	b.ReportMetric(before/1e3, "before-us/req")
	b.ReportMetric(now/1e3, "strict-us/req")
	b.ReportMetric(before/now, "ratio(target>=0.95)")
}
