package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/peercred"
)

// declaredAccess stands in for api.Server.Access, which these tests cannot
// import (api imports auth): what the declarations of the kind or action a
// /public/v1/<class>/<Name> path names need. The path grammar and its
// table of cases are tested in package api (TestAccess).
func declaredAccess(r *http.Request) (Need, *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return NeedRead, r
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/public/v1/"), "/")
	classes := map[string]model.Class{"config": model.Config, "action": model.Action}
	c, ok := classes[segs[0]]
	if !ok || len(segs) != 2 {
		return NeedAdmin, r
	}
	k, _ := builtin().Resolve(c, segs[1])
	if k == nil {
		return NeedAdmin, r
	}
	return NeedOf(k.AccessFor(r.Method)), r
}

var builtin = sync.OnceValue(model.Builtin)

func TestNeedOf(t *testing.T) {
	for _, tc := range []struct {
		a    model.Access
		want Need
	}{
		{model.Reading, NeedRead},
		{model.Access{Role: model.RoleOperator}, NeedOperator},
		{model.Access{Role: model.RoleAdmin}, NeedAdmin},
		{model.Access{Role: model.RoleAdmin, Self: "Name"}, NeedSelf},
		{model.Access{Role: model.RoleReader, Self: "Name"}, NeedRead},
	} {
		if got := NeedOf(tc.a); got != tc.want {
			t.Errorf("NeedOf(%+v) = %v, want %v", tc.a, got, tc.want)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		group              string
		read, self, op, ad bool
	}{
		{"admin", true, true, true, true},
		{"operator", true, true, true, false},
		{"users", true, true, false, false},
		{"Admin", true, true, false, false},
	} {
		r := RoleOf(tc.group)
		got := [4]bool{r.May(NeedRead), r.May(NeedSelf), r.May(NeedOperator), r.May(NeedAdmin)}
		if got != [4]bool{tc.read, tc.self, tc.op, tc.ad} {
			t.Errorf("%s (%v): %v", tc.group, r, got)
		}
	}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)} }
func ip(s string) netip.Addr         { return netip.MustParseAddr(s) }
func fail(t *Throttle, n int) (d time.Duration) {
	for range n {
		d = t.Failed("bob", ip("192.0.2.1"))
	}
	return d
}

func TestThrottle(t *testing.T) {
	c := newClock()
	th := NewThrottle(ThrottleOptions{Now: c.now})
	a := ip("192.0.2.1")

	// Four failures: not locked. The fifth locks for a minute.
	if d := fail(th, 4); d != 0 || th.Wait("bob", a) != 0 {
		t.Fatalf("locked after 4: %v", d)
	}
	if d := fail(th, 1); d != time.Minute || th.Wait("bob", a) != time.Minute {
		t.Fatalf("fifth failure: lock %v, wait %v", d, th.Wait("bob", a))
	}
	// Other names and other addresses are not affected.
	if th.Wait("alice", a) != 0 || th.Wait("bob", ip("192.0.2.2")) != 0 {
		t.Error("the lock spread")
	}
	// Each failure after a lockout doubles it, up to 15 minutes.
	for _, want := range []time.Duration{2, 4, 8, 15, 15} {
		c.add(th.Wait("bob", a))
		if th.Wait("bob", a) != 0 {
			t.Fatal("still locked after the wait")
		}
		if d := fail(th, 1); d != want*time.Minute {
			t.Fatalf("lockout %v, want %v min", d, want)
		}
	}
	// A success resets everything.
	c.add(th.Wait("bob", a))
	th.Succeeded("bob", a)
	if d := fail(th, 4); d != 0 {
		t.Fatalf("after a success, 4 failures lock for %v", d)
	}
	// Failures older than the window do not count.
	c.add(5 * time.Minute)
	if d := fail(th, 4); d != 0 {
		t.Fatalf("old failures counted: %v", d)
	}
	// A quiet window after a lockout forgives it.
	fail(th, 1)
	c.add(th.Wait("bob", a) + 5*time.Minute)
	if d := fail(th, 1); d != 0 {
		t.Fatalf("not forgiven: %v", d)
	}
}

func TestThrottleBounded(t *testing.T) {
	c := newClock()
	th := NewThrottle(ThrottleOptions{Now: c.now, MaxEntries: 100})
	for i := range 1000 {
		th.Failed(strings.Repeat("x", i%50+1)+string(rune('a'+i%26)), ip("192.0.2.1"))
	}
	if n := len(th.m); n > 100 {
		t.Errorf("%d entries", n)
	}
}

func TestVerifierCache(t *testing.T) {
	c := newClock()
	var calls atomic.Int32
	passwords := map[string]string{"alice": "password-a", "bob": "password-b"}
	check := func(ctx context.Context, name, password string) (string, bool, error) {
		calls.Add(1)
		if p, ok := passwords[name]; ok && p == password {
			return "users", true, nil
		}
		return "", false, nil
	}
	v := NewVerifier(check, VerifierOptions{Now: c.now, TTL: 30 * time.Second})
	ctx := context.Background()
	verify := func(name, password string, want bool, wantCalls int32) {
		t.Helper()
		calls.Store(0)
		id, ok, err := v.Verify(ctx, name, password)
		if ok != want || err != nil || calls.Load() != wantCalls || ok && (id.Name != name || id.Role != Reader) {
			t.Errorf("Verify(%s, %s) = %+v %v %v with %d checks; want %v with %d", name, password, id, ok, err, calls.Load(), want, wantCalls)
		}
	}
	verify("alice", "password-a", true, 1)
	verify("alice", "password-a", true, 0) // cached
	verify("alice", "password-b", false, 1)
	verify("bob", "password-a", false, 1) // another user, same password: not a hit
	verify("bob", "password-b", true, 1)
	// The cache holds neither passwords nor names as keys.
	for k, e := range v.cache {
		if bytes.Contains(k[:], []byte("password")) || strings.Contains(e.name+e.group, "password") {
			t.Error("a password in the cache")
		}
	}
	// Forget drops a user at once, and only that user.
	passwords["alice"] = "password-new"
	v.Forget("alice")
	verify("alice", "password-a", false, 1)
	verify("alice", "password-new", true, 1)
	verify("bob", "password-b", true, 0)
	// Entries expire.
	c.add(31 * time.Second)
	verify("bob", "password-b", true, 1)
	// Failures are not cached.
	verify("bob", "nope-nope", false, 1)
	verify("bob", "nope-nope", false, 1)
}

// A check that was under way when Forget ran is not cached: the old
// password cannot outlive the change.
func TestVerifierForgetRace(t *testing.T) {
	var v *Verifier
	v = NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		v.Forget(name) // the password changes while the old one is checked
		return "users", true, nil
	}, VerifierOptions{})
	v.Verify(context.Background(), "alice", "old-password")
	if v.CacheLen() != 0 {
		t.Error("a credential checked before a Forget was cached")
	}
}

type testServer struct {
	t     *testing.T
	h     http.Handler
	next  http.Handler
	opts  Options
	logs  *bytes.Buffer
	seen  *Identity
	peers *Peers
}

// testPeer is the local user every connection of a test server comes from.
type testPeer struct{ uid uint32 }

func newTestServer(t *testing.T, peer *testPeer, c *clock) *testServer {
	users := map[string][2]string{"root1": {"admin", "admin-pass"}, "op": {"operator", "op-pass-1"}, "rd": {"users", "rd-pass-1"}}
	check := func(ctx context.Context, name, password string) (string, bool, error) {
		if u, ok := users[name]; ok && u[1] == password {
			return u[0], true, nil
		}
		return "", false, nil
	}
	s := &testServer{t: t, logs: &bytes.Buffer{}, seen: &Identity{}}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := FromContext(r.Context())
		*s.seen = id
		w.WriteHeader(299)
	})
	opts := Options{
		Verifier: NewVerifier(check, VerifierOptions{Now: c.now}),
		Throttle: NewThrottle(ThrottleOptions{Now: c.now}),
		Log:      slog.New(slog.NewTextHandler(s.logs, nil)),
		Access:   declaredAccess,
	}
	if peer != nil {
		self := uint32(4242)
		opts.Peers = NewPeers(PeerOptions{
			Self: &self,
			Cred: func(net.Conn) (peercred.Cred, error) { return peercred.Cred{UID: peer.uid}, nil },
			UserName: func(uid uint32) (string, error) {
				return map[uint32]string{0: "root", 4242: "swmgr", 1001: "op", 1002: "rd", 1003: "alice"}[uid], nil
			},
			UserGroup: func(ctx context.Context, name string) (string, bool, error) {
				u, ok := users[name]
				return u[0], ok, nil
			},
		})
		s.peers = opts.Peers
	}
	s.h = Handler(next, opts)
	s.next, s.opts = next, opts
	return s
}

func (s *testServer) do(method, path, user, password string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "192.0.2.7:5555"
	if user != "" {
		r.SetBasicAuth(user, password)
	}
	r.Host = "127.0.0.1:8080"
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			r.Host = hdr[i+1]
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	if s.peers != nil {
		r = r.WithContext(s.peers.ConnContext(r.Context(), nil))
	}
	w := httptest.NewRecorder()
	*s.seen = Identity{}
	s.h.ServeHTTP(w, r)
	return w
}

func errCode(t *testing.T, w *httptest.ResponseRecorder) string {
	var b struct{ Error struct{ Code string } }
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	return b.Error.Code
}

func TestHandler(t *testing.T) {
	c := newClock()
	s := newTestServer(t, nil, c)
	for _, tc := range []struct {
		name, method, path, user, password string
		want                               int
		code                               string
	}{
		{"no credentials", "GET", "/public/v1/config/Ports", "", "", 401, "unauthorized"},
		{"wrong password", "GET", "/public/v1/config/Ports", "rd", "nope-nope", 401, "unauthorized"},
		{"unknown user", "GET", "/public/v1/config/Ports", "who", "rd-pass-1", 401, "unauthorized"},
		{"reader reads", "GET", "/public/v1/config/Ports", "rd", "rd-pass-1", 299, ""},
		{"reader writes", "POST", "/public/v1/config/NtpServer", "rd", "rd-pass-1", 403, "forbidden"},
		{"reader's password", "POST", "/public/v1/action/UserPassword", "rd", "rd-pass-1", 299, ""},
		{"operator writes", "POST", "/public/v1/config/NtpServer", "op", "op-pass-1", 299, ""},
		{"operator makes a user", "POST", "/public/v1/config/User", "op", "op-pass-1", 403, "forbidden"},
		{"operator clears the log", "POST", "/public/v1/action/ClearConfigLog", "op", "op-pass-1", 403, "forbidden"},
		{"admin makes a user", "POST", "/public/v1/config/User", "root1", "admin-pass", 299, ""},
		{"preflight", "OPTIONS", "/public/v1/config/User", "", "", 299, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := s.do(tc.method, tc.path, tc.user, tc.password)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if tc.code != "" && errCode(t, w) != tc.code {
				t.Errorf("code %s, want %s", errCode(t, w), tc.code)
			}
			if got := w.Header().Get("WWW-Authenticate"); (tc.want == 401) != (got == `Basic realm="swmgr"`) {
				t.Errorf("WWW-Authenticate %q", got)
			}
			if tc.want == 299 && tc.method != "OPTIONS" && (s.seen.Name != tc.user || s.seen.Role != RoleOf(map[string]string{"rd": "users", "op": "operator", "root1": "admin"}[tc.user])) {
				t.Errorf("identity %+v", *s.seen)
			}
		})
	}
	// A Bearer token is not Basic credentials.
	if w := s.do("GET", "/public/v1/config/Ports", "", "", "Authorization", "Bearer abc"); w.Code != 401 {
		t.Errorf("bearer: %d", w.Code)
	}
	if strings.Contains(s.logs.String(), "nope-nope") || strings.Contains(s.logs.String(), "rd-pass-1") {
		t.Errorf("a password was logged:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), "login failed") || !strings.Contains(s.logs.String(), "user=rd") {
		t.Errorf("failed logins are not logged:\n%s", s.logs)
	}
}

func TestHandlerLocalPeers(t *testing.T) {
	root, other := Identity{Name: "root", Role: Admin, Local: true}, Identity{Name: "alice", Role: Reader, Local: true}
	for _, tc := range []struct {
		what        string
		uid         uint32
		read, write int // GET config, POST NtpServer
		user        int // POST User
		want        Identity
	}{
		{"root", 0, 299, 299, 299, root},
		{"the uid swmgr runs as", 4242, 299, 299, 299, Identity{Name: "swmgr", Role: Admin, Local: true}},
		{"an operator User", 1001, 299, 299, 403, Identity{Name: "op", Group: "operator", Role: Operator, Local: true}},
		{"a reader User", 1002, 299, 403, 403, Identity{Name: "rd", Group: "users", Role: Reader, Local: true}},
		{"not a User", 1003, 299, 403, 403, other},
	} {
		t.Run(tc.what, func(t *testing.T) {
			s := newTestServer(t, &testPeer{tc.uid}, newClock())
			for _, c := range []struct {
				method, path string
				want         int
			}{{"GET", "/public/v1/config/Ports", tc.read}, {"POST", "/public/v1/config/NtpServer", tc.write}, {"POST", "/public/v1/config/User", tc.user}} {
				w := s.do(c.method, c.path, "", "")
				if w.Code != c.want {
					t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, w.Code, c.want, w.Body)
				}
				if w.Code == 299 && *s.seen != tc.want {
					t.Errorf("%s %s: identity %+v, want %+v", c.method, c.path, *s.seen, tc.want)
				}
				if w.Code == 403 && !strings.Contains(w.Body.String(), "local user "+tc.want.Name) {
					t.Errorf("the 403 does not name the local user: %s", w.Body)
				}
			}
			// Credentials, when sent, are checked and used.
			if w := s.do("POST", "/public/v1/config/User", "rd", "wrong-wrong"); w.Code != 401 {
				t.Errorf("bad credentials: %d", w.Code)
			}
			if w := s.do("POST", "/public/v1/config/User", "rd", "rd-pass-1"); w.Code != 403 {
				t.Errorf("reader's credentials: %d", w.Code)
			}
			if w := s.do("GET", "/public/v1/config/Users", "rd", "rd-pass-1"); w.Code != 299 || *s.seen != (Identity{Name: "rd", Group: "users", Role: Reader}) {
				t.Errorf("reader's read: %d %+v", w.Code, *s.seen)
			}
			// A Bearer token is not Basic credentials, and not nothing.
			if w := s.do("GET", "/public/v1/config/Ports", "", "", "Authorization", "Bearer abc"); w.Code != 401 {
				t.Errorf("bearer: %d", w.Code)
			}
		})
	}
}

// A request without credentials over loopback TCP must name this host:
// a page that reached the port through a DNS name it controls (DNS
// rebinding) is refused, reads too; over the Unix socket any Host goes.
func TestLocalPeersHostMustNameThisHost(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	short, _, _ := strings.Cut(hostname, ".")
	s := newTestServer(t, &testPeer{0}, newClock())
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", 299},
		{"127.0.0.1", 299},
		{"[::1]:8080", 299},
		{"192.0.2.1:8080", 299},
		{"localhost:8080", 299},
		{"LOCALHOST.:9000", 299},
		{"sw.localhost", 299},
		{short + ":8080", 299},
		{strings.ToUpper(short), 299},
		{"", 299},
		{"evil.example:8080", 403},
		{"rebind.evil.example", 403},
		{"localhost.evil.example:8080", 403},
		{hostname + ".evil.example", 403},
		{"127.0.0.1.nip.io:8080", 403},
	} {
		for _, method := range []string{"GET", "POST"} {
			w := s.do(method, "/public/v1/config/NtpServers", "", "", "Host", tc.host)
			if w.Code != tc.want {
				t.Errorf("%s with Host %q: %d, want %d: %s", method, tc.host, w.Code, tc.want, w.Body)
			}
			if w.Code == 403 && (errCode(t, w) != "forbidden" || !strings.Contains(w.Body.String(), "DNS rebinding")) {
				t.Errorf("Host %q: %s", tc.host, w.Body)
			}
		}
	}
	// An operator sets the switch's host name (the Linux backend gives it
	// to the host) to a name in a zone the operator controls: that name
	// does not become one the loopback port answers without credentials;
	// its first label does.
	dotted := *s
	dotted.opts.Hostname = func() (string, error) { return "Rebind.Evil.Example", nil }
	dotted.h = Handler(s.next, dotted.opts)
	for host, want := range map[string]int{"rebind.evil.example:8080": 403, "Rebind.Evil.Example.": 403, "rebind:8080": 299, "evil": 403} {
		if w := dotted.do("POST", "/public/v1/config/NtpServer", "", "", "Host", host); w.Code != want {
			t.Errorf("host name Rebind.Evil.Example, Host %q: %d, want %d", host, w.Code, want)
		}
	}
	// Credentials are checked as anywhere else, whatever the Host.
	if w := s.do("GET", "/public/v1/config/Ports", "rd", "rd-pass-1", "Host", "evil.example"); w.Code != 299 {
		t.Errorf("credentials with a foreign Host: %d %s", w.Code, w.Body)
	}
	// Over the Unix socket, any Host (curl --unix-socket http://swmgr/...).
	r := httptest.NewRequest("POST", "/public/v1/config/NtpServer", nil)
	r.Host = "swmgr"
	ctx := context.WithValue(s.peers.ConnContext(r.Context(), nil), http.LocalAddrContextKey, &net.UnixAddr{Name: "/run/swmgr/swmgr.sock", Net: "unix"})
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r.WithContext(ctx))
	if w.Code != 299 {
		t.Errorf("Unix socket with Host swmgr: %d %s", w.Code, w.Body)
	}
	// What the socket accepted is not remembered for TCP: the same Host
	// over loopback TCP, right after, is still a foreign name.
	if w := s.do("GET", "/public/v1/config/NtpServers", "", "", "Host", "swmgr"); w.Code != 403 {
		t.Errorf("TCP with Host swmgr after the socket accepted it: %d %s", w.Code, w.Body)
	}
}

func TestPeersRefuseOthersAndForget(t *testing.T) {
	group := map[string]string{}
	var lookups, creds int
	p := NewPeers(PeerOptions{
		RefuseOthers: true,
		Cred:         func(net.Conn) (peercred.Cred, error) { creds++; return peercred.Cred{UID: 1003}, nil },
		UserName:     func(uint32) (string, error) { return "alice", nil },
		UserGroup: func(_ context.Context, name string) (string, bool, error) {
			lookups++
			g, ok := group[name]
			return g, ok, nil
		},
	})
	ctx := p.ConnContext(context.Background(), nil)
	if _, err := p.identity(ctx); err == nil || !strings.Contains(err.Error(), "local user alice is not a swmgr User") {
		t.Fatalf("refused: %v", err)
	}
	p.identity(ctx)
	if creds != 1 || lookups != 1 {
		t.Errorf("two requests on one connection: %d kernel lookups, %d role lookups; want 1, 1", creds, lookups)
	}
	group["alice"] = "operator"
	p.Forget("alice") // alice was made a User
	if id, err := p.identity(ctx); err != nil || id.Role != Operator {
		t.Errorf("after Forget: %+v %v", id, err)
	}
	if creds != 1 || lookups != 2 {
		t.Errorf("after Forget: %d kernel lookups, %d role lookups; want 1, 2", creds, lookups)
	}
	// Another connection looks the kernel up again.
	p.identity(p.ConnContext(context.Background(), nil))
	if creds != 2 {
		t.Errorf("a second connection: %d kernel lookups", creds)
	}
	// A peer the kernel cannot name is refused.
	bad := NewPeers(PeerOptions{Cred: func(net.Conn) (peercred.Cred, error) { return peercred.Cred{}, peercred.ErrNotFound }})
	badCtx := bad.ConnContext(context.Background(), nil)
	if _, err := bad.identity(badCtx); !errors.Is(err, errPeerUnknown) {
		t.Errorf("unknown peer: %v", err)
	}
	notLive := NewPeers(PeerOptions{Cred: func(net.Conn) (peercred.Cred, error) { return peercred.Cred{}, peercred.ErrNotLive }})
	if _, err := notLive.identity(notLive.ConnContext(context.Background(), nil)); !errors.Is(err, errPeerUnknown) || !errors.Is(err, peercred.ErrNotLive) {
		t.Errorf("a peer whose socket is not live: %v", err)
	}
	// Its connection's identity, if asked for anyway, may do nothing.
	if id := FromContext(badCtx); id.Role.May(NeedRead) || id.Name != "" {
		t.Errorf("the identity of an unidentified peer: %+v", id)
	}
	// And a request on a listener that tracks no connections.
	if _, err := p.identity(context.Background()); !errors.Is(err, errPeerUnknown) {
		t.Errorf("no slot: %v", err)
	}
}

func TestHandlerCrossOrigin(t *testing.T) {
	s := newTestServer(t, &testPeer{0}, newClock())
	for _, tc := range []struct {
		what, method string
		user         string
		hdr          []string
		want         int
	}{
		{"foreign Origin", "POST", "", []string{"Origin", "https://evil.example"}, 403},
		{"foreign Origin, text/plain", "POST", "", []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}, 403},
		{"cross-site", "PATCH", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site is another origin", "DELETE", "", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"cross-site with credentials", "POST", "root1", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"foreign Origin with credentials", "POST", "root1", []string{"Origin", "http://127.0.0.1:9"}, 403},
		{"same origin", "POST", "", []string{"Origin", "http://127.0.0.1:8080"}, 299}, // the test server's Host
		{"same-origin", "POST", "", []string{"Sec-Fetch-Site", "same-origin"}, 299},
		{"typed by the user", "POST", "", []string{"Sec-Fetch-Site", "none"}, 299},
		{"no browser", "POST", "", nil, 299},
		{"the SDK's misspelt Content-Type", "PATCH", "root1", []string{"Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"}, 299},
		{"cross-site read", "GET", "", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, 299},
		{"preflight", "OPTIONS", "", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, 299},
	} {
		pw := ""
		if tc.user != "" {
			pw = "admin-pass"
		}
		w := s.do(tc.method, "/public/v1/config/NtpServer", tc.user, pw, tc.hdr...)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.what, w.Code, tc.want, w.Body)
		}
		if tc.want == 403 && (errCode(t, w) != "forbidden" || !strings.Contains(w.Body.String(), "cross-origin")) {
			t.Errorf("%s: %s", tc.what, w.Body)
		}
	}
}

func TestHandlerThrottles(t *testing.T) {
	c := newClock()
	s := newTestServer(t, nil, c)
	for i := range 5 {
		if w := s.do("GET", "/", "rd", fmt.Sprintf("wrong-%d", i)); w.Code != 401 {
			t.Fatalf("failure %d: %d", i, w.Code)
		}
	}
	w := s.do("GET", "/", "rd", "rd-pass-1") // right, but locked out
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" || errCode(t, w) != "too_many_attempts" {
		t.Fatalf("locked: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	c.add(61 * time.Second)
	if w := s.do("GET", "/", "rd", "rd-pass-1"); w.Code != 299 {
		t.Fatalf("after the lockout: %d", w.Code)
	}
	// The success reset the count: four more failures do not lock.
	for i := range 4 {
		s.do("GET", "/", "rd", fmt.Sprintf("wrong-%d", i))
	}
	if w := s.do("GET", "/", "rd", "rd-pass-1"); w.Code != 299 {
		t.Fatalf("after a reset and 4 failures: %d", w.Code)
	}
}

func TestLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true}, {"127.1.2.3:80", true}, {"[::1]:8080", true}, {"localhost:8080", true},
		{":8080", false}, {"0.0.0.0:8080", false}, {"[::]:8080", false}, {"192.0.2.1:8080", false}, {"switch:8080", false},
	} {
		if got := Loopback(tc.addr); got != tc.want {
			t.Errorf("Loopback(%s) = %v", tc.addr, got)
		}
	}
}

// Concurrent requests with the same credentials share one check.
func TestVerifierChecksOnceForConcurrentRequests(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	v := NewVerifier(func(ctx context.Context, name, password string) (string, bool, error) {
		calls.Add(1)
		<-release
		return "users", password == "right-password", nil
	}, VerifierOptions{})
	var wg sync.WaitGroup
	var okCount atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok, _ := v.Verify(context.Background(), "alice", "right-password"); ok {
				okCount.Add(1)
			}
		}()
	}
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the others queue behind the first
	close(release)
	wg.Wait()
	if calls.Load() != 1 || okCount.Load() != 20 {
		t.Errorf("%d checks, %d accepted", calls.Load(), okCount.Load())
	}
}
