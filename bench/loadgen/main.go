// Command loadgen is the HTTP load generator of bench/run.sh. It keeps -c
// keep-alive connections busy for -d (or until -n requests are done), each
// connection sending one request after the other, and prints one line of
// key=value figures:
//
//	requests=N errors=E seconds=S rps=R p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..
//
// The body template may hold {n}, replaced by a counter (starting at -start),
// and {ip}, replaced by the 10.x.y.z address made from that counter, so that
// every create carries a unique key. A response with a status other than
// -expect (default 200 for GET, 201 for POST) counts as an error; loadgen
// exits with status 1 if any request failed, after printing its figures and
// the first failure.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "target URL (required)")
	method := flag.String("method", http.MethodGet, "HTTP method")
	conns := flag.Int("c", 16, "concurrent keep-alive connections (one request in flight on each)")
	dur := flag.Duration("d", 5*time.Second, "run for this long (ignored when -n is given)")
	total := flag.Int64("n", 0, "send exactly this many requests, then stop (0: run for -d)")
	tmpl := flag.String("body-template", "", "request body; {n} is the request counter, {ip} the 10.x.y.z address made from it")
	start := flag.Int64("start", 0, "first value of the request counter")
	expect := flag.Int("expect", 0, "expected status (0: 201 for POST, else 200)")
	timeout := flag.Duration("timeout", 30*time.Second, "per-request timeout")
	transport := flag.Bool("transport", false, "send through net/http's client Transport instead of loadgen's own HTTP/1.1 connections (which cost the generator less CPU per request: see conn.go)")
	flag.Parse()
	if *url == "" || *conns < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *expect == 0 {
		*expect = http.StatusOK
		if *method == http.MethodPost {
			*expect = http.StatusCreated
		}
	}
	res := run(config{
		url: *url, method: *method, conns: *conns, dur: *dur, total: *total,
		tmpl: *tmpl, start: *start, expect: *expect, timeout: *timeout, transport: *transport,
	})
	fmt.Println(res.String())
	if res.errors > 0 {
		fmt.Fprintf(os.Stderr, "loadgen: %d of %d requests failed; first: %v\n", res.errors, res.requests, res.firstErr)
		os.Exit(1)
	}
}

type config struct {
	url, method string
	conns       int
	dur         time.Duration
	total       int64
	tmpl        string
	start       int64
	expect      int
	timeout     time.Duration
	transport   bool // net/http's Transport instead of the plain connections of conn.go
}

type result struct {
	requests, errors int64
	elapsed          time.Duration
	lat              []time.Duration // sorted
	firstErr         error
}

func (r result) pct(p float64) float64 {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(p * float64(len(r.lat)-1))
	return float64(r.lat[i].Nanoseconds()) / 1e6
}

func (r result) String() string {
	secs := r.elapsed.Seconds()
	return fmt.Sprintf("requests=%d errors=%d seconds=%.3f rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f",
		r.requests, r.errors, secs, float64(r.requests)/secs, r.pct(0.5), r.pct(0.9), r.pct(0.99), r.pct(1))
}

func run(cfg config) result {
	newSender, closeAll, err := senders(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	defer closeAll()

	var (
		counter  atomic.Int64 // next counter value, relative to cfg.start
		errs     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	lats := make([][]time.Duration, cfg.conns)
	ctx := context.Background()
	if cfg.total == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.dur)
		defer cancel()
	}
	fail := func(err error) {
		errs.Add(1)
		errOnce.Do(func() { firstErr = err })
	}
	begin := time.Now()
	for w := range cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send := newSender(ctx)
			defer send.close()
			mine := make([]time.Duration, 0, 4096)
			defer func() { lats[w] = mine }()
			var body []byte
			for ctx.Err() == nil {
				i := counter.Add(1) - 1
				if cfg.total > 0 && i >= cfg.total {
					return
				}
				body = body[:0]
				if cfg.tmpl != "" {
					body = expand(body, cfg.tmpl, cfg.start+i)
				}
				t0 := time.Now()
				status, answer, err := send.do(ctx, body)
				d := time.Since(t0)
				switch {
				case err != nil:
					if ended(ctx) {
						return // the run ended while this request was in flight: not counted
					}
					fail(err)
				case status != cfg.expect:
					fail(fmt.Errorf("%s %s: status %d, want %d: %.300s", cfg.method, cfg.url, status, cfg.expect, answer))
				default:
					mine = append(mine, d)
				}
			}
		}()
	}
	wg.Wait()
	res := result{elapsed: time.Since(begin), errors: errs.Load(), firstErr: firstErr}
	for _, l := range lats {
		res.lat = append(res.lat, l...)
	}
	slices.Sort(res.lat)
	res.requests = int64(len(res.lat)) + res.errors
	return res
}

// ended reports whether the run's time is up: a dial or read whose
// deadline is the run's can fail before the context's own timer has
// marked it done.
func ended(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(dl)
}

// sender sends the requests of one worker, one at a time.
type sender interface {
	// do sends one request with body (none when empty) and returns the
	// answer's status and body (valid until the next call).
	do(ctx context.Context, body []byte) (status int, answer []byte, err error)
	close()
}

// senders returns how to make the sender of each worker: loadgen's own
// connections (conn.go), or with cfg.transport net/http's client.
func senders(cfg config) (func(context.Context) sender, func(), error) {
	if !cfg.transport {
		target, err := parseTarget(cfg.url)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) sender { return newConnSender(ctx, cfg, target) }, func() {}, nil
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.conns,
		MaxIdleConnsPerHost: cfg.conns,
		MaxConnsPerHost:     cfg.conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	client := &http.Client{Transport: tr, Timeout: cfg.timeout}
	return func(context.Context) sender { return &clientSender{client: client, cfg: cfg} }, tr.CloseIdleConnections, nil
}

// clientSender sends through net/http's client.
type clientSender struct {
	client *http.Client
	cfg    config
}

func (s *clientSender) do(ctx context.Context, body []byte) (int, []byte, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, s.cfg.method, s.cfg.url, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b, err
}

func (s *clientSender) close() {}

// expand appends tmpl to dst with {n} and {ip} replaced for counter n.
func expand(dst []byte, tmpl string, n int64) []byte {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return append(dst, tmpl...)
		}
		dst = append(dst, tmpl[:i]...)
		rest := tmpl[i:]
		switch {
		case strings.HasPrefix(rest, "{n}"):
			dst = strconv.AppendInt(dst, n, 10)
			tmpl = rest[len("{n}"):]
		case strings.HasPrefix(rest, "{ip}"):
			dst = appendIP(dst, n)
			tmpl = rest[len("{ip}"):]
		default:
			dst = append(dst, '{')
			tmpl = rest[1:]
		}
	}
}

// appendIP appends the IPv4 address 10.x.y.z numbered n (n < 2^24).
func appendIP(dst []byte, n int64) []byte {
	dst = append(dst, "10."...)
	dst = strconv.AppendInt(dst, (n>>16)&255, 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, (n>>8)&255, 10)
	dst = append(dst, '.')
	return strconv.AppendInt(dst, n&255, 10)
}
