// Package test holds black-box tests: they build the real swmgr binary,
// start it as a process on a fresh data directory, and drive it over HTTP
// the way operators' scripts do.
package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// swmgrBinary builds cmd/swmgr once per test run.
func swmgrBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "swmgr-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "swmgr")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/swmgr").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is a running swmgr.
type proc struct {
	t       testing.TB
	dir     string
	addr    string
	base    string
	cmd     *exec.Cmd
	stderr  *bytes.Buffer
	exited  chan struct{}
	exitErr error
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startSwmgr runs swmgr serve on dir ("" for a new one) and waits until it
// answers. The process is stopped with SIGTERM at the end of the test.
func startSwmgr(t testing.TB, dir string, args ...string) *proc {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := &proc{t: t, dir: dir, addr: freeAddr(t), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	p.base = "http://" + p.addr + "/public/v1"
	all := append([]string{"serve", "--data-dir", dir, "--http", p.addr, "--https", ""}, args...)
	p.cmd = exec.Command(swmgrBinary(t), all...)
	p.cmd.Stderr = &lockedWriter{w: p.stderr}
	p.cmd.Env = append(os.Environ(), "SWMGR_ADMIN_PASSWORD=black-box-admin-pw")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exitErr = p.cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(p.base + "/config/SystemParam")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-p.exited:
			t.Fatalf("swmgr exited at start: %v\n%s", p.exitErr, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			p.cmd.Process.Kill()
			t.Fatalf("swmgr did not answer within 15 s\n%s", p.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() { p.stop() })
	return p
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// stop sends SIGTERM and expects a clean exit.
func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.exitErr != nil {
			p.t.Errorf("swmgr exited with %v after SIGTERM\n%s", p.exitErr, p.stderr)
		}
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		p.t.Errorf("swmgr did not stop within 15 s of SIGTERM")
	}
}

// kill9 kills the process without warning.
func (p *proc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// reply is a decoded response.
type reply struct {
	code int
	hdr  http.Header
	raw  []byte
	body map[string]any
}

func (r reply) str(field string) string { s, _ := r.body[field].(string); return s }

// object returns the "Object" of a get-one reply.
func (r reply) object() map[string]any { o, _ := r.body["Object"].(map[string]any); return o }

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

func (p *proc) do(method, path, body string) reply {
	p.t.Helper()
	req, err := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{code: resp.StatusCode, hdr: resp.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			p.t.Fatalf("%s %s: %d, body is not JSON: %q", method, path, r.code, raw)
		}
	}
	return r
}

// must is do that expects a status.
func (p *proc) must(want int, method, path, body string) reply {
	p.t.Helper()
	r := p.do(method, path, body)
	if r.code != want {
		p.t.Fatalf("%s %s %s: %d, want %d: %s", method, path, body, r.code, want, r.raw)
	}
	return r
}

// listAll pages through a get-all path with count per page.
func (p *proc) listAll(path string, count int) []map[string]any {
	p.t.Helper()
	var out []map[string]any
	marker := 0.0
	for {
		r := p.must(200, "GET", fmt.Sprintf("%s?CurrentMarker=%d&Count=%d", path, int64(marker), count), "")
		for _, o := range r.body["Objects"].([]any) {
			out = append(out, o.(map[string]any))
		}
		if r.body["MoreExist"] != true {
			return out
		}
		marker = r.body["NextMarker"].(float64)
	}
}
