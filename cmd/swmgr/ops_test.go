package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi"
)

// get reads a path outside /public/v1 over one of the listeners.
func (s *instance) raw(secure bool, path, user, password string) (int, string) {
	s.t.Helper()
	base, client := strings.TrimSuffix(s.plain, "/public/v1"), s.plainClient
	if secure {
		base, client = strings.TrimSuffix(s.secure, "/public/v1"), s.tlsClient
	}
	rq, _ := http.NewRequest("GET", base+path, nil)
	if user != "" {
		rq.SetBasicAuth(user, password)
	}
	resp, err := client.Do(rq)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestObservability(t *testing.T) {
	// systemd's notification socket, as a Type=notify unit gets it.
	sockPath := filepath.Join(t.TempDir(), "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	t.Setenv("NOTIFY_SOCKET", sockPath)

	dir := t.TempDir()
	admin := cred{"admin", "first-admin-pass"}
	s := startSwmgr(t, &serveOptions{dataDir: dir, adminPasswordFile: writeFile(t, admin.password), accessLog: true, metrics: true,
		throttle: auth.ThrottleOptions{MaxFailures: 3}})

	notify.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 256)
	n, err := notify.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "READY=1") {
		t.Errorf("sd_notify: got %q, %v; want READY=1", buf[:n], err)
	}

	t.Run("health", func(t *testing.T) {
		for _, secure := range []bool{false, true} {
			for path, want := range map[string]string{"/healthz": `{"Status":"alive"}`, "/readyz": `{"Ready":true}`} {
				code, body := s.raw(secure, path, "", "")
				if code != 200 || body != want+"\n" {
					t.Errorf("%s (https %v): %d %q", path, secure, code, body)
				}
			}
		}
	})

	t.Run("openapi document", func(t *testing.T) {
		// Public on every listener (it holds no data), and what `swmgr
		// openapi` prints.
		want := string(openapi.JSON(model.Builtin()))
		for _, secure := range []bool{false, true} {
			code, body := s.raw(secure, openapi.Path, "", "")
			if code != 200 || body != want {
				t.Errorf("%s (https %v): %d, %d bytes; want 200 and the generated document", openapi.Path, secure, code, len(body))
			}
		}
	})

	// Some traffic: a write, a refused login, a lockout.
	s.want(s.as(admin, "PATCH", "/config/SystemParam", `{"Description":"metrics test"}`), 200, "patch")
	s.want(s.req(true, "GET", "/config/SystemParam", "admin", "wrong-password-1", ""), 401, "bad password")
	for i := range 3 {
		s.req(true, "GET", "/config/SystemParam", "ghost", fmt.Sprintf("wrong-password-%d", i+2), "")
	}
	s.want(s.req(true, "GET", "/config/SystemParam", "ghost", "wrong-password-5", ""), 429, "locked out")
	port := s.req(false, "GET", "/config/Port?IntfRef=fpPort1", "", "", "")
	s.want(port, 200, "get port")

	t.Run("metrics access", func(t *testing.T) {
		if code, _ := s.raw(true, "/metrics", "", ""); code != 401 {
			t.Errorf("/metrics over HTTPS without credentials: %d, want 401", code)
		}
		if code, _ := s.raw(true, "/metrics", admin.name, admin.password); code != 200 {
			t.Errorf("/metrics over HTTPS with credentials: %d, want 200", code)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		code, text := s.raw(false, "/metrics", "", "")
		if code != 200 {
			t.Fatalf("/metrics on loopback: %d", code)
		}
		for _, want := range []string{
			`swmgr_http_request_duration_seconds_count{class="config",code="200",method="PATCH"} 1`,
			`swmgr_http_request_duration_seconds_count{class="config",code="401",method="GET"}`,
			`swmgr_http_request_duration_seconds_count{class="health",code="200",method="GET"} 4`,
			`swmgr_login_failures_total 4`,
			`swmgr_login_lockouts_total 1`,
			`swmgr_commit_duration_seconds_count{result="ok"}`,
			`swmgr_store_batch_size_count`,
			`swmgr_store_fsync_seconds_count`,
			`swmgr_backend_apply_seconds_count{result="ok"}`,
			`swmgr_revision `,
			`swmgr_candidates 0`,
			`swmgr_event_subscribers 0`, // no SSE client; the archive scheduler follows commits too, and is not counted
			`swmgr_port_receive_bytes_total{port="fpPort1"}`,
			`swmgr_port_carrier_up_changes_total{port="fpPort4"}`,
			`swmgr_port_up{port="fpPort1"} 0`,
			`swmgr_commit_confirm_pending 0`,
			`go_goroutines`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s:\n%s", want, text)
			}
		}
		if m := regexp.MustCompile(`(?m)^swmgr_revision (\d+)$`).FindStringSubmatch(text); m == nil || m[1] == "0" {
			t.Errorf("swmgr_revision: %v", m)
		}
	})

	t.Run("access log", func(t *testing.T) {
		// Access lines are written in batches (obs.LineBuffer): wait for them.
		var logs, patch, refused, get string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			logs = s.logs.String()
			for _, line := range strings.Split(logs, "\n") {
				if !strings.Contains(line, "msg=request ") {
					continue
				}
				switch {
				case strings.Contains(line, "method=PATCH"):
					patch = line
				case strings.Contains(line, "status=401") && strings.Contains(line, "user=admin"):
					refused = line
				case strings.Contains(line, "path=/public/v1/config/Port ") && strings.Contains(line, "user=local"):
					get = line
				}
			}
			if patch != "" && refused != "" && get != "" || time.Now().After(deadline) {
				break
			}
		}
		for _, c := range []struct{ line, want string }{
			{patch, `level=INFO msg=request user=admin source=127.0.0.1:`},
			{patch, `method=PATCH route=config path=/public/v1/config/SystemParam status=200 bytes=`},
			{patch, ` revision=`},
			{refused, `route=config path=/public/v1/config/SystemParam status=401`},
			{get, `route=config path=/public/v1/config/Port status=200 bytes=` + itoa(len(port.raw))},
		} {
			if !strings.Contains(c.line, c.want) || !strings.Contains(c.line, "latency_ms=") {
				t.Errorf("access log line %q lacks %q", c.line, c.want)
			}
		}
		for _, secret := range []string{admin.password, "wrong-password-1", "wrong-password-2", "IntfRef=fpPort1"} {
			if strings.Contains(logs, secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})

	s.stop()
	if _, err := os.Stat(filepath.Join(dir, "swmgr.pid")); !os.IsNotExist(err) {
		t.Errorf("pid file after a clean shutdown: %v", err)
	}
}

func itoa(n int) string { return strconvItoa(n) }

// The access log and metrics can be turned off.
func TestObservabilityOff(t *testing.T) {
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), adminPasswordFile: writeFile(t, "first-admin-pass")})
	s.want(s.req(false, "GET", "/config/SystemParam", "", "", ""), 200, "get")
	if code, _ := s.raw(false, "/metrics", "", ""); code != 404 {
		t.Errorf("/metrics with --metrics=false: %d, want 404", code)
	}
	if strings.Contains(s.logs.String(), "msg=request ") {
		t.Errorf("access log with --access-log=false:\n%s", s.logs)
	}
}

// A start that cannot bind its port creates nothing and says what to do.
func TestUnprivilegedPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to drop privileges in a child")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "swmgr")
	if out, err := runCmd("go", "build", "-o", bin, "."); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	// The unprivileged user must reach the binary and may create the
	// data directory: only the port stops it.
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), filepath.Dir(dataDir)} {
		os.Chmod(d, 0o777)
	}
	out, err := runAs(65534, bin, "serve", "--data-dir", dataDir, "--http", "127.0.0.1:0", "--https", ":443")
	if err == nil || !strings.Contains(out, "permission denied: run as root or give --https 127.0.0.1:8443") {
		t.Errorf("unprivileged start: %v\n%s", err, out)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the failed start created %s", dataDir)
	}
}
