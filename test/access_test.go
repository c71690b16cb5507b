// Black-box tests of access hardening: cross-origin writes, the first
// admin's password in /proc, body deadlines, refused bodies, and a login
// storm.

package test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/openapi/openapitest"
)

const blackBoxAdminPassword = "black-box-admin-password" // the harness's SWMGR_ADMIN_PASSWORD

// httpsClient trusts only the certificate swmgr made in dir; local, if
// valid, is the loopback address its connections come from.
func httpsClient(t testing.TB, dir string, local string) *http.Client {
	t.Helper()
	return validated(t, unvalidatedHTTPSClient(t, dir, local))
}

// unvalidatedHTTPSClient is httpsClient without the OpenAPI check, for
// load whose responses are not the point (and whose checking would take
// the CPU the server needs).
func unvalidatedHTTPSClient(t testing.TB, dir string, local string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dir, "tls-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	d := &net.Dialer{Timeout: 10 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext:         d.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 4,
	}}
}

// validated checks every response c receives against the OpenAPI document.
func validated(t testing.TB, c *http.Client) *http.Client {
	t.Helper()
	v, err := openapitest.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return v.Wrap(c)
}

func send(t testing.TB, c *http.Client, method, url, user, password, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dump is `swmgr dump` of a stopped server's data directory.
func dump(t testing.TB, dir string) []byte {
	t.Helper()
	out, err := exec.Command(swmgrBin, "dump", "--data-dir", dir).Output()
	if err != nil {
		t.Fatalf("swmgr dump: %v", err)
	}
	return out
}

// A write that a browser marks as cross-site is refused on both listeners,
// with or without credentials, and changes nothing in the store; reads,
// preflights, same-origin and non-browser writes work.
func TestCrossOriginWritesRefused(t *testing.T) {
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	s := startServer(t, dir, "--https", httpsAddr)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)
	s.stop(t)
	before := dump(t, dir)

	s = startServer(t, dir, "--https", httpsAddr)
	hc := httpsClient(t, dir, "")
	secure := "https://" + httpsAddr + "/public/v1"
	forged := [][]string{
		{"Origin", "https://evil.example", "Content-Type", "text/plain"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"},
	}
	writes := []struct{ method, path, body string }{
		{"POST", "/config/User", `{"Name":"x","Group":"admin","Password":"evil-pass-1"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"198.51.100.1"}`},
		{"PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":5}`},
		{"DELETE", "/config/NtpServer?IpAddr=192.0.2.1", ""},
		{"POST", "/action/ClearConfigLog", `{}`},
		{"POST", "/candidates", `{"Comment":"x"}`},
	}
	for _, h := range forged {
		for _, w := range writes {
			r := s.do(t, w.method, w.path, w.body, h...)
			if r.code != 403 || !strings.Contains(string(r.raw), `"Code":"forbidden"`) || !strings.Contains(string(r.raw), "cross-origin") {
				t.Errorf("HTTP %s %s with %v: %s", w.method, w.path, h, r)
			}
			code, body := send(t, hc, w.method, secure+w.path, "admin", blackBoxAdminPassword, w.body, h...)
			if code != 403 || !strings.Contains(body, "cross-origin") {
				t.Errorf("HTTPS as admin %s %s with %v: %d %s", w.method, w.path, h, code, body)
			}
		}
	}
	// DNS rebinding: a page on a name it controls, resolved to 127.0.0.1,
	// is same-origin for the browser; its Host gives it away. Without
	// credentials it may neither write nor read.
	rebound := "rebind.evil.example:" + s.addr[strings.LastIndexByte(s.addr, ':')+1:]
	for _, w := range append(writes, struct{ method, path, body string }{"GET", "/config/NtpServers", ""}) {
		r := s.do(t, w.method, w.path, w.body, "Host", rebound, "Origin", "http://"+rebound, "Sec-Fetch-Site", "same-origin")
		if r.code != 403 || !strings.Contains(string(r.raw), "DNS rebinding") {
			t.Errorf("rebound %s %s: %s", w.method, w.path, r)
		}
	}
	// A read is answered, but without CORS headers: the page that sent it
	// cannot see the answer (the loopback listener trusts the local user,
	// so "Access-Control-Allow-Origin: *" would hand any page the
	// configuration). Preflights keep the spec's CORS entries.
	r := s.expect(t, 200, "GET", "/config/NtpServers", "", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if v := r.hdr.Values("Access-Control-Allow-Origin"); len(v) != 0 {
		t.Errorf("a cross-site read may be read by the page: Access-Control-Allow-Origin %q", v)
	}
	r = s.expect(t, 204, "OPTIONS", "/config/NtpServer", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if !strings.Contains(r.hdr.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %v", r.hdr)
	}
	s.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused cross-origin writes changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Same origin, and clients that are not browsers, write.
	s = startServer(t, dir, "--https", httpsAddr)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.2"}`, "Origin", "http://"+s.addr, "Sec-Fetch-Site", "same-origin")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.3"}`)
	if code, body := send(t, hc, "POST", secure+"/config/NtpServer", "admin", blackBoxAdminPassword, `{"IpAddr":"192.0.2.4"}`, "Origin", "https://"+httpsAddr); code != 201 {
		t.Errorf("HTTPS same origin: %d %s", code, body)
	}
	// The SDK's PATCH with its misspelt Content-Type.
	s.expect(t, 200, "PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.3","MinPoll":5}`, "Content-Type", "application/x-www-form-urlencoded")
}

// SWMGR_ADMIN_PASSWORD is not readable in /proc/<pid>/environ of the
// running service (os.Unsetenv alone leaves it there), and still works.
func TestAdminPasswordNotInProcEnviron(t *testing.T) {
	s := startServer(t, "", "--log-level", "debug")
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte(blackBoxAdminPassword)) {
		t.Errorf("/proc/%d/environ holds the password", s.cmd.Process.Pid)
	}
	if !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("the rest of the environment is gone: %q", env)
	}
	for _, f := range []string{"cmdline", "status"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", s.cmd.Process.Pid, f))
		if bytes.Contains(b, []byte(blackBoxAdminPassword)) {
			t.Errorf("/proc/<pid>/%s holds the password", f)
		}
	}
	req, _ := http.NewRequest("GET", s.base+"/config/Users", nil)
	req.SetBasicAuth("admin", blackBoxAdminPassword)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("login with the password: %d", resp.StatusCode)
	}
	if strings.Contains(s.logs.String(), blackBoxAdminPassword) {
		t.Error("the password is in the log")
	}
}

// A body trickled a byte at a time is cut off by --body-timeout, and the
// connection closed; a refused request's large body is not read at all.
func TestSlowAndRefusedBodiesCloseTheConnection(t *testing.T) {
	s := startServer(t, "", "--body-timeout", "2s")
	t.Run("trickled", func(t *testing.T) {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /public/v1/config/NtpServer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", s.addr)
		start := time.Now()
		closed := make(chan time.Duration, 1)
		go func() {
			io.Copy(io.Discard, c) // until the server closes
			closed <- time.Since(start)
		}()
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case took := <-closed:
				t.Logf("closed after %v", took)
				if took < 2*time.Second {
					t.Errorf("closed after %v, before the 2 s deadline", took)
				}
				s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=1.2.3.4", "")
				return
			case <-tick.C:
				c.Write([]byte(" ")) // may fail once the server closed
				if time.Since(start) > 20*time.Second {
					t.Fatal("the trickled connection is still open after 20 s with --body-timeout 2s")
				}
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, auth := range []string{"Authorization: Basic " + "YWRtaW46d3Jvbmc=\r\n", "Origin: https://evil.example\r\n"} { // admin:wrong; a cross-site write
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /public/v1/config/NtpServer HTTP/1.1\r\nHost: %s\r\n%sContent-Length: 100000000\r\n\r\n", s.addr, auth)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s: no answer before the body: %v", auth, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if (resp.StatusCode != 401 && resp.StatusCode != 403) || !resp.Close {
				t.Errorf("%s: %d, close %v", auth, resp.StatusCode, resp.Close)
			}
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Errorf("%s: the connection stayed open", auth)
			}
		}
	})
}

// vmHWM is a process's peak resident memory, in bytes.
func vmHWM(t testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// 300 concurrent bad logins over HTTPS from 40 loopback addresses, for the
// admin and for random names: memory stays bounded, only a bounded number
// of guesses is checked, and the admin, from the address they logged in
// from before, is answered throughout.
func TestLoginStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s storm")
	}
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	s := startServer(t, dir, "--https", httpsAddr)
	secure := "https://" + httpsAddr + "/public/v1"
	admin := httpsClient(t, dir, "127.0.0.1")
	if code, body := send(t, admin, "GET", secure+"/config/SystemParam", "admin", blackBoxAdminPassword, ""); code != 200 {
		t.Fatalf("admin before the storm: %d %s", code, body)
	}
	const attackers, addrs = 300, 40
	var statuses [600]atomic.Int64
	var errs atomic.Int64
	clients := make([]*http.Client, attackers)
	for i := range clients {
		clients[i] = unvalidatedHTTPSClient(t, dir, fmt.Sprintf("127.0.0.%d", 2+i%addrs))
	}
	stopStorm := storm(attackers, func(i, n int) (*http.Client, *http.Request) {
		user := "admin"
		if i%2 == 1 {
			user = fmt.Sprintf("guess%d-%d", i, n)
		}
		req, _ := http.NewRequest("GET", secure+"/config/Users", nil)
		req.SetBasicAuth(user, fmt.Sprintf("wrong-%d-%d", i, n))
		return clients[i], req
	}, func(code int, body []byte, err error) {
		if err != nil {
			errs.Add(1)
			time.Sleep(10 * time.Millisecond)
			return
		}
		statuses[code].Add(1)
	})
	var answered, failed int
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		req, _ := http.NewRequest("GET", secure+"/config/SystemParam", nil)
		req.SetBasicAuth("admin", blackBoxAdminPassword)
		resp, err := admin.Do(req)
		if err != nil || resp.StatusCode != 200 {
			failed++
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				t.Logf("admin during the storm: %d %s", resp.StatusCode, b)
				resp.Body.Close()
			} else {
				t.Logf("admin during the storm: %v", err)
			}
			continue
		}
		// Read to the end, as a client does, so that the admin keeps its
		// connection: new ones wait behind the storm's for the listener's
		// connection cap, which the storm's loopback clients share with it.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered++
	}
	stopStorm()
	peak := vmHWM(t, s.cmd.Process.Pid)
	t.Logf("admin answered %d, not %d; attackers got 401 %d, 429 %d, 503 %d, errors %d; peak RSS %d MiB",
		answered, failed, statuses[401].Load(), statuses[429].Load(), statuses[503].Load(), errs.Load(), peak>>20)
	// No timing threshold (machines are noisy; bench/access.sh measures the
	// admin's p99): every admin request is answered, and a few got through.
	if failed > 0 || answered < 3 {
		t.Errorf("the admin was answered %d times and refused %d times during the storm", answered, failed)
	}
	if peak > 200<<20 {
		t.Errorf("peak RSS %d MiB, want under 200 MiB", peak>>20)
	}
	if statuses[401].Load() == 0 || statuses[429].Load()+statuses[503].Load() == 0 {
		t.Error("the storm was neither checked nor refused")
	}
	// The guesses for admin: at most the name's budget (20) were checked
	// from the 40 untrusted addresses.
	if n := strings.Count(s.logs.String(), `msg="login failed" user=admin `); n > 20 {
		t.Errorf("%d guesses for admin were checked; the budget is 20", n)
	}
}

// storm runs n clients at once, each sending the requests next makes (its
// index and the request's number in its run) until the returned function
// is called, which waits for them to end. answer is told every answer.
func storm(n int, next func(i, n int) (*http.Client, *http.Request), answer func(code int, body []byte, err error)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				c, req := next(i, k)
				resp, err := c.Do(req)
				if err != nil {
					answer(0, nil, err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answer(resp.StatusCode, body, nil)
			}
		}()
	}
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}
