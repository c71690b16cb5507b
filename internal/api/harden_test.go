package api

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCanonicalKeySpellings: every spelling of an address or name is the one
// object; it is found by any spelling and returned in the canonical one.
func TestCanonicalKeySpellings(t *testing.T) {
	s := newTxnServer(t)
	for _, tc := range []struct {
		kind, field, canonical string
		spellings              []string
	}{
		{"NtpServer", "IpAddr", "2001:db8::1", []string{"2001:db8::1", "2001:DB8::1", "2001:0db8::1", "2001:db8:0:0:0:0:0:1"}},
		{"NtpServer", "IpAddr", "192.0.2.77", []string{"192.0.2.77", "::ffff:192.0.2.77"}},
		{"NtpServer", "IpAddr", "ntp.example.com", []string{"ntp.example.com", "NTP.EXAMPLE.COM", "ntp.example.com."}},
		{"ConfigArchiveServer", "IpAddr", "arc.example.com", []string{"ARC.example.com.", "arc.example.com", "Arc.Example.Com"}},
	} {
		var id string
		for i, sp := range tc.spellings {
			code, body, _ := s.do("POST", "/config/"+tc.kind, `{"`+tc.field+`":"`+sp+`"}`)
			if i == 0 {
				if code != 201 {
					t.Fatalf("create %s %q: %d %v", tc.kind, sp, code, body)
				}
				id, _ = body["ObjectId"].(string)
				continue
			}
			if code != 409 || body["ObjectId"] != id {
				t.Fatalf("create %s %q after %q: %d %v; want 409 naming %s", tc.kind, sp, tc.spellings[0], code, body, id)
			}
		}
		for _, sp := range tc.spellings {
			code, body, _ := s.do("GET", "/config/"+tc.kind, `{"`+tc.field+`":"`+sp+`"}`)
			obj, _ := body["Object"].(map[string]any)
			if code != 200 || body["ObjectId"] != id || obj[tc.field] != tc.canonical {
				t.Fatalf("GET %s %q: %d %v; want %s with %s %q", tc.kind, sp, code, body, id, tc.field, tc.canonical)
			}
		}
		code, body, _ := s.do("GET", "/config/"+tc.kind+"s", ``)
		if code != 200 || body["ObjCount"] != float64(1) {
			t.Fatalf("list %s: %d %v; want one object", tc.kind, code, body)
		}
		if code, body, _ := s.do("DELETE", "/config/"+tc.kind, `{"`+tc.field+`":"`+tc.spellings[len(tc.spellings)-1]+`"}`); code != 200 {
			t.Fatalf("delete %s by another spelling: %d %v", tc.kind, code, body)
		}
	}
}

// TestSameAddressOtherVRF: the address rule is per VRF; another VRF (or the
// same port after its address moved) may hold the address.
func TestSameAddressOtherVRF(t *testing.T) {
	s := newTxnServer(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort2","IpAddr":"10.0.0.1/24","Vrf":"red"}`},
		{"PATCH", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.1.1/24"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort3","IpAddr":"10.0.0.1/24"}`},
	} {
		if code, body, _ := s.do(c.method, c.path, c.body); code != 200 && code != 201 {
			t.Fatalf("%s %s %s: %d %v", c.method, c.path, c.body, code, body)
		}
	}
	// Swapping two addresses in one candidate is fine: the rule looks at
	// the result, not at each step.
	code, body, _ := s.do("POST", "/candidates", `{}`)
	if code != 201 {
		t.Fatalf("candidate: %d %v", code, body)
	}
	cand := "/candidates/" + body["CandidateId"].(string)
	for _, c := range []string{
		`{"IntfRef":"fpPort1","IpAddr":"10.0.9.1/24"}`,
		`{"IntfRef":"fpPort3","IpAddr":"10.0.1.1/24"}`,
		`{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24"}`,
	} {
		if code, body, _ := s.do("PATCH", cand+"/config/IPv4Intf", c); code != 200 {
			t.Fatalf("stage %s: %d %v", c, code, body)
		}
	}
	if code, body, _ := s.do("POST", cand+"/commit", `{}`); code != 200 {
		t.Fatalf("commit of a swap: %d %v", code, body)
	}
}

// TestIfMatchList: an If-Match list matches when any of its tags does; a
// weak tag never matches (RFC 9110 strong comparison).
func TestIfMatchList(t *testing.T) {
	s := newTxnServer(t)
	code, _, hdr := s.do("POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)
	if code != 201 {
		t.Fatalf("create: %d", code)
	}
	etag := hdr.Get("ETag")
	if code, body, _ := s.do("PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":5}`, "If-Match", `W/`+etag); code != 412 {
		t.Fatalf("weak tag: %d %v; want 412", code, body)
	}
	if code, body, _ := s.do("PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":5}`, "If-Match", `"999999", `+etag); code != 200 {
		t.Fatalf("list holding the tag: %d %v; want 200", code, body)
	}
	if code, body, _ := s.do("PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":7}`, "If-Match", `"999999", `+etag); code != 412 {
		t.Fatalf("list of stale tags: %d %v; want 412", code, body)
	}
}

// TestEventsSinceFuture: resuming after a revision the switch has not made
// is a 400, not a stream that silently skips the commits up to it.
func TestEventsSinceFuture(t *testing.T) {
	s := newTxnServer(t)
	if code, body, _ := s.do("GET", "/events?since=999999", ``); code != 400 {
		t.Fatalf("since=999999: %d %v; want 400", code, body)
	}
	resp, err := http.Get(s.url + "/events?since=0&heartbeat=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("since=0: %d", resp.StatusCode)
	}
}

// smallBufferListener gives each accepted connection a small send buffer,
// so that a peer that does not read blocks the writer after a few KiB.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestFeedDropsSubscriberThatNeverReads: a change-feed client that stops
// reading is dropped once a write to it stalls for FeedWriteTimeout,
// instead of holding its handler (and connection) forever.
func TestFeedDropsSubscriberThatNeverReads(t *testing.T) {
	a := newAPIHarness(t)
	a.h.(*Server).FeedWriteTimeout = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(a.h)
	srv.Listener = smallBufferListener{srv.Listener}
	srv.Start()
	defer srv.Close()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /public/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
	deadline := time.Now().Add(10 * time.Second)
	for a.eng.Feed().Subscribers() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the subscriber never attached")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Commits with large events until the buffers are full and the
	// subscriber is dropped (it never reads a byte).
	desc := strings.Repeat("d", 250)
	for i := 0; a.eng.Feed().Subscribers() != 0; i++ {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("after %d commits the subscriber that never reads is still attached", i)
		}
		resp, _ := a.send("PATCH", "/config/SystemParam", nil, `{"Description":"`+desc+strconv.Itoa(i%2)+`"}`)
		if resp.StatusCode != 200 {
			t.Fatalf("commit %d: %d", i, resp.StatusCode)
		}
	}
}
