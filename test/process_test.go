// The process: a second start on a data directory in use fails at once
// with a clear message while the first goes on serving; SIGTERM exits 0,
// promptly, also with requests in flight and with a change-feed subscriber;
// the data (objects, ObjectIds, ETags, the switch's applied state) survives
// a restart.

package test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSecondStartOnTheSameDataDirFails(t *testing.T) {
	s := startServer(t, "")
	id := checkSuccess(t, "create", s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.1"}`), "")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, swmgrBin, serveArgs(s.dir, freeAddr(t))...)
	start := time.Now()
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || ctx.Err() != nil {
		t.Fatalf("a second swmgr on the same data directory: %v after %v\n%s", err, time.Since(start), out)
	}
	msg := string(out)
	if !strings.Contains(msg, "data directory") || !strings.Contains(msg, "in use") || !strings.Contains(msg, s.dir) {
		t.Errorf("the message does not say the data directory is in use: %q", msg)
	}

	// The first one is unharmed.
	s.expect(t, 200, "GET", "/config/NtpServer/"+id, "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"10.0.0.2"}`)

	// Once it has stopped, the data directory can be used again.
	s.stop(t)
	s2 := startServer(t, s.dir)
	s2.expect(t, 200, "GET", "/config/NtpServer/"+id, "")
}

func TestSIGTERMExitsZero(t *testing.T) {
	s := startServer(t, "")
	// Writers busy until the signal.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var acked sync.Map
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				addr := fmt.Sprintf("term-%d-%d.example.com", w, i)
				r, err := s.call("POST", "/config/NtpServer", `{"IpAddr":"`+addr+`"}`)
				if err != nil {
					return // the server has gone
				}
				if r.code == 201 {
					acked.Store(addr, r.str("ObjectId"))
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	took, err := s.terminate()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.logs)
	}
	if strings.Contains(s.logs.String(), "deadline exceeded") {
		t.Errorf("shutdown waited out its deadline (after %v):\n%s", took, s.logs)
	}
	if !strings.Contains(s.logs.String(), "shutting down") {
		t.Errorf("no shutdown in the log:\n%s", s.logs)
	}
	// Every write acknowledged before the signal is kept.
	s2 := startServer(t, s.dir)
	n := 0
	acked.Range(func(k, v any) bool {
		n++
		if r := s2.do(t, "GET", "/config/NtpServer?IpAddr="+k.(string), ""); r.code != 200 || r.str("ObjectId") != v {
			t.Errorf("%s (%s) acknowledged before SIGTERM: %s", k, v, r)
		}
		return true
	})
	if n == 0 {
		t.Error("no write was acknowledged before SIGTERM")
	}
}

// TestSIGTERMIsPrompt: what clients hold open does not hold up a clean
// shutdown: a connection that has sent nothing yet (Go's Transport and
// browsers open them ahead), an idle keep-alive connection, a change-feed
// subscriber.
func TestSIGTERMIsPrompt(t *testing.T) {
	cases := []struct {
		name  string
		fresh bool                                 // a connection that has sent no request
		open  func(t *testing.T, s *server) func() // returns a check to run after the exit
	}{
		{"connection that sent nothing", true, func(t *testing.T, s *server) func() {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			// The listener accepts in order, and net/http marks a connection
			// new before it accepts the next: once a later connection is
			// answered, swmgr holds this one (not only the kernel's backlog).
			later := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := later.Get("http://" + s.addr + "/public/v1/config/SystemParam")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return func() {}
		}},
		{"idle keep-alive connection", false, func(t *testing.T, s *server) func() {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			fmt.Fprintf(c, "GET /public/v1/config/SystemParam HTTP/1.1\r\nHost: %s\r\n\r\n", s.addr)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET on a raw connection: %v %v", resp, err)
			}
			return func() {}
		}},
		{"change-feed subscriber", false, func(t *testing.T, s *server) func() {
			resp, err := http.Get(s.base + "/events")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			if resp.StatusCode != 200 {
				t.Fatalf("GET /events: %d", resp.StatusCode)
			}
			return func() {
				if _, err := io.ReadAll(resp.Body); err != nil {
					t.Errorf("the stream did not end cleanly: %v", err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, "")
			after := c.open(t, s)
			took, err := s.terminate()
			if err != nil {
				t.Fatalf("SIGTERM with a %s open: exit %v after %v\n%s", c.name, err, took, s.logs)
			}
			// No timing bound (machines are shared): shutdown must not have
			// waited out a deadline for the client, and a connection that
			// sent nothing must have been closed by swmgr, not by net/http's
			// 5 s rule.
			logs := s.logs.String()
			if strings.Contains(logs, "deadline exceeded") {
				t.Fatalf("shutdown waited out its deadline for a %s:\n%s", c.name, logs)
			}
			if c.fresh && !strings.Contains(logs, "shutdown closed connections that had sent no request") {
				t.Fatalf("the fresh connection was not closed by swmgr at shutdown:\n%s", logs)
			}
			after()
		})
	}
}

func TestRestartKeepsObjectsIdsAndETags(t *testing.T) {
	s := startServer(t, "", "--ports", "8")
	// One object of every creatable kind, and changes to the fixed ones.
	type saved struct{ path, raw, etag string }
	var objs []saved
	for _, kc := range creatableKinds() {
		c := s.expect(t, 201, "POST", "/config/"+kc.kind, jsonOf(kc.create))
		id := c.str("ObjectId")
		s.expect(t, 200, "PATCH", "/config/"+kc.kind+"/"+id, jsonOf(kc.update))
		objs = append(objs, saved{path: "/config/" + kc.kind + "/" + id})
	}
	s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"leaf9","Timezone":"Asia/Tokyo"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65009","RouterId":"10.9.9.9"}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort7","AdminState":"UP","Speed":10000}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort6","BreakOutMode":"4x10"}`)
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort6s3","AdminState":"UP"}`)
	for _, f := range []struct{ kind, key string }{
		{"SystemParam", ""}, {"BGPGlobal", ""}, {"Port", "IntfRef=fpPort1"}, {"Port", "IntfRef=fpPort7"}, {"Port", "IntfRef=fpPort6s3"},
	} {
		id := s.expect(t, 200, "GET", "/config/"+f.kind+"?"+f.key, "").str("ObjectId")
		objs = append(objs, saved{path: "/config/" + f.kind + "/" + id})
	}
	for i := range objs {
		r := s.expect(t, 200, "GET", objs[i].path, "")
		objs[i].raw, objs[i].etag = string(r.raw), r.hdr.Get("ETag")
	}
	lists := map[string]string{}
	for _, kc := range append(creatableKinds(), kindCase{kind: "Port"}, kindCase{kind: "SystemParam"}, kindCase{kind: "BGPGlobal"}) {
		lists[kc.kind] = jsonOf(s.listAll(t, "/config/"+kc.kind+"s", 1024))
	}
	portState := s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort7", "").object()

	for round := range 2 { // a restart, and a restart of the restarted
		s.stop(t)
		s = startServer(t, s.dir, "--ports", "8")
		for _, o := range objs {
			r := s.expect(t, 200, "GET", o.path, "")
			if string(r.raw) != o.raw || r.hdr.Get("ETag") != o.etag {
				t.Errorf("restart %d: %s is\n%s ETag %s\nwas\n%s ETag %s", round+1, o.path, r.raw, r.hdr.Get("ETag"), o.raw, o.etag)
			}
		}
		for kind, want := range lists {
			if got := jsonOf(s.listAll(t, "/config/"+kind+"s", 1024)); got != want {
				t.Errorf("restart %d: %ss is\n%s\nwas\n%s", round+1, kind, got, want)
			}
		}
		// The switch got its configuration back: the port is up again.
		st := s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort7", "").object()
		if st["OperState"] != "UP" || st["Speed"] != 10000.0 || portState["OperState"] != "UP" {
			t.Errorf("restart %d: PortState %v", round+1, st)
		}
		if st := s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort6s3", "").object(); st["OperState"] != "UP" {
			t.Errorf("restart %d: sub-port state %v", round+1, st)
		}
	}
	// Writes go on after the restart with fresh ETags and ObjectIds.
	c := s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"after.example.com"}`)
	for _, o := range objs {
		if strings.HasSuffix(o.path, c.str("ObjectId")) || o.etag == c.hdr.Get("ETag") {
			t.Errorf("a create after the restart reused %s / %s", o.path, o.etag)
		}
	}
}
