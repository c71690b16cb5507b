package api

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/connlimit"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/syncbuf"
)

// TestEventStreamBytes: what a client of the change feed receives is, byte
// for byte, the Server-Sent Event of every revision after the one it
// resumes from (docs/api.md), whether net/http writes the stream (HTTP/1.0)
// or the handler took the connection over (HTTP/1.1, one chunk per batch):
// the revisions it resumes over, commits arriving concurrently in batches,
// and an event too large for the feed's ring that each subscriber reads
// from the store; over TCP, a Unix socket and a listener's own connection
// type that hides its connection (no writev). At shutdown the stream ends cleanly.
func TestEventStreamBytes(t *testing.T) {
	for _, tc := range []struct {
		name, network, proto string
		wrap                 bool // the listener wraps its connections (no writev)
	}{
		{"HTTP/1.1", "tcp", "HTTP/1.1", false},
		{"HTTP/1.0", "tcp", "HTTP/1.0", false},
		{"HTTP/1.1 over a Unix socket", "unix", "HTTP/1.1", false},
		{"HTTP/1.1 over a wrapped connection", "tcp", "HTTP/1.1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proto := tc.proto
			a := newAPIHarness(t)
			srv := a.h.(*Server)
			addr := a.srv.Listener.Addr().String()
			if tc.network == "unix" || tc.wrap {
				var ln net.Listener
				var err error
				if tc.network == "unix" {
					addr = filepath.Join(t.TempDir(), "swmgr.sock")
					ln, err = net.Listen("unix", addr)
				} else {
					ln, err = net.Listen("tcp", "127.0.0.1:0")
					addr = ln.Addr().String()
					ln = wrappingListener{ln}
				}
				if err != nil {
					t.Fatal(err)
				}
				hs := &http.Server{Handler: a.h}
				go hs.Serve(ln)
				t.Cleanup(func() { hs.Close() })
			}
			create := func(ip string) {
				resp, body := a.send("POST", "/config/NtpServer", nil, `{"IpAddr":"`+ip+`"}`)
				if resp.StatusCode != 201 {
					t.Errorf("create %s: %d %s", ip, resp.StatusCode, body)
				}
			}
			create("10.5.0.1")
			since := a.eng.Revision()
			create("10.5.0.2")
			create("10.5.0.3") // resumed over

			conn, err := net.Dial(tc.network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /public/v1/events %s\r\nHost: x\r\nLast-Event-ID: %d\r\n\r\n", proto, since)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"; chunked != (proto == "HTTP/1.1") {
				t.Fatalf("%s: transfer encoding %v", proto, resp.TransferEncoding)
			}
			if proto == "HTTP/1.1" { // the handler writes it, not net/http
				for deadline := time.Now().Add(20 * time.Second); srv.taken.count() != 1; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the HTTP/1.1 stream was not taken over from net/http")
					}
				}
			}
			var (
				mu       sync.Mutex
				got      []byte
				readErr  error
				readDone = make(chan struct{})
			)
			go func() {
				defer close(readDone)
				buf := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(buf)
					mu.Lock()
					got = append(got, buf[:n]...)
					mu.Unlock()
					if err != nil {
						if err != io.EOF {
							readErr = err
						}
						return
					}
				}
			}()

			// Commits while the client reads: concurrent single creates
			// (several per batch), and one commit of 2000 creates whose
			// event is too large for the ring.
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					create("10.6.0." + strconv.Itoa(i+1))
				}()
			}
			wg.Wait()
			big := commitCandidate(t, a, 2000)
			create("10.5.0.4")
			last := a.eng.Revision()

			var want []byte
			for rev := since + 1; rev <= last; rev++ {
				data, err := srv.hist.GetRevision(rev, nil)
				if err != nil {
					t.Fatal(err)
				}
				if rev == big && len(data) <= feed.MaxRingEvent {
					t.Fatalf("the commit of 2000 creates makes an event of %d bytes, not more than the ring keeps (%d)", len(data), feed.MaxRingEvent)
				}
				want = feed.AppendFrame(want, rev, data)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= len(want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			srv.CloseStreams()
			select {
			case <-readDone:
			case <-time.After(20 * time.Second):
				t.Fatal("the stream did not end at CloseStreams")
			}
			if readErr != nil {
				t.Errorf("the stream did not end cleanly: %v", readErr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("received %d bytes, want %d: first difference at byte %d\n got: %.300q\nwant: %.300q", len(got), len(want), firstDiff(got, want), got[firstDiff(got, want):], want[firstDiff(got, want):])
			}
		})
	}
}

// wrappingListener hands out its connections wrapped in a type of its own,
// as a listener that adds to them would.
type wrappingListener struct{ net.Listener }

type wrappedConn struct{ net.Conn }

func (l wrappingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// commitCandidate commits n NtpServer creates as one candidate and returns
// its revision.
func commitCandidate(t *testing.T, a *apiHarness, n int) uint64 {
	t.Helper()
	resp, body := a.send("POST", "/candidates", nil, `{}`)
	var cand struct{ CandidateId string }
	if resp.StatusCode != 201 && resp.StatusCode != 200 || json.Unmarshal(body, &cand) != nil {
		t.Fatalf("POST /candidates: %d %s", resp.StatusCode, body)
	}
	if resp, body := a.send("POST", "/candidates/"+cand.CandidateId+"/edits", nil, ntpCreateEdits(n, 8)); resp.StatusCode != 200 {
		t.Fatalf("staging %d edits: %d %.300s", n, resp.StatusCode, body)
	}
	if resp, body := a.send("POST", "/candidates/"+cand.CandidateId+"/commit", nil, `{}`); resp.StatusCode != 200 {
		t.Fatalf("commit: %d %.300s", resp.StatusCode, body)
	}
	return a.eng.Revision()
}

// TestFeedSubscriberLeavesWithItsClient: a client that closes its change
// feed connection stops being a subscriber at once, with no commit or
// heartbeat needed to notice (the handler watches the connection it took
// over from net/http).
func TestFeedSubscriberLeavesWithItsClient(t *testing.T) {
	a := newAPIHarness(t)
	resp, err := http.Get(a.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	waitSubscribers := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for a.eng.Feed().Subscribers() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d subscribers; want %d", a.eng.Feed().Subscribers(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitSubscribers(1)
	resp.Body.Close()
	waitSubscribers(0)
}

// writevConn finds the TCP connection under serve's connlimit wrapper (so
// serve's streams are written with writev too), and none under a wrapper
// that hides its connection.
func TestWritevConnLooksThroughListenerWrappers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := connlimit.New(ln, connlimit.Options{PerClient: 4})
	defer limited.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := limited.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, isTCP := c.(*net.TCPConn); isTCP {
		t.Fatal("connlimit no longer wraps its connections: this test checks nothing")
	}
	inner, ok := writevConn(c).(*net.TCPConn)
	if !ok {
		t.Fatalf("writevConn(%T) = %T, want the *net.TCPConn under it", c, writevConn(c))
	}
	if writevConn(inner) != inner {
		t.Error("writevConn of a TCP connection is not itself")
	}
	if got := writevConn(wrappedConn{inner}); got != nil {
		t.Errorf("writevConn of a wrapper without NetConn = %T, want nil", got)
	}
}

// A stream taken over from net/http still has its body bytes in the
// access-log line (obs.AddSent): the same count as the client received.
func TestTakenOverStreamCountsItsBytes(t *testing.T) {
	a := newAPIHarness(t)
	srv := a.h.(*Server)
	var logged syncbuf.Buffer
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: obs.Wrap(a.h, obs.HandlerOptions{Access: obs.NewAccessLog(&logged, "text", slog.LevelInfo)})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	resp, err := http.Get("http://" + ln.Addr().String() + "/public/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); srv.taken.count() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stream was not taken over from net/http")
		}
	}
	for i := range 3 {
		if r, body := a.send("POST", "/config/NtpServer", nil, fmt.Sprintf(`{"IpAddr":"10.6.0.%d"}`, i+1)); r.StatusCode != 201 {
			t.Fatalf("create: %d %s", r.StatusCode, body)
		}
	}
	var got []byte
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(20 * time.Second); bytes.Count(got, []byte("event: commit")) < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("3 events not received: %q", got)
		}
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("read: %v after %q", err, got)
		}
	}
	resp.Body.Close() // the client leaves; the handler ends and logs its line
	want := fmt.Sprintf("bytes=%d ", len(got))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		line := logged.String()
		if strings.Contains(line, "path=/public/v1/events") {
			if !strings.Contains(line, want) {
				t.Errorf("access line %q does not count the %d bytes the client received", line, len(got))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no access line for the stream: %q", line)
		}
	}
}

// TestEventFeedHeadAnswersHeadersOnly: HEAD on the change feed answers the
// stream's headers, or the 400 a GET with the same parameters gets, and
// subscribes to nothing: the keep-alive connection serves the next request.
// (A HEAD that ran the stream never ended: net/http drops a HEAD response's
// writes, so none failed, and once the next request was sent on the
// connection, net/http no longer saw the client leave.)
func TestEventFeedHeadAnswersHeadersOnly(t *testing.T) {
	a := newAPIHarness(t)
	t.Cleanup(a.h.(*Server).CloseStreams) // a stream left running would hold the harness's Close
	cur := a.eng.Revision()
	conn, err := net.Dial("tcp", a.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Not a timing bound: a request the server never answers fails the
	// test instead of hanging it.
	conn.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	roundTrip := func(method, target string, hdr map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+a.srv.Listener.Addr().String()+"/public/v1"+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if err := req.Write(conn); err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("%s %s on the connection HEAD /events used: %v", method, target, err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name   string
		target string
		hdr    map[string]string
		status int
	}{
		{"from now", "/events", nil, 200},
		{"since a kept revision", "/events?since=" + strconv.FormatUint(cur, 10) + "&heartbeat=5", nil, 200},
		{"Last-Event-ID", "/events", map[string]string{"Last-Event-ID": "0"}, 200},
		{"since not a number", "/events?since=abc", nil, 400},
		{"Last-Event-ID not a number", "/events", map[string]string{"Last-Event-ID": "abc"}, 400},
		{"since after the running revision", "/events?since=" + strconv.FormatUint(cur+1, 10), nil, 400},
		{"heartbeat out of range", "/events?heartbeat=0", nil, 400},
		{"unknown parameter", "/events?from=1", nil, 400},
	} {
		resp := roundTrip("HEAD", tc.target, tc.hdr)
		if resp.StatusCode != tc.status {
			t.Errorf("HEAD %s (%s): %d; want %d", tc.target, tc.name, resp.StatusCode, tc.status)
		}
		if ct := resp.Header.Get("Content-Type"); tc.status == 200 && ct != "text/event-stream" {
			t.Errorf("HEAD %s (%s): Content-Type %q; want text/event-stream", tc.target, tc.name, ct)
		}
		// The response is out, so a stream would be running by now.
		if n := a.eng.Feed().Subscribers(); n != 0 {
			t.Fatalf("HEAD %s (%s) left %d subscriber(s)", tc.target, tc.name, n)
		}
	}
	if resp := roundTrip("GET", "/config/SystemParam", nil); resp.StatusCode != 200 {
		t.Fatalf("GET after HEAD /events on the same connection: %d", resp.StatusCode)
	}
}

// TestCloseStreamsCutsSubscriberThatStoppedReading: at shutdown, a
// subscriber whose client stopped reading (the handler blocked in a write)
// holds its stream's end for closeGrace, not for the write timeout, whether
// the connection was taken over (CloseStreams waits for it) or net/http
// still writes it (TLS, HTTP/2, HTTP/1.0: net/http's Shutdown waits for
// the handler, and the process on Shutdown).
func TestCloseStreamsCutsSubscriberThatStoppedReading(t *testing.T) {
	// A small receive buffer, set before connecting, so that the commits
	// below fill what the client's and the server's buffers hold.
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	// rawStream sends a GET of the feed on a connection of its own and
	// reads the answer's headers, then nothing more.
	rawStream := func(t *testing.T, conn net.Conn, proto string) *http.Response {
		io.WriteString(conn, "GET /public/v1/events "+proto+"\r\nHost: swmgr\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /events: %v %v", resp, err)
		}
		return resp
	}
	cases := []struct {
		name  string
		taken bool // taken over from net/http
		tls   bool // the harness's handler served over TLS (HTTP/2 offered)
		open  func(t *testing.T, addr string, tlsSrv *httptest.Server) (resp *http.Response, cut bool)
	}{
		{name: "HTTP/1.1 taken over", taken: true, open: func(t *testing.T, addr string, _ *httptest.Server) (*http.Response, bool) {
			conn, err := dialer.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return rawStream(t, conn, "HTTP/1.1"), true
		}},
		{name: "HTTP/1.0 written by net/http", open: func(t *testing.T, addr string, _ *httptest.Server) (*http.Response, bool) {
			conn, err := dialer.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return rawStream(t, conn, "HTTP/1.0"), false // ends at close: no chunked end to miss
		}},
		{name: "HTTP/1.1 over TLS", tls: true, open: func(t *testing.T, _ string, tlsSrv *httptest.Server) (*http.Response, bool) {
			raw, err := dialer.Dial("tcp", tlsSrv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			conn := tls.Client(raw, &tls.Config{RootCAs: tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
			t.Cleanup(func() { conn.Close() })
			return rawStream(t, conn, "HTTP/1.1"), true
		}},
		{name: "HTTP/2", tls: true, open: func(t *testing.T, _ string, tlsSrv *httptest.Server) (*http.Response, bool) {
			tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
			tr.DialContext = dialer.DialContext
			tr.ForceAttemptHTTP2 = true
			t.Cleanup(tr.CloseIdleConnections)
			resp, err := (&http.Client{Transport: tr}).Get(tlsSrv.URL + "/public/v1/events")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET /events: %v %v", resp, err)
			}
			if resp.ProtoMajor != 2 {
				t.Fatalf("GET /events over TLS answered in %s, want HTTP/2", resp.Proto)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp, false // a reset stream, not a cut chunk
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPIHarness(t)
			srv := a.h.(*Server)
			// Long enough that the commits below cannot reach it: the stream
			// must still be blocked in its write when CloseStreams is called.
			srv.FeedWriteTimeout = time.Minute
			var tlsSrv *httptest.Server
			if tc.tls {
				tlsSrv = httptest.NewUnstartedServer(a.h)
				tlsSrv.EnableHTTP2 = true
				tlsSrv.StartTLS()
				t.Cleanup(tlsSrv.Close)
			}
			resp, cut := tc.open(t, a.srv.Listener.Addr().String(), tlsSrv)
			for deadline := time.Now().Add(20 * time.Second); a.eng.Feed().Subscribers() != 1 || (tc.taken && srv.taken.count() != 1); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the stream did not start (subscribers %d, taken over %d)", a.eng.Feed().Subscribers(), srv.taken.count())
				}
			}
			if !tc.taken && srv.taken.count() != 0 {
				t.Fatalf("the stream was taken over from net/http; this case needs it written by net/http")
			}
			// The client reads nothing more: three times what the server's
			// send buffer can grow to (Linux's tcp_wmem: 4 MiB by default;
			// HTTP/2's stream window: 4 MiB) blocks the handler's write; the
			// check below that the stream was still running fails if not.
			sent := 0
			for subnet := 20; sent < 12<<20; subnet++ {
				resp, body := a.send("POST", "/candidates", nil, `{}`)
				var cand struct{ CandidateId string }
				if resp.StatusCode != 201 || json.Unmarshal(body, &cand) != nil {
					t.Fatalf("POST /candidates: %d %s", resp.StatusCode, body)
				}
				if resp, body := a.send("POST", "/candidates/"+cand.CandidateId+"/edits", nil, ntpCreateEdits(2000, subnet)); resp.StatusCode != 200 {
					t.Fatalf("staging: %d %.300s", resp.StatusCode, body)
				}
				if resp, body := a.send("POST", "/candidates/"+cand.CandidateId+"/commit", nil, `{}`); resp.StatusCode != 200 {
					t.Fatalf("commit: %d %.300s", resp.StatusCode, body)
				}
				data, err := srv.hist.GetRevision(a.eng.Revision(), nil)
				if err != nil {
					t.Fatal(err)
				}
				sent += len(data)
			}
			if a.eng.Feed().Subscribers() != 1 {
				t.Fatalf("the stream ended before CloseStreams (its write timed out?): the test needs it blocked")
			}
			start := time.Now()
			srv.CloseStreams()
			// CloseStreams waits for the taken-over streams; net/http's
			// Shutdown would wait for the others, which end as their
			// handler returns (its subscription with it).
			for a.eng.Feed().Subscribers() != 0 && time.Since(start) < srv.FeedWriteTimeout {
				time.Sleep(10 * time.Millisecond)
			}
			took := time.Since(start)
			t.Logf("the stream ended %v after CloseStreams; FeedWriteTimeout %v; %d MiB of events were due", took, srv.FeedWriteTimeout, sent>>20)
			if took >= srv.FeedWriteTimeout/2 {
				t.Errorf("the stream ended %v after CloseStreams, most of the write timeout (%v), for a subscriber that stopped reading", took, srv.FeedWriteTimeout)
			}
			if n := srv.taken.count(); n != 0 {
				t.Errorf("%d stream(s) still taken over after CloseStreams", n)
			}
			srv.taken.mu.Lock()
			watched := len(srv.taken.watched)
			srv.taken.mu.Unlock()
			if watched != 0 {
				t.Errorf("%d stream(s) still watched after their handler ended", watched)
			}
			if !cut {
				return
			}
			// What the client reads now ends in the middle of the stream (the
			// write was cut), not with its end: the handler was indeed blocked
			// in it.
			if _, err := io.Copy(io.Discard, resp.Body); err != io.ErrUnexpectedEOF {
				t.Errorf("reading the rest of the stream: %v; want it cut short (io.ErrUnexpectedEOF), which shows the handler was blocked in its write", err)
			}
		})
	}
}
