// The harness: TestMain builds the binary once; startServer runs it on a
// free loopback port and a data directory and stops it with SIGTERM at the
// end of the test; small helpers send requests and decode replies.

package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/openapi/openapitest"
	"github.com/swmgr/swmgr/internal/syncbuf"
)

// swmgrBin is the binary TestMain builds.
var swmgrBin string

// envSwmgrBinary names a swmgr binary built already, which TestMain then
// uses instead of building one: the tests run again in the VM use the
// one the host built (a build under the VM's emulated CPU takes minutes).
const envSwmgrBinary = "SWMGR_BLACKBOX_BINARY"

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "swmgr-blackbox-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	swmgrBin = filepath.Join(dir, "swmgr")
	if built := os.Getenv(envSwmgrBinary); built != "" {
		swmgrBin = built
	} else {
		build := exec.Command("go", "build", "-o", swmgrBin, "../cmd/swmgr")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go build ../cmd/swmgr: %v\n", err)
			return 1
		}
	}
	// Every response the suite receives is checked against the OpenAPI
	// document, so that the document cannot drift from the server.
	validator, err := openapitest.Builtin()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	client = validator.Wrap(client)
	return m.Run()
}

// server is one running `swmgr serve`.
type server struct {
	dir  string // data directory
	addr string // host:port of the plain HTTP listener
	base string // http://addr/public/v1

	cmd  *exec.Cmd
	logs *syncBuffer // stderr
	done chan struct{}
	err  error // the exit status (nil: 0); valid once done is closed
}

// syncBuffer is the log sink the test reads while the service writes it.
type syncBuffer = syncbuf.Buffer

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveArgs is the command line of `swmgr serve` on dir and addr. HTTPS is
// disabled: the tests use plain HTTP on loopback, which needs no credentials
// (the tests run as root, which is admin). The Unix socket is in the data
// directory, so that servers running at once do not share the default one.
func serveArgs(dir, addr string, extra ...string) []string {
	return append([]string{"serve", "--data-dir", dir, "--http", addr, "--https", "", "--socket", filepath.Join(dir, "swmgr.sock")}, extra...)
}

// startServer runs swmgr on dir ("" for a fresh t.TempDir()) with extra
// flags, waits until it answers, and stops it with SIGTERM when the test
// ends, failing the test unless it exits 0.
func startServer(t testing.TB, dir string, extra ...string) *server {
	t.Helper()
	return startServerWithin(t, 20*time.Second, dir, extra...)
}

// startServerWithin is startServer for a start that may take longer than
// 20 s (a replay of a large configuration into FRR).
func startServerWithin(t testing.TB, wait time.Duration, dir string, extra ...string) *server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	// The free port may be taken by someone else before swmgr binds it:
	// then try another.
	for attempt := 1; ; attempt++ {
		s, err := tryStartWithin(t, wait, dir, extra...)
		if err == nil {
			return s
		}
		if attempt == 3 || !strings.Contains(s.logs.String(), "address already in use") {
			t.Fatal(err)
		}
	}
}

func tryStart(t testing.TB, dir string, extra ...string) (*server, error) {
	t.Helper()
	return tryStartWithin(t, 20*time.Second, dir, extra...)
}

func tryStartWithin(t testing.TB, wait time.Duration, dir string, extra ...string) (*server, error) {
	t.Helper()
	s, err := launchServer(t, dir, extra...)
	if err != nil {
		return s, err
	}
	return s, s.awaitReady(wait)
}

// launchServer starts swmgr on dir with extra flags and returns without
// waiting for it to answer (awaitReady waits), so that several start
// together; the test's end stops it.
func launchServer(t testing.TB, dir string, extra ...string) (*server, error) {
	t.Helper()
	s := &server{dir: dir, addr: freeAddr(t), logs: &syncBuffer{}, done: make(chan struct{})}
	s.base = "http://" + s.addr + "/public/v1"
	s.cmd = exec.Command(swmgrBin, serveArgs(dir, s.addr, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	// A known first-admin password, so that none is generated into a file.
	s.cmd.Env = append(os.Environ(), "SWMGR_ADMIN_PASSWORD=black-box-admin-password")
	if err := s.cmd.Start(); err != nil {
		return s, err
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("swmgr on %s logged:\n%s", s.dir, tail(s.logs.String(), 4000))
		}
	})
	return s, nil
}

// awaitReady waits until s answers, at most wait; it fails at once if s
// exits.
func (s *server) awaitReady(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		resp, err := http.Get(s.base + "/config/SystemParam")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("swmgr exited at start (%v):\n%s", s.err, s.logs)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("swmgr did not answer within %v:\n%s", wait, s.logs)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM and waits for the exit; it returns the exit
// status (nil for 0) and how long the process took to go.
func (s *server) terminate() (time.Duration, error) {
	if s.exited() {
		return 0, s.err
	}
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return time.Since(start), s.err
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return time.Since(start), errors.New("still running 20 s after SIGTERM; killed")
	}
}

// stop is terminate that fails the test unless the process exits 0. A
// process the test already stopped or killed is left alone.
func (s *server) stop(t testing.TB) {
	t.Helper()
	if s.exited() {
		return
	}
	if took, err := s.terminate(); err != nil {
		t.Errorf("swmgr after SIGTERM: %v (after %v)\n%s", err, took, tail(s.logs.String(), 4000))
	}
}

// kill9 kills the process without warning and waits until it is gone.
func (s *server) kill9() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// reply is a response, read whole and decoded.
type reply struct {
	code  int
	hdr   http.Header
	raw   []byte
	body  map[string]any // nil when the body is empty
	local string         // the client's end of the connection (what the server sees as the caller)
}

func (r reply) str(field string) string { s, _ := r.body[field].(string); return s }

// object is the "Object" of a get-one reply.
func (r reply) object() map[string]any { o, _ := r.body["Object"].(map[string]any); return o }

func (r reply) String() string { return fmt.Sprintf("%d %s", r.code, r.raw) }

var client = &http.Client{
	Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
	Timeout:   30 * time.Second,
}

// call sends one request to path (below /public/v1) with body ("" for
// none) and headers given as name, value pairs. It does not touch a
// testing.T, so goroutines may use it.
func (s *server) call(method, path, body string, headers ...string) (reply, error) {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	var local string
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { local = i.Conn.LocalAddr().String() }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method, s.base+path, rd)
	if err != nil {
		return reply{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" { // net/http takes it from the request, not its headers
			req.Host = headers[i+1]
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	r := reply{code: resp.StatusCode, hdr: resp.Header, raw: raw, local: local}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			return r, fmt.Errorf("%s %s: %d, the body is not a JSON object: %q", method, path, r.code, raw)
		}
	}
	return r, nil
}

// do is call that fails the test on a transport error or a body that is
// not JSON.
func (s *server) do(t testing.TB, method, path, body string, headers ...string) reply {
	t.Helper()
	r, err := s.call(method, path, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// expect is do that also fails the test unless the status is want.
func (s *server) expect(t testing.TB, want int, method, path, body string, headers ...string) reply {
	t.Helper()
	r := s.do(t, method, path, body, headers...)
	if r.code != want {
		t.Fatalf("%s %s %s: got %s, want status %d", method, path, body, r, want)
	}
	return r
}

// page is one decoded get-all reply.
type page struct {
	current, next float64
	more          bool
	objects       []map[string]any
}

// getPage reads one page and checks the list form: every paging field
// present and typed, ObjCount equal to the objects returned, at most count
// of them, CurrentMarker echoed.
func getPage(r reply, marker, count int64) (page, error) {
	var p page
	if r.code != http.StatusOK {
		return p, fmt.Errorf("list page at %d: %s", marker, r)
	}
	cur, ok1 := r.body["CurrentMarker"].(float64)
	next, ok2 := r.body["NextMarker"].(float64)
	more, ok3 := r.body["MoreExist"].(bool)
	n, ok4 := r.body["ObjCount"].(float64)
	objs, ok5 := r.body["Objects"].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return p, fmt.Errorf("list page lacks a paging field or has a wrong type: %s", r.raw)
	}
	if int64(cur) != marker || int(n) != len(objs) || int64(len(objs)) > count {
		return p, fmt.Errorf("list page at %d (Count %d): CurrentMarker %v, ObjCount %v, %d objects", marker, count, cur, n, len(objs))
	}
	p = page{current: cur, next: next, more: more}
	for _, o := range objs {
		m, ok := o.(map[string]any)
		if !ok {
			return p, fmt.Errorf("list entry is not an object: %v", o)
		}
		if _, ok := m["Object"].(map[string]any); !ok {
			return p, fmt.Errorf("list entry has no Object: %v", m)
		}
		if _, ok := m["ObjectId"].(string); !ok {
			return p, fmt.Errorf("list entry has no ObjectId: %v", m)
		}
		p.objects = append(p.objects, m)
	}
	return p, nil
}

// listAll pages through a get-all path, count objects at a time,
// following NextMarker while MoreExist.
func (s *server) listAll(t testing.TB, path string, count int64) []map[string]any {
	t.Helper()
	var out []map[string]any
	var marker int64
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatalf("%s: listing does not end", path)
		}
		p, err := getPage(s.do(t, "GET", fmt.Sprintf("%s?CurrentMarker=%d&Count=%d", path, marker, count), ""), marker, count)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p.objects...)
		if !p.more {
			return out
		}
		marker = int64(p.next)
	}
}

// ids maps ObjectId to Object over a listing.
func ids(list []map[string]any) map[string]map[string]any {
	m := make(map[string]map[string]any, len(list))
	for _, e := range list {
		m[e["ObjectId"].(string)] = e["Object"].(map[string]any)
	}
	return m
}

// jsonOf renders v as compact JSON.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// normal round-trips v through JSON, so that it compares with decoded
// replies (numbers become float64, lists []any).
func normal(v any) any {
	var out any
	if err := json.Unmarshal([]byte(jsonOf(v)), &out); err != nil {
		panic(err)
	}
	return out
}

// merge returns a new map holding the fields of all ms, later ones winning.
func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// checkFields fails the test unless obj holds every field of want.
func checkFields(t testing.TB, what string, obj, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := obj[k]; !ok || !reflect.DeepEqual(got, normal(v)) {
			t.Errorf("%s: %s = %#v, want %#v (object %v)", what, k, got, v, obj)
		}
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// checkSuccess fails the test unless r is a create, update or delete
// success naming id ("" for any UUID), and returns the ObjectId.
func checkSuccess(t testing.TB, what string, r reply, id string) string {
	t.Helper()
	got := r.str("ObjectId")
	if r.str("Result") != "Success" || !uuidRE.MatchString(got) || (id != "" && got != id) {
		t.Fatalf("%s: reply %s; want Result Success and ObjectId %q", what, r, id)
	}
	// FlexSwitch's CORS entries, in the body as the spec lists them.
	for k, v := range map[string]string{
		"Access-Control-Allow-Headers": "Origin, X-Requested-With, Content-Type, Accept",
		"Access-Control-Allow-Methods": "POST, GET, OPTIONS, PATCH, DELETE",
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Max_age":       "86400",
	} {
		if r.str(k) != v {
			t.Errorf("%s: body field %s = %q, want %q", what, k, r.str(k), v)
		}
	}
	if r.hdr.Get("Access-Control-Max-Age") != "86400" || r.hdr.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s: CORS headers missing: %v", what, r.hdr)
	}
	return got
}

// checkAllow fails the test unless r is a 405 whose Allow header lists
// exactly the allowed methods (in any order) and none of the refused ones.
func checkAllow(t testing.TB, what string, r reply, allowed ...string) {
	t.Helper()
	if r.code != http.StatusMethodNotAllowed {
		t.Errorf("%s: got %s, want 405", what, r)
		return
	}
	got := map[string]bool{}
	for _, m := range strings.Split(r.hdr.Get("Allow"), ",") {
		got[strings.TrimSpace(m)] = true
	}
	for _, m := range allowed {
		if !got[m] {
			t.Errorf("%s: Allow %q lacks %s", what, r.hdr.Get("Allow"), m)
		}
	}
	if len(got) != len(allowed) {
		t.Errorf("%s: Allow %q, want exactly %v", what, r.hdr.Get("Allow"), allowed)
	}
	if e, _ := r.body["Error"].(map[string]any); e == nil || e["Status"] != 405.0 || !strings.HasPrefix(r.str("Result"), "Error: ") {
		t.Errorf("%s: 405 body %s", what, r.raw)
	}
}
