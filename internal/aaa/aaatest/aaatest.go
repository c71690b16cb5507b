// Package aaatest starts real AAA servers on loopback for tests:
// tacquito's TACACS+ server (built from the module cache at the version
// swmgr's go.mod pins) and FreeRADIUS (Debian's freeradius, with a
// configuration directory of its own). Each skips the test naming what is
// missing, and fails it instead when $CI is set.
package aaatest

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/crypto/bcrypt"

	"github.com/swmgr/swmgr/internal/syncbuf"
	"github.com/swmgr/swmgr/internal/testneed"
	"github.com/swmgr/swmgr/internal/testport"
)

func missing(t testing.TB, why string) {
	t.Helper()
	if testneed.InCI() {
		t.Fatalf("real AAA server test cannot run in CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}

// User is a user the servers know.
type User struct {
	Name, Password string
	PrivLvl        int    // TACACS+ priv-lvl given at shell authorization; 0: none
	ServiceType    string // RADIUS Service-Type: "Administrative-User", "NAS-Prompt-User" or ""
	FilterID       string // RADIUS Filter-Id, or ""
}

const tacquitoModule = "github.com/facebookincubator/tacquito"

var buildMu sync.Mutex

// tacquitoBinary builds tacquito's server command once per version into
// the temporary directory and returns its path.
func tacquitoBinary(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		missing(t, "no go command to build tacquito's server with")
	}
	// The version swmgr's go.mod pins (a test runs in its package's
	// directory, inside the module).
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Version}}", tacquitoModule).Output()
	version := strings.TrimSpace(string(out))
	if err != nil || version == "" {
		t.Fatalf("the version of %s in go.mod: %v %s", tacquitoModule, err, out)
	}
	dir := filepath.Join(os.TempDir(), "swmgr-tacquito-"+version)
	bin := filepath.Join(dir, "server")
	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "tacquito-build")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goBin, "install", tacquitoModule+"/cmds/server@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		missing(t, fmt.Sprintf("cannot build tacquito's server (%v): %s", err, out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "server"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Tacacs is a running tacquito server.
type Tacacs struct {
	Addr    string // 127.0.0.1:port
	Host    string
	Port    int
	Secret  string
	acctLog string
	config  string // the configuration file, which the server reloads when it is written
	clients string // the prefixes it serves, as the configuration writes them
	cmd     *exec.Cmd
	out     *syncbuf.Buffer
}

// StartTacacs starts tacquito's server on loopback, knowing users, with
// secret as the shared key of every client. It needs root: tacquito's
// server insists on a local syslog socket, which it gets at /run/syslog in
// a mount namespace of its own (the host's /run is left alone).
func StartTacacs(t testing.TB, secret string, users []User) *Tacacs {
	t.Helper()
	return StartTacacsWith(t, secret, users, TacacsOptions{})
}

// TacacsOptions say whom a tacquito server serves and where it runs.
type TacacsOptions struct {
	// Clients are the prefixes the server takes connections from (default
	// 127.0.0.0/8 and ::1/128): a client from another address finds no
	// key and its connection is closed unanswered.
	Clients []string
	// Netns runs the server in this named network namespace (ip netns),
	// on its 127.0.0.1.
	Netns string
}

// StartTacacsWith is StartTacacs with options.
func StartTacacsWith(t testing.TB, secret string, users []User, o TacacsOptions) *Tacacs {
	t.Helper()
	clients := `["127.0.0.0/8", "::1/128"]`
	if len(o.Clients) > 0 {
		q := make([]string, len(o.Clients))
		for i, c := range o.Clients {
			q[i] = fmt.Sprintf("%q", c)
		}
		clients = "[" + strings.Join(q, ", ") + "]"
	}
	if os.Geteuid() != 0 {
		missing(t, "tacquito's server needs a syslog socket, given in a mount namespace, which needs root")
	}
	testneed.Program(t, "util-linux", "unshare")
	bin := tacquitoBinary(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	sl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(run, "syslog"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.Close() })
	go func() {
		buf := make([]byte, 8192)
		for {
			if _, _, err := sl.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	cfg := filepath.Join(dir, "tacquito.yaml")
	if err := os.WriteFile(cfg, tacacsConfig(t, secret, clients, users), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Tacacs{Host: "127.0.0.1", Port: testport.TCP(t), Secret: secret, acctLog: filepath.Join(dir, "accounting.log"), config: cfg, clients: clients, out: &syncbuf.Buffer{}}
	s.Addr = net.JoinHostPort(s.Host, fmt.Sprint(s.Port))
	metrics := testport.TCP(t)
	args := []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$1" /run && shift && exec "$@"`, "sh", run,
		bin, "-network", "tcp", "-address", s.Addr, "-config", cfg, "-acct-log-path", s.acctLog, "-level", "20", "-metrics-address", fmt.Sprintf("127.0.0.1:%d", metrics)}
	if o.Netns != "" {
		args = append([]string{"ip", "netns", "exec", o.Netns}, args...)
	}
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	// Ready once it listens and has loaded the users (which it does
	// asynchronously, and says so).
	for i := 0; ; i++ {
		var err error
		InNetns(t, o.Netns, func() {
			var c net.Conn
			if c, err = net.DialTimeout("tcp", s.Addr, 100*time.Millisecond); err == nil {
				c.Close()
			}
		})
		if err == nil && strings.Contains(s.out.String(), configLoaded) {
			break
		}
		if i == 400 {
			t.Fatalf("tacquito did not listen on %s with its users loaded: %s", s.Addr, s.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// configLoaded is what tacquito says each time it has loaded its
// configuration (at start, and after each change of the file).
const configLoaded = "updated all providers from config source"

// tacacsConfig is tacquito's configuration: users, each with its
// password's bcrypt hash and the priv-lvl its shell authorization gives,
// under one key for clients from the prefixes clients lists.
func tacacsConfig(t testing.TB, secret, clients string, users []User) []byte {
	t.Helper()
	var y strings.Builder
	fmt.Fprintf(&y, "secrets:\n  - name: loopback\n    secret:\n      group: tacquito\n      key: %q\n    handler:\n      type: 1\n    type: 1\n    options:\n      prefixes: |\n        %s\n", secret, clients)
	y.WriteString("users:\n")
	for _, u := range users {
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&y, "  - name: %q\n    scopes: [\"loopback\"]\n    groups:\n      - name: %q\n", u.Name, "g-"+u.Name)
		if u.PrivLvl > 0 {
			fmt.Fprintf(&y, "        services:\n          - name: shell\n            set_values:\n              - name: priv-lvl\n                values: [\"%d\"]\n", u.PrivLvl)
		} else {
			y.WriteString("        services:\n          - name: shell\n            set_values:\n              - name: timeout\n                values: [\"60\"]\n")
		}
		fmt.Fprintf(&y, "        authenticator:\n          type: 1\n          options:\n            hash: %s\n        accounter:\n          name: file\n          type: 3\n", hex.EncodeToString(hash))
	}
	y.WriteString("prefix_allow: " + clients + "\n")
	return []byte(y.String())
}

// SetUsers makes the server know users instead of those it knew (as an
// administrator editing its configuration would), and returns once it has
// loaded them.
func (s *Tacacs) SetUsers(t testing.TB, users []User) {
	t.Helper()
	loaded := strings.Count(s.out.String(), configLoaded)
	if err := os.WriteFile(s.config, tacacsConfig(t, s.Secret, s.clients, users), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(s.out.String(), configLoaded) == loaded {
		if time.Now().After(deadline) {
			t.Fatalf("tacquito did not load its new users: %s", s.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// InNetns runs fn on a thread in the named network namespace ("": this
// process's): the sockets fn opens are the namespace's. The thread ends
// with it, never to serve another goroutine.
func InNetns(t testing.TB, name string, fn func()) {
	t.Helper()
	if name == "" {
		fn()
		return
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		h, err := netns.GetFromName(name)
		if err == nil {
			defer h.Close()
			err = netns.Set(h)
		}
		if err != nil {
			done <- fmt.Errorf("enter network namespace %s: %w", name, err)
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Stop stops the server.
func (s *Tacacs) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// Accounting returns the accounting log the server wrote.
func (s *Tacacs) Accounting() string {
	b, _ := os.ReadFile(s.acctLog)
	return string(b)
}

// Output is what the server printed.
func (s *Tacacs) Output() string { return s.out.String() }

// Hanging listens on loopback, accepts connections and never answers: a
// server that is there but slow. Conns reports how many it holds.
type Hanging struct {
	Host  string
	Port  int
	mu    sync.Mutex
	conns []net.Conn
}

// StartHanging starts a hanging TCP server on host, an address of the
// loopback interface (127.0.0.1, or another of 127.0.0.0/8 where a test
// needs servers of distinct addresses).
func StartHanging(t testing.TB, host string) *Hanging {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	h := &Hanging{Host: host, Port: l.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			c.Close()
		}
	})
	return h
}

// Conns is how many connections it accepted.
func (h *Hanging) Conns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Silent is a UDP socket that reads what it is sent and never answers: a
// RADIUS server that is there but silent. Got reports how many packets
// reached it.
type Silent struct {
	Host string
	Port int
	got  atomic.Int64
}

// StartSilent starts a silent UDP socket on host, an address of the
// loopback interface.
func StartSilent(t testing.TB, host string) *Silent {
	t.Helper()
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Silent{Host: host, Port: c.LocalAddr().(*net.UDPAddr).Port}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			s.got.Add(1)
		}
	}()
	t.Cleanup(func() { c.Close() })
	return s
}

// Got is how many packets reached it.
func (s *Silent) Got() int64 { return s.got.Load() }

// Radius is a running FreeRADIUS.
type Radius struct {
	Host            string
	Port, AcctPort  int
	Secret          string
	dir, detailFile string
	cmd             *exec.Cmd
	out             *syncbuf.Buffer
}

// StartRadius starts Debian's FreeRADIUS (freeradius -X, in the
// foreground) on loopback with a configuration directory of its own:
// users from the files module, accounting written to a detail file.
func StartRadius(t testing.TB, secret string, users []User) *Radius {
	t.Helper()
	bin := testneed.Program(t, "freeradius", "freeradius", "/usr/sbin/freeradius")
	dir := t.TempDir()
	r := &Radius{Host: "127.0.0.1", Port: testport.UDP(t), Secret: secret, dir: dir, out: &syncbuf.Buffer{}}
	r.AcctPort = testport.UDP(t)
	r.detailFile = filepath.Join(dir, "detail")
	var u strings.Builder
	for _, x := range users {
		fmt.Fprintf(&u, "%s Cleartext-Password := %q\n", x.Name, x.Password)
		var reply []string
		if x.ServiceType != "" {
			reply = append(reply, "Service-Type = "+x.ServiceType)
		}
		if x.FilterID != "" {
			reply = append(reply, fmt.Sprintf("Filter-Id = %q", x.FilterID))
		}
		if len(reply) > 0 {
			u.WriteString("\t" + strings.Join(reply, ",\n\t") + "\n")
		}
		u.WriteString("\n")
	}
	conf := fmt.Sprintf(`prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = /usr/sbin
logdir = %[1]s
raddbdir = %[1]s
radacctdir = %[1]s
name = freeradius
confdir = %[1]s
run_dir = %[1]s
libdir = /usr/lib/freeradius
pidfile = %[1]s/radiusd.pid
max_request_time = 30
cleanup_delay = 5
max_requests = 1024
hostname_lookups = no
log {
	destination = stdout
	auth = yes
}
security {
	allow_core_dumps = no
	max_attributes = 200
	reject_delay = 0
	status_server = no
}
thread pool {
	start_servers = 2
	max_servers = 4
	min_spare_servers = 1
	max_spare_servers = 4
}
client loopback {
	ipaddr = 127.0.0.1
	secret = %[2]q
}
modules {
	files {
		filename = %[1]s/users
	}
	pap {
	}
	expr {
	}
	detail {
		filename = %[3]s
		escape_filenames = no
		permissions = 0600
		header = "%%t"
	}
}
server default {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = %[4]d
	}
	listen {
		type = acct
		ipaddr = 127.0.0.1
		port = %[5]d
	}
	authorize {
		files
		pap
	}
	authenticate {
		Auth-Type PAP {
			pap
		}
	}
	post-auth {
	}
	preacct {
		# What the stock configuration's acct_unique policy makes: the
		# key by which SQL accounting and duplicate detection tell records
		# apart. Records of different switches must differ in it.
		update request {
			&Acct-Unique-Session-Id := "%%{md5:%%{User-Name},%%{Acct-Session-ID},%%{%%{NAS-IPv6-Address}:-%%{NAS-IP-Address}},%%{NAS-Identifier},%%{NAS-Port-ID},%%{NAS-Port}}"
		}
	}
	accounting {
		detail
	}
}
`, dir, secret, r.detailFile, r.Port, r.AcctPort)
	if err := os.WriteFile(filepath.Join(dir, "radiusd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(u.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The dictionaries are the package's.
	if err := os.Symlink("/usr/share/freeradius/dictionary", filepath.Join(dir, "dictionary")); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "-f", "-l", "stdout", "-d", dir, "-n", "radiusd")
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if strings.Contains(r.out.String(), "Ready to process requests") {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("freeradius did not start: %s", r.out)
	return nil
}

// Stop stops FreeRADIUS.
func (r *Radius) Stop() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

// Accounting returns the detail file the server wrote.
func (r *Radius) Accounting() string {
	b, _ := os.ReadFile(r.detailFile)
	return string(b)
}

// Output is what the server printed.
func (r *Radius) Output() string { return r.out.String() }

// Forwarding passes TCP connections on to a server, counting them: a
// server's sessions (TACACS+ makes one connection per session) seen from
// the client's side.
type Forwarding struct {
	Host  string
	Port  int
	conns atomic.Int64
	down  atomic.Bool
}

// SetDown makes it close the connections it accepts unanswered (a server
// that is down), or forward them again.
func (f *Forwarding) SetDown(down bool) { f.down.Store(down) }

// StartForwarding listens on host (an address of the loopback interface)
// and forwards each connection to target, both ways, until either end
// closes it.
func StartForwarding(t testing.TB, host, target string) *Forwarding {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	f := &Forwarding{Host: host, Port: l.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			go func() {
				defer c.Close()
				if f.down.Load() {
					return
				}
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(s, c); done <- struct{}{} }()
				go func() { io.Copy(c, s); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return f
}

// Conns is how many connections it accepted.
func (f *Forwarding) Conns() int64 { return f.conns.Load() }
