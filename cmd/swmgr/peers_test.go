package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
