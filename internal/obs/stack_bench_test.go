package obs_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/testserver"
)

// BenchmarkStackGetByID is the CPU and the allocations of one GET by
// ObjectId in the handlers that swmgr serve puts in front of the engine,
// without the network: each sub-benchmark calls ServeHTTP with a fresh
// header map (as net/http makes one per request) on a request whose context
// is a loopback connection's (the peer identity slot of the plain
// listener):
//
//   - bare: what bench/run.sh's bare server does (copy three headers, one Write);
//   - api: the REST handler alone;
//   - auth: authentication (the local peer) and the REST handler;
//   - serve: the access log (text, to a file through the line buffer, as
//     serve's redirected stderr) and the metrics around both, as serve
//     builds it.
//
// The difference serve - bare is what a request costs swmgr beyond net/http
// (bench/run.sh (a) adds the kernel's and net/http's own cost to both):
//
//	go test -run '^$' -bench StackGetByID -benchmem ./internal/obs/
func BenchmarkStackGetByID(b *testing.B) {
	m := obs.NewMetrics()
	accessLog := benchAccessLog(b, "text")
	var authed, served http.Handler
	s, err := testserver.Start("", testserver.Options{Outer: func(h http.Handler) http.Handler {
		authed = h
		served = obs.Wrap(h, obs.HandlerOptions{Access: accessLog, Metrics: m})
		return served
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/public/v1/config/NtpServer", "application/json", strings.NewReader(`{"IpAddr":"10.0.0.1"}`))
	if err != nil {
		b.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	i := strings.Index(string(created), `"ObjectId":"`)
	path := "/public/v1/config/NtpServer/" + string(created[i+12:i+48])

	// A real loopback connection, so that the peer lookup is the kernel's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	conn, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, conn.LocalAddr())
	ctx = s.ConnContext(ctx, conn)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.RemoteAddr = client.LocalAddr().String()
	req.RequestURI = path

	// The bare handler serves what swmgr answers, as bench/bareserver does.
	probe := &benchWriter{h: http.Header{}}
	s.Handler.ServeHTTP(probe, req)
	if probe.status != 200 {
		b.Fatalf("GET %s: %d", path, probe.status)
	}
	header, body := probe.h.Clone(), append([]byte(nil), probe.body...)
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"api", s.Handler}, {"auth", authed}, {"serve", served}} {
		b.Run(c.name, func(b *testing.B) {
			w := &benchWriter{}
			b.ReportAllocs()
			for b.Loop() {
				w.h, w.status, w.body = http.Header{}, 0, w.body[:0]
				c.h.ServeHTTP(w, req)
			}
			if w.status != 200 || string(w.body) != string(body) {
				b.Fatalf("%s answered %d %q, want 200 %q", c.name, w.status, w.body, body)
			}
		})
	}
}

// benchWriter keeps the answer, as a connection's buffer would.
type benchWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, p...)
	return len(p), nil
}
