package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
