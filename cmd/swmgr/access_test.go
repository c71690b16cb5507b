package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/syncbuf"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// Black-box tests of access: `swmgr serve` (the same function the command
// runs) on free loopback ports, talked to by real HTTP and TLS clients.

// syncBuffer is the log sink the test reads while the service writes it.
type syncBuffer = syncbuf.Buffer

type instance struct {
	t             *testing.T
	o             *serveOptions
	logs          *syncBuffer
	plain, secure string // base URLs, ending in /public/v1
	plainClient   *http.Client
	tlsClient     *http.Client
	pool          *x509.CertPool
	stop          func()
}

// startSwmgr runs serve with o (on 127.0.0.1:0 for both listeners unless
// o says otherwise) until the test ends.
func startSwmgr(t *testing.T, o *serveOptions) *instance {
	t.Helper()
	if o.http == "" {
		o.http = "127.0.0.1:0"
	}
	if o.https == "" {
		o.https = "127.0.0.1:0"
	}
	if o.https == "-" {
		o.https = ""
	}
	if o.backend == "" {
		o.backend = "sim"
	}
	o.ports, o.logFormat, o.logLevel = 4, "text", "debug"
	s := &instance{t: t, o: o, logs: &syncBuffer{}}
	o.logOut = s.logs
	ready := make(chan [2]string, 1)
	o.ready = func(h, hs string) { ready <- [2]string{h, hs} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o) }()
	var addrs [2]string
	select {
	case addrs = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, s.logs)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve did not start\n%s", s.logs)
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(s.stop)
	s.plainClient = &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	if addrs[0] != "" {
		host, port, _ := net.SplitHostPort(addrs[0])
		if host != "::1" {
			host = "127.0.0.1"
		}
		s.plain = "http://" + net.JoinHostPort(host, port) + "/public/v1"
	}
	if addrs[1] != "" {
		// Pin the certificate the server made: trust it and nothing else.
		pem, err := os.ReadFile(filepath.Join(o.dataDir, tlscert.CertFile))
		if err != nil {
			t.Fatal(err)
		}
		s.pool = x509.NewCertPool()
		if !s.pool.AppendCertsFromPEM(pem) {
			t.Fatal("bad certificate file")
		}
		s.tlsClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool}}}
		s.secure = "https://" + addrs[1] + "/public/v1"
	}
	return s
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (r reply) code() string {
	e, _ := r.body["Error"].(map[string]any)
	c, _ := e["Code"].(string)
	return c
}

// req sends a request over HTTPS (secure) or plain HTTP, with Basic
// credentials unless user is "".
func (s *instance) req(secure bool, method, path, user, password, body string, hdr ...string) reply {
	s.t.Helper()
	base, client := s.plain, s.plainClient
	if secure {
		base, client = s.secure, s.tlsClient
	}
	rq, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if user != "" {
		rq.SetBasicAuth(user, password)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		rq.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(rq)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &r.body); err != nil {
			s.t.Fatalf("%s %s: body is not JSON: %q", method, path, data)
		}
	}
	return r
}

// as sends over HTTPS as a user.
func (s *instance) as(u cred, method, path, body string) reply {
	s.t.Helper()
	return s.req(true, method, path, u.name, u.password, body)
}

type cred struct{ name, password string }

func (s *instance) want(r reply, status int, what string) {
	s.t.Helper()
	if r.status != status {
		s.t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.raw)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAccessOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	admin := cred{"admin", "first-admin-pass"}
	s := startSwmgr(t, &serveOptions{dataDir: dir, adminPasswordFile: writeFile(t, admin.password+"\n")})
	oper := cred{"oper", "operator-pass-1"}
	reader := cred{"reader", "reader-pass-1"}
	passwords := []string{admin.password, oper.password, reader.password}

	t.Run("credentials", func(t *testing.T) {
		for _, tc := range []struct {
			name           string
			user, password string
			hdr            []string
			want           int
		}{
			{"none", "", "", nil, 401},
			{"wrong password", "admin", "not-the-password", nil, 401},
			{"unknown user", "nobody", admin.password, nil, 401},
			{"an OS account that is no User", "root", "whatever-pw", nil, 401},
			{"not Basic", "", "", []string{"Authorization", "Bearer abc.def"}, 401},
			{"good", admin.name, admin.password, nil, 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := s.req(true, "GET", "/config/Users", tc.user, tc.password, "", tc.hdr...)
				s.want(r, tc.want, tc.name)
				if tc.want == 401 && (r.header.Get("WWW-Authenticate") != `Basic realm="swmgr"` || r.code() != "unauthorized") {
					t.Errorf("401 without the challenge or code: %v %s", r.header, r.raw)
				}
			})
		}
		// Every route, not only the API.
		s.want(s.req(true, "GET", "/../../", "", "", ""), 401, "a path outside the API")
		s.want(s.req(true, "GET", "/events", "", "", ""), 401, "the change feed")
		s.want(s.req(true, "GET", "/revisions", "", "", ""), 401, "revisions")
		// Plain HTTP on loopback: no credentials is the local admin; sent
		// credentials are checked.
		s.want(s.req(false, "GET", "/config/Users", "", "", ""), 200, "plain, no credentials")
		s.want(s.req(false, "GET", "/config/Users", "admin", "wrong-password", ""), 401, "plain, wrong password")
		s.want(s.req(false, "GET", "/config/Users", admin.name, admin.password, ""), 200, "plain, right password")
		// TLS 1.1 is refused.
		old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}}
		if resp, err := old.Get(s.secure + "/config/Users"); err == nil {
			resp.Body.Close()
			t.Error("a TLS 1.1 client was served")
		}
		// TLS 1.2 offers no CBC suite (SHA-1 MACs); the AEAD ones work.
		for _, tc := range []struct {
			suite uint16
			ok    bool
		}{
			{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, false},
			{tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, false},
			{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, false},
			{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, true},
			{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, true},
		} {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tc.suite}}}}
			resp, err := c.Get(s.secure + "/config/Users")
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.ok {
				t.Errorf("TLS 1.2 with only %s: %v, want served %v", tls.CipherSuiteName(tc.suite), err, tc.ok)
			}
		}
	})

	t.Run("users", func(t *testing.T) {
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"oper","Group":"operator","Password":"`+oper.password+`"}`), 201, "create operator")
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"reader","Password":"`+reader.password+`","DefaultShell":"Bash"}`), 201, "create reader")
		for _, tc := range []struct {
			method, body string
			want         int
			says         string
		}{
			{"POST", `{"Name":"Bad Name","Password":"long-enough-1"}`, 400, "POSIX user name"},
			{"POST", `{"Name":"shorty","Password":"short"}`, 400, "at least 8"},
			{"POST", `{"Name":"nopass"}`, 400, "Password"},
			{"POST", `{"Name":"reader","Password":"long-enough-1"}`, 409, "already exists"},
			{"PATCH", `{"Name":"reader","Group":"admin"}`, 400, "delete and re-create"},
			{"PATCH", `{"Name":"reader","Password":"another-one-1"}`, 400, "UserPassword"},
			{"PATCH", `{"Name":"reader","Access":"Bash"}`, 200, ""},
			{"DELETE", `{"Name":"admin"}`, 409, "last user of group admin"},
		} {
			r := s.as(admin, tc.method, "/config/User", tc.body)
			s.want(r, tc.want, tc.method+" "+tc.body)
			if !strings.Contains(r.raw, tc.says) {
				t.Errorf("%s %s: %s does not say %q", tc.method, tc.body, r.raw, tc.says)
			}
		}
		passwd, _ := os.ReadFile(filepath.Join(dir, accountsDir, "passwd"))
		if !strings.Contains(string(passwd), "\nreader:x:1002:100::/home/reader:/bin/bash\n") || !strings.Contains(string(passwd), "\noper:x:1001:") {
			t.Errorf("accounts:\n%s", passwd)
		}
		// Deleting a user removes its account.
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"shortlived","Group":"temps","Password":"long-enough-1"}`), 201, "create")
		s.want(s.as(cred{"shortlived", "long-enough-1"}, "GET", "/config/Users", ""), 200, "its login")
		s.want(s.as(admin, "DELETE", "/config/User?Name=shortlived", ""), 200, "delete")
		s.want(s.as(cred{"shortlived", "long-enough-1"}, "GET", "/config/Users", ""), 401, "login after delete")
		for _, f := range []string{"passwd", "shadow", "group", "gshadow"} {
			if b, _ := os.ReadFile(filepath.Join(dir, accountsDir, f)); strings.Contains(string(b), "shortlived") || strings.Contains(string(b), "temps") {
				t.Errorf("%s still has the deleted account:\n%s", f, b)
			}
		}
		passwords = append(passwords, "long-enough-1")
	})

	t.Run("roles", func(t *testing.T) {
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"victim","Password":"victim-pass-1"}`), 201, "create victim")
		var rev float64
		if r := s.as(admin, "GET", "/revisions?Count=1", ""); r.status == 200 {
			rev = r.body["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any)["Revision"].(float64)
		} else {
			t.Fatalf("revisions: %s", r.raw)
		}
		users := []cred{admin, oper, reader}
		for i, tc := range []struct {
			what, method, path, body string
			want                     [3]int // admin, operator, reader
		}{
			{"write", "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.%d"}`, [3]int{201, 201, 403}},
			{"read", "GET", "/config/NtpServers", ``, [3]int{200, 200, 200}},
			{"state read", "GET", "/state/Ports", ``, [3]int{200, 200, 200}},
			{"action", "POST", "/action/Rollback", fmt.Sprintf(`{"Revision":%d}`, int(rev)), [3]int{200, 200, 403}},
			{"admin action", "POST", "/action/ClearConfigLog?dry_run=true", `{}`, [3]int{200, 403, 403}},
			{"user management", "POST", "/config/User", `{"Name":"made%d","Password":"made-pass-1"}`, [3]int{201, 403, 403}},
			{"another's password", "POST", "/action/UserPassword", `{"Name":"victim","Password":"victim-pass-%d"}`, [3]int{200, 403, 403}},
			{"candidate", "POST", "/candidates", `{"Comment":"x%d"}`, [3]int{201, 201, 403}},
		} {
			for j, u := range users {
				body := tc.body
				if strings.Contains(body, "%d") {
					body = fmt.Sprintf(body, 10*i+j+1)
				}
				r := s.as(u, tc.method, tc.path, body)
				s.want(r, tc.want[j], u.name+": "+tc.what)
				if tc.want[j] == 403 && r.code() != "forbidden" {
					t.Errorf("%s %s: code %s", u.name, tc.what, r.code())
				}
			}
		}
		// A rollback that would delete users is for admins only.
		r := s.as(oper, "POST", "/action/Rollback", fmt.Sprintf(`{"Revision":%d}`, int(rev)-1))
		if r.status != 403 || !strings.Contains(r.raw, "User victim") {
			t.Errorf("operator rollback over a user: %s", r.raw)
		}
		passwords = append(passwords, "victim-pass-1", "victim-pass-1", "made-pass-1")
		// So is a candidate that changes users: an admin stages, an
		// operator may not commit it (nor anything else of another user's
		// candidate: it is not theirs, 404); the admin may.
		c := s.as(admin, "POST", "/candidates", `{"Comment":"shell change"}`)
		s.want(c, 201, "admin starts a candidate")
		var cand struct{ CandidateId string }
		json.Unmarshal([]byte(c.raw), &cand)
		s.want(s.as(admin, "PATCH", "/candidates/"+cand.CandidateId+"/config/User", `{"Name":"reader","DefaultShell":"CLI"}`), 200, "admin stages a user change")
		r = s.as(oper, "POST", "/candidates/"+cand.CandidateId+"/commit", `{}`)
		if r.status != 404 || !strings.Contains(r.raw, "of yours") {
			t.Errorf("operator commit of a user change: %d %s", r.status, r.raw)
		}
		s.want(s.as(admin, "POST", "/candidates/"+cand.CandidateId+"/commit", `{}`), 200, "admin commits it")
	})

	t.Run("password change takes effect at once", func(t *testing.T) {
		s.want(s.as(reader, "GET", "/config/Users", ""), 200, "before") // now cached
		next := cred{reader.name, "reader-pass-2"}
		s.want(s.as(admin, "POST", "/action/UserPassword", `{"Name":"reader","Password":"`+next.password+`"}`), 200, "admin sets it")
		s.want(s.as(reader, "GET", "/config/Users", ""), 401, "old password")
		s.want(s.as(next, "GET", "/config/Users", ""), 200, "new password")
		// Users change their own.
		third := cred{reader.name, "reader-pass-3"}
		s.want(s.as(next, "POST", "/action/UserPassword", `{"NAME":"reader","Password":"`+third.password+`"}`), 200, "own change")
		s.want(s.as(next, "GET", "/config/Users", ""), 401, "old password")
		s.want(s.as(third, "GET", "/config/Users", ""), 200, "new password")
		s.want(s.as(third, "POST", "/action/UserPassword", `{"Name":"reader","Password":"short"}`), 400, "too short")
		s.want(s.as(admin, "POST", "/action/UserPassword", `{"Name":"nobody","Password":"nobody-pass-1"}`), 404, "no such user")
		reader = third
		passwords = append(passwords, next.password, third.password)
	})

	t.Run("throttling and its reset", func(t *testing.T) {
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"tuser","Password":"tuser-pass-1"}`), 201, "create")
		good := cred{"tuser", "tuser-pass-1"}
		// Each guess a new password: a repeated one counts once.
		bad := func(i int) cred { return cred{"tuser", fmt.Sprintf("tuser-wrong-%d", i)} }
		for round := range 2 {
			for i := range 4 {
				s.want(s.as(bad(i), "GET", "/config/Users", ""), 401, fmt.Sprintf("round %d, failure %d", round, i+1))
			}
			s.want(s.as(good, "GET", "/config/Users", ""), 200, "a success resets the count")
		}
		for i := range 5 {
			s.want(s.as(bad(i), "GET", "/config/Users", ""), 401, fmt.Sprintf("failure %d", i+1))
		}
		for _, secure := range []bool{true, false} {
			r := s.req(secure, "GET", "/config/Users", good.name, good.password, "")
			// A refused login is held 1 s (RefusalDelay) before its answer,
			// so the second one is told of a second less.
			if ra := r.header.Get("Retry-After"); r.status != 429 || (ra != "60" && ra != "59" && ra != "58") || r.code() != "too_many_attempts" {
				t.Errorf("locked out (secure %v): %d %q %s", secure, r.status, r.header.Get("Retry-After"), r.raw)
			}
		}
		s.want(s.as(reader, "GET", "/config/Users", ""), 200, "another user from the same address")
		if !strings.Contains(s.logs.String(), `msg="login failed" user=tuser`) {
			t.Error("failed logins are not logged")
		}
		passwords = append(passwords, good.password, bad(0).password, bad(4).password)
	})

	t.Run("the config log and revisions name the user", func(t *testing.T) {
		r := s.as(admin, "GET", "/state/ConfigLogs", "")
		var byOper, refused, passwordsLogged int
		for _, o := range r.body["Objects"].([]any) {
			e := o.(map[string]any)["Object"].(map[string]any)
			switch {
			case e["UserName"] == "oper" && e["API"] == "ntpserver" && e["Result"] == "Success":
				byOper++
			case e["UserName"] == "reader" && e["API"] == "ntpserver" && strings.Contains(e["Result"].(string), "may not"):
				refused++
			case e["API"] == "userpassword":
				passwordsLogged++
				if !strings.Contains(e["Data"].(string), `"Password":"******"`) {
					t.Errorf("UserPassword entry: %v", e)
				}
			}
			if !strings.HasPrefix(e["UserAddr"].(string), "127.0.0.1:") {
				t.Errorf("UserAddr %v", e["UserAddr"])
			}
		}
		if byOper != 1 || refused != 1 || passwordsLogged < 7 {
			t.Errorf("config log: %d by oper, %d refused, %d password changes:\n%s", byOper, refused, passwordsLogged, r.raw)
		}
		r = s.as(admin, "GET", "/revisions", "")
		found := false
		for _, rv := range r.body["Objects"].([]any) {
			m := rv.(map[string]any)["Object"].(map[string]any)
			if m["User"] == "oper" && strings.Contains(fmt.Sprint(m["Changes"]), "NtpServer") {
				found = true
			}
		}
		if !found {
			t.Errorf("no revision by oper: %s", r.raw)
		}
	})

	t.Run("no password or hash outside the shadow file", func(t *testing.T) {
		shadow, err := os.ReadFile(filepath.Join(dir, accountsDir, "shadow"))
		if err != nil {
			t.Fatal(err)
		}
		secrets := append([]string(nil), passwords...)
		for _, l := range strings.Split(strings.TrimSpace(string(shadow)), "\n") {
			if h := strings.Split(l, ":")[1]; strings.HasPrefix(h, "$") {
				secrets = append(secrets, h, strings.Split(h, "$")[len(strings.Split(h, "$"))-1]) // the hash, and its digest alone
			}
		}
		if len(secrets) < 20 {
			t.Fatalf("only %d secrets to look for", len(secrets))
		}
		check := func(where, text string) {
			for _, sec := range secrets {
				if strings.Contains(text, sec) {
					t.Errorf("%s holds the secret %q", where, sec)
				}
			}
		}
		for _, path := range []string{"/config/Users", "/state/Users", "/state/ConfigLogs", "/revisions?Count=1024", "/config/User?Name=reader"} {
			r := s.as(admin, "GET", path, "")
			check("GET "+path, r.raw)
			if path == "/config/Users" && (strings.Count(r.raw, `"Password":""`) != int(r.body["ObjCount"].(float64)) || r.body["ObjCount"].(float64) < 5) {
				t.Errorf("passwords are not read as \"\": %s", r.raw)
			}
		}
		s.stop() // flush everything to disk
		check("the log", s.logs.String())
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || p == filepath.Join(dir, accountsDir, "shadow") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			check(p, string(b))
			return nil
		})
	})
}

func TestFirstAdmin(t *testing.T) {
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv(adminPasswordEnv, "env-admin-pass")
		dir := t.TempDir()
		s := startSwmgr(t, &serveOptions{dataDir: dir, https: "-"})
		if v, ok := os.LookupEnv(adminPasswordEnv); ok {
			t.Errorf("the password is still in the environment: %q", v)
		}
		s.want(s.req(false, "GET", "/config/Users", "admin", "env-admin-pass", ""), 200, "login")
		if _, err := os.Stat(filepath.Join(dir, initialPasswordFile)); !os.IsNotExist(err) {
			t.Errorf("a password file was written: %v", err)
		}
	})
	t.Run("generated once", func(t *testing.T) {
		dir := t.TempDir()
		s := startSwmgr(t, &serveOptions{dataDir: dir, https: "-"})
		path := filepath.Join(dir, initialPasswordFile)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", path, fi, err)
		}
		b, _ := os.ReadFile(path)
		pw := strings.TrimSpace(string(b))
		if len(pw) < 20 {
			t.Errorf("weak generated password %q", pw)
		}
		s.want(s.req(false, "GET", "/config/Users", "admin", pw, ""), 200, "login")
		r := s.req(false, "GET", "/config/User?Name=admin", "", "", "")
		if r.status != 200 || r.body["Object"].(map[string]any)["Group"] != "admin" {
			t.Errorf("the admin User: %s", r.raw)
		}
		if strings.Contains(s.logs.String(), pw) {
			t.Error("the generated password was logged")
		}
		s.stop()
		// A restart keeps the admin and the file.
		s = startSwmgr(t, &serveOptions{dataDir: dir, https: "-"})
		s.want(s.req(false, "GET", "/config/Users", "admin", pw, ""), 200, "login after restart")
		if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
			t.Error("the password file changed")
		}
		if n := s.req(false, "GET", "/config/Users", "", "", "").body["ObjCount"]; n != 1.0 {
			t.Errorf("%v users", n)
		}
	})
	t.Run("again after the store is removed", func(t *testing.T) {
		dir := t.TempDir()
		s := startSwmgr(t, &serveOptions{dataDir: dir, https: "-", adminPasswordFile: writeFile(t, "first-admin-pass")})
		s.stop()
		if err := os.Remove(filepath.Join(dir, "swmgr.db")); err != nil {
			t.Fatal(err)
		}
		// A data directory in use that lost its database is not silently
		// made a new switch: the start is refused.
		o := &serveOptions{dataDir: dir, http: "127.0.0.1:0", adminPasswordFile: writeFile(t, "second-admin-pass"), backend: "sim", ports: 4, logFormat: "text", logLevel: "info", logOut: io.Discard}
		if err := serve(context.Background(), o); err == nil || !strings.Contains(err.Error(), "swmgr.db is missing") {
			t.Fatalf("serve: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "swmgr.db")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused start made a database: %v", err)
		}
	})
	t.Run("a short password is refused", func(t *testing.T) {
		o := &serveOptions{dataDir: t.TempDir(), http: "127.0.0.1:0", adminPasswordFile: writeFile(t, "short\n"), backend: "sim", ports: 4, logFormat: "text", logLevel: "info", logOut: io.Discard}
		err := serve(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "at least 8 characters") || strings.Contains(err.Error(), "short\n") {
			t.Errorf("serve: %v", err)
		}
	})
}

// Plain HTTP on an address that is not loopback requires credentials.
func TestPlainHTTPOffLoopback(t *testing.T) {
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), http: "0.0.0.0:0", https: "-", adminPasswordFile: writeFile(t, "first-admin-pass")})
	s.want(s.req(false, "GET", "/config/Users", "", "", ""), 401, "no credentials")
	s.want(s.req(false, "GET", "/config/Users", "admin", "first-admin-pass", ""), 200, "credentials")
}

func TestServeFlags(t *testing.T) {
	for _, tc := range []struct {
		o    serveOptions
		says string
	}{
		{serveOptions{http: "", https: ""}, "no listener"},
		{serveOptions{http: "127.0.0.1:0", tlsCert: "c.pem"}, "go together"},
		{serveOptions{http: "127.0.0.1:0", backend: "linux", ports: 4, portMap: "/nonexistent/ports.conf"}, "--port-map: open /nonexistent/ports.conf"},
		{serveOptions{http: "127.0.0.1:0", backend: "sim", ports: 4, netns: "x"}, "are for --backend linux"},
		{serveOptions{http: "127.0.0.1:0", backend: "asic", ports: 4}, "use sim or linux"},
	} {
		tc.o.dataDir, tc.o.logFormat, tc.o.logLevel, tc.o.logOut = t.TempDir(), "text", "info", io.Discard
		if tc.o.backend == "" {
			tc.o.backend, tc.o.ports = "sim", 4
		}
		if err := serve(context.Background(), &tc.o); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v", tc.o, err)
		}
	}
}
