package main

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/peercred"
)

// osUser is a throwaway account of the host, made with useradd.
type osUser struct{ name, uid, gid string }

// makeOSUser creates an account (no home, no login shell) and removes it
// when the test ends, also if it fails.
func makeOSUser(t *testing.T, name string) osUser {
	t.Helper()
	if etcEntry(t, "passwd", name) != "" {
		t.Fatalf("%s already exists", name)
	}
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	f := strings.Split(etcEntry(t, "passwd", name), ":")
	return osUser{name: name, uid: f[2], gid: f[3]}
}

// curlAs runs curl as the OS user u ("" for this process's user, root)
// and returns the status and body. socket, if set, is the Unix socket to
// go through.
func curlAs(t *testing.T, u osUser, socket, method, url, body string) (int, string) {
	t.Helper()
	args := []string{"-sS", "-X", method, "-o", "-", "-w", "\n%{http_code}"}
	if socket != "" {
		args = append(args, "--unix-socket", socket)
	}
	if body != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", body)
	}
	args = append(args, url)
	cmd := exec.Command("curl", args...)
	if u.name != "" {
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + u.uid, "--regid=" + u.gid, "--clear-groups", "--", "curl"}, args...)...)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl as %q %s %s: %v\n%s", u.name, method, url, err, out)
	}
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(s, '\n')
	code, _ := strconv.Atoi(s[i+1:])
	return code, s[:max(i, 0)]
}

// Requests without credentials from this host act as the OS user who sent
// them, over loopback HTTP and over the Unix socket: real accounts, real
// processes running as them.
func TestLocalPeersAsOSUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this test makes real accounts with useradd and runs curl as them with setpriv, which needs root; run it as root (CI does)")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (CI installs it): %v", tool, err)
		}
	}
	suffix := strings.ToLower(rand.Text()[:6])
	oper := makeOSUser(t, "swpeero"+suffix)  // will be a swmgr User of group operator
	other := makeOSUser(t, "swpeern"+suffix) // no swmgr User
	reader := makeOSUser(t, "swpeerr"+suffix)

	// The socket's directory must be reachable by the other users.
	sockDir, err := os.MkdirTemp("", "swmgr-peers-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chmod(sockDir, 0o755)
	sock := filepath.Join(sockDir, "swmgr.sock")
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", socket: sock, adminPasswordFile: writeFile(t, "first-admin-pass")})
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o666 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %s: %v %v", sock, fi, err)
	}
	root := osUser{}
	via := map[string]struct{ socket, base string }{
		"loopback HTTP": {"", s.plain},
		"Unix socket":   {sock, "http://swmgr/public/v1"},
	}
	for i, how := range []string{"loopback HTTP", "Unix socket"} {
		v := via[how]
		t.Run(how, func(t *testing.T) {
			n := strconv.Itoa(i + 1)
			for _, tc := range []struct {
				who          osUser
				method, path string
				body         string
				want         int
			}{
				// root without credentials is admin: it makes the Users.
				{root, "POST", "/config/User", `{"Name":"` + oper.name + `","Group":"operator","Password":"oper-pass-` + n + `"}`, 201},
				{root, "POST", "/config/User", `{"Name":"` + reader.name + `","Group":"viewers","Password":"reader-pass-` + n + `"}`, 201},
				// An operator User changes configuration, not users.
				{oper, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.` + n + `"}`, 201},
				{oper, "PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.` + n + `","MinPoll":5}`, 200},
				{oper, "POST", "/config/User", `{"Name":"made` + n + `","Password":"made-pass-1"}`, 403},
				{oper, "GET", "/config/NtpServers", "", 200},
				// A User of another group reads.
				{reader, "GET", "/config/NtpServers", "", 200},
				{reader, "DELETE", "/config/NtpServer?IpAddr=192.0.2." + n, "", 403},
				// An OS user who is no User reads, and may not write.
				{other, "GET", "/config/NtpServers", "", 200},
				{other, "GET", "/state/ConfigLogs", "", 200},
				{other, "POST", "/config/NtpServer", `{"IpAddr":"198.51.100.` + n + `"}`, 403},
				{other, "POST", "/config/User", `{"Name":"evil` + n + `","Group":"admin","Password":"evil-pass-1"}`, 403},
				{other, "POST", "/action/ClearConfigLog", `{}`, 403},
				// root deletes.
				{root, "DELETE", "/config/User?Name=" + reader.name, "", 200},
				{root, "DELETE", "/config/User?Name=" + oper.name, "", 200},
			} {
				code, body := curlAs(t, tc.who, v.socket, tc.method, v.base+tc.path, tc.body)
				if code != tc.want {
					t.Errorf("%s %s %s as %q: %d, want %d: %s", how, tc.method, tc.path, tc.who.name, code, tc.want, body)
				}
				if code == 403 && (!strings.Contains(body, `"Code":"forbidden"`) || !strings.Contains(body, "local user "+tc.who.name)) {
					t.Errorf("the 403 does not say who: %s", body)
				}
			}
			// Once deleted, the operator is back to reading.
			if code, body := curlAs(t, oper, v.socket, "POST", v.base+"/config/NtpServer", `{"IpAddr":"203.0.113.`+n+`"}`); code != 403 {
				t.Errorf("a deleted User's OS account writes: %d %s", code, body)
			}
		})
	}

	// The config log and the revisions name each one.
	r := s.req(false, "GET", "/state/ConfigLogs", "", "", "")
	seen := map[string]int{}
	for _, o := range r.body["Objects"].([]any) {
		e := o.(map[string]any)["Object"].(map[string]any)
		seen[e["UserName"].(string)+" "+e["Operation"].(string)+" "+strings.SplitN(e["Result"].(string), ":", 2)[0]]++
	}
	for _, want := range []string{"root POST Success", oper.name + " POST Success", oper.name + " PATCH Success", oper.name + " POST Error", other.name + " POST Error", reader.name + " DELETE Error"} {
		if seen[want] < 2 {
			t.Errorf("config log: %d entries %q (want one per way in): %v", seen[want], want, seen)
		}
	}
	r = s.req(false, "GET", "/revisions", "", "", "")
	users := map[string]bool{}
	for _, rv := range r.body["Objects"].([]any) {
		users[rv.(map[string]any)["Object"].(map[string]any)["User"].(string)] = true
	}
	if !users["root"] || !users[oper.name] {
		raw, _ := json.Marshal(users)
		t.Errorf("revisions by %s", raw)
	}
}

// --local-others refuse: a local user who is no User gets nothing without
// credentials, and may still log in.
func TestLocalOthersRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make an account and run curl as it")
	}
	other := makeOSUser(t, "swpeerx"+strings.ToLower(rand.Text()[:6]))
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", localOthers: "refuse", adminPasswordFile: writeFile(t, "first-admin-pass")})
	if code, body := curlAs(t, other, "", "GET", s.plain+"/config/NtpServers", ""); code != 401 || !strings.Contains(body, "is not a swmgr User") {
		t.Errorf("refused: %d %s", code, body)
	}
	if code, body := curlAs(t, other, "", "GET", strings.Replace(s.plain, "http://", "http://admin:first-admin-pass@", 1)+"/config/NtpServers", ""); code != 200 {
		t.Errorf("with credentials: %d %s", code, body)
	}
	if code, _ := curlAs(t, osUser{}, "", "POST", s.plain+"/config/NtpServer", `{"IpAddr":"192.0.2.9"}`); code != 201 {
		t.Errorf("root: %d", code)
	}
}

// closedClientHook is a peer lookup that, while armed, first waits until no
// process holds the client's socket any more (the client closed it, and the
// kernel keeps only a minisock or an orphan): the lookup then runs as it
// would on a server too busy to get to it before the client closed.
type closedClientHook struct {
	armed atomic.Bool
	done  chan error // one value per armed lookup
}

func (h *closedClientHook) cred(c net.Conn) (peercred.Cred, error) {
	if h.armed.Load() {
		h.done <- waitClientClosed(c)
	}
	return peercred.Of(c)
}

// waitClientClosed waits until the kernel says no process holds the
// client's end of c and it has become the minisock the kernel keeps after
// the client's FIN was acknowledged (FIN_WAIT2 or TIME_WAIT, uid 0).
func waitClientClosed(c net.Conn) error {
	for c != nil {
		if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
			c = nc.NetConn()
			continue
		}
		break
	}
	client := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	server := c.LocalAddr().(*net.TCPAddr).AddrPort()
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	server = netip.AddrPortFrom(server.Addr().Unmap(), server.Port())
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := peercred.TCPSocket(client, server)
		if err != nil || s.Inode == 0 && (s.State == peercred.FinWait2 || s.State == peercred.TimeWait) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the client's socket %v is still held: %+v", client, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A local account that sends a write without credentials and closes its
// socket at once is never taken for root when swmgr looks up its peer only
// after that (a busy server): the kernel then reports the client's end as
// a minisock of uid 0. The hook makes the late lookup certain; the client
// is a real process of a real account, over 127.0.0.1 and ::1.
func TestClosedClientIsNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this test makes a real account with useradd and runs a client as it with setpriv, which needs root; run it as root (CI does)")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv", "bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (CI installs it): %v", tool, err)
		}
	}
	suffix := strings.ToLower(rand.Text()[:6])
	attacker := makeOSUser(t, "swpeerc"+suffix)
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(listen, func(t *testing.T) {
			hook := &closedClientHook{done: make(chan error, 1)}
			s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), http: listen, https: "-", adminPasswordFile: writeFile(t, "first-admin-pass"), peerCred: hook.cred})
			u, err := url.Parse(s.plain)
			if err != nil {
				t.Fatal(err)
			}
			evil := "evil" + suffix
			body := `{"Name":"` + evil + `","Group":"admin","Password":"evil-pass-1"}`
			// A second request, longer than the server's read buffer,
			// follows the first on the connection: reading ahead, the
			// server finds more of it rather than the connection's end,
			// which would cancel the first request.
			req := "POST /public/v1/config/User HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body +
				"GET /public/v1/config/Users HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Pad: " + strings.Repeat("x", 16<<10) + "\r\n\r\n"
			hook.armed.Store(true)
			// Write the request and close at once (bash closes its
			// descriptors as it exits).
			cmd := exec.Command("setpriv", "--reuid="+attacker.uid, "--regid="+attacker.gid, "--clear-groups", "--",
				"bash", "-c", `exec 3<>"/dev/tcp/$1/$2" && printf '%s' "$3" >&3`, "_", u.Hostname(), u.Port(), req)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the client: %v\n%s", err, out)
			}
			select {
			case err := <-hook.done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("swmgr never looked up the closed client")
			}
			hook.armed.Store(false)
			// The request is answered: refused (the log says so), or the
			// User exists.
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(s.logs.String(), "local request refused") {
				if code, out := curlAs(t, osUser{}, "", "GET", s.plain+"/config/User?Name="+evil, ""); code != 404 {
					t.Fatalf("a client that closed its socket made an admin User: %d %s", code, out)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the request was never answered:\n%s", s.logs)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if code, out := curlAs(t, osUser{}, "", "GET", s.plain+"/config/User?Name="+evil, ""); code != 404 {
				t.Errorf("a client that closed its socket made an admin User: %d %s", code, out)
			}
		})
	}
}

// One local account holding as many connections as --max-conns-per-client
// allows does not lock root (or another account) out of loopback HTTP:
// local clients are counted per OS user, not per address (every local
// client is 127.0.0.1). Its own next connection is closed at once.
func TestLocalConnCapPerOSUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this test makes a real account with useradd and runs clients as it with setpriv, which needs root; run it as root (CI does)")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv", "bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (CI installs it): %v", tool, err)
		}
	}
	suffix := strings.ToLower(rand.Text()[:6])
	hog := makeOSUser(t, "swpeerh"+suffix)
	other := makeOSUser(t, "swpeerg"+suffix)
	const capacity = 4
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", maxConnsPerClient: capacity, adminPasswordFile: writeFile(t, "first-admin-pass")})
	u, err := url.Parse(s.plain)
	if err != nil {
		t.Fatal(err)
	}
	// The account opens two more connections than it may, and holds them.
	script := `for fd in 3 4 5 6 7 8; do eval "exec $fd<>/dev/tcp/$1/$2" || exit 1; done; echo held; exec sleep 60`
	cmd := exec.Command("setpriv", "--reuid="+hog.uid, "--regid="+hog.gid, "--clear-groups", "--", "bash", "-c", script, "_", u.Hostname(), u.Port())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("the account's client: %q", line)
	}
	// The server has accepted all six once it refused two.
	const refusal = "too many open connections from one client"
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(s.logs.String(), refusal) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the account's extra connections were not refused:\n%s", s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.logs.String(), "client=uid:"+hog.uid) {
		t.Errorf("the refusal does not name the account's uid %s:\n%s", hog.uid, s.logs)
	}
	// root, and another account, are served meanwhile.
	for _, who := range []osUser{{}, other} {
		if code, body := curlAs(t, who, "", "GET", s.plain+"/config/NtpServers", ""); code != 200 {
			t.Errorf("%q while the account holds its connections: %d %s", who.name, code, body)
		}
	}
	if n := strings.Count(s.logs.String(), refusal); n != 2 {
		t.Errorf("%d connections refused, want the account's 2:\n%s", n, s.logs)
	}
}
