package auth

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// webEnv is Handler with web sessions over real account files, told of
// every account change as swmgr serve wires them.
type webEnv struct {
	*sessionEnv
	web  *WebSessions
	h    http.Handler
	seen *Identity
	via  *bool
}

func newWebEnv(t *testing.T, ttl time.Duration) *webEnv {
	e := &webEnv{sessionEnv: newSessionEnv(t, time.Hour), seen: &Identity{}, via: new(bool)}
	e.create(t, "alice", "operator", "alice-pass-1")
	e.create(t, "rd", "users", "rd-pass-1")
	e.web = NewWebSessions(WebOptions{Verifier: e.verifier, Throttle: NewThrottle(ThrottleOptions{}), Sessions: e.sessions, TTL: ttl})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*e.seen, *e.via = FromContext(r.Context()), ViaWeb(r.Context())
		w.WriteHeader(299)
	})
	e.h = Handler(next, Options{Verifier: e.verifier, Throttle: NewThrottle(ThrottleOptions{}), Access: declaredAccess, Web: e.web})
	return e
}

// login logs name in over TLS or not and returns the cookie and token.
func (e *webEnv) login(t *testing.T, name, password string, tlsOn bool) (*http.Cookie, string) {
	t.Helper()
	r := httptest.NewRequest("POST", "/ui/login", nil)
	if tlsOn {
		r.TLS = &tls.ConnectionState{}
	}
	w := httptest.NewRecorder()
	got, refused := e.web.Login(w, r, name, password)
	if refused != nil {
		t.Fatalf("login %s: %v", name, refused.Err)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies", len(cookies))
	}
	return cookies[0], got.CSRF
}

func (e *webEnv) do(method string, c *http.Cookie, hdr ...string) *httptest.ResponseRecorder {
	path := "/public/v1/config/Ports"
	if method == "POST" {
		path = "/public/v1/config/NtpServer"
	}
	r := httptest.NewRequest(method, path, nil)
	r.Host = "switch.example:443"
	if c != nil {
		r.AddCookie(c)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	*e.seen, *e.via = Identity{}, false
	e.h.ServeHTTP(w, r)
	return w
}

// TestWebSessionCookie: a login sets a cookie that is HttpOnly,
// SameSite=Strict, expiring, and Secure on HTTPS only; the cookie is the
// user's credential, with its role; a request that may change something
// needs the session's CSRF token, and a cross-site one is refused even with
// it; a 401 to the page carries no Basic challenge.
func TestWebSessionCookie(t *testing.T) {
	e := newWebEnv(t, time.Hour)
	for _, tlsOn := range []bool{false, true} {
		c, _ := e.login(t, "alice", "alice-pass-1", tlsOn)
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure != tlsOn || c.MaxAge != 3600 || c.Path != "/" {
			t.Errorf("TLS %v: cookie %+v", tlsOn, c)
		}
	}
	if _, refused := e.web.Login(httptest.NewRecorder(), httptest.NewRequest("POST", "/ui/login", nil), "alice", "wrong-pass"); refused == nil || refused.Err.Status != 401 {
		t.Fatalf("wrong password: %v", refused)
	}
	c, csrf := e.login(t, "alice", "alice-pass-1", true)
	for _, tc := range []struct {
		name   string
		method string
		cookie *http.Cookie
		hdr    []string
		want   int
	}{
		{"read", "GET", c, nil, 299},
		{"write without token", "POST", c, nil, 403},
		{"write with a wrong token", "POST", c, []string{CSRFHeader, csrf + "x"}, 403},
		{"write with the token", "POST", c, []string{CSRFHeader, csrf}, 299},
		{"cross-site write with the token", "POST", c, []string{CSRFHeader, csrf, "Sec-Fetch-Site", "cross-site"}, 403},
		{"unknown cookie", "GET", &http.Cookie{Name: SessionCookie, Value: "forged"}, nil, 401},
		{"page without cookie", "GET", nil, []string{CSRFHeader, csrf}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.do(tc.method, tc.cookie, tc.hdr...)
			if w.Code != tc.want {
				t.Fatalf("%d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if w.Code == 299 && (e.seen.Name != "alice" || e.seen.Role != Operator || !*e.via) {
				t.Errorf("identity %+v, via web %v", *e.seen, *e.via)
			}
			if ch := w.Header().Get("WWW-Authenticate"); ch != "" {
				t.Errorf("a 401 to the page carries a challenge %q", ch)
			}
		})
	}
	// A reader's session is refused a write with its token, by its role.
	rc, rcsrf := e.login(t, "rd", "rd-pass-1", true)
	if w := e.do("POST", rc, CSRFHeader, rcsrf); w.Code != 403 || !strings.Contains(w.Body.String(), "may not POST") {
		t.Errorf("reader's write: %d %s", w.Code, w.Body)
	}
	// Logout needs the token, then the cookie is nothing.
	r := httptest.NewRequest("POST", "/ui/logout", nil)
	r.AddCookie(c)
	if err := e.web.Logout(httptest.NewRecorder(), r); err == nil || err.Status != 403 {
		t.Fatalf("logout without the token: %v", err)
	}
	r.Header.Set(CSRFHeader, csrf)
	w := httptest.NewRecorder()
	if err := e.web.Logout(w, r); err != nil {
		t.Fatal(err)
	}
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("logout's cookie %+v", cs)
	}
	if w := e.do("GET", c); w.Code != 401 {
		t.Errorf("after logout: %d", w.Code)
	}
}

// TestWebSessionEnds: a session ends when its user is deleted or its
// password set (at once, through Sessions, with nothing requested), and
// when it expires; its held stream ends with it.
func TestWebSessionEnds(t *testing.T) {
	e := newWebEnv(t, time.Hour)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"password set", func() error { return e.acc.SetPassword(ctx, "alice", "alice-pass-2") }},
		{"deleted", func() error { _, err := e.acc.Delete(ctx, "alice"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := e.login(t, "alice", map[string]string{"password set": "alice-pass-1", "deleted": "alice-pass-2"}[tc.name], false)
			if w := e.do("GET", c); w.Code != 299 {
				t.Fatalf("before: %d", w.Code)
			}
			// A stream of the session, held as the change feed holds it.
			r := httptest.NewRequest("GET", "/public/v1/events", nil)
			r = r.WithContext(context.WithValue(r.Context(), webKey{}, e.web.lookup(func() *http.Request { q := httptest.NewRequest("GET", "/", nil); q.AddCookie(c); return q }())))
			held, release := e.sessions.HoldRequest(r, NeedRead)
			defer release()
			n := e.web.Len()
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			if status := ended(t, "stream", held); status != 401 {
				t.Errorf("stream ended with %d, want 401", status)
			}
			deadline := time.Now().Add(20 * time.Second)
			for e.web.Len() != n-1 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if e.web.Len() != n-1 {
				t.Errorf("%d sessions open, want %d", e.web.Len(), n-1)
			}
			if w := e.do("GET", c); w.Code != 401 {
				t.Errorf("after: %d", w.Code)
			}
		})
	}
	expired := newWebEnv(t, time.Nanosecond)
	c, _ := expired.login(t, "alice", "alice-pass-1", false)
	if w := expired.do("GET", c); w.Code != 401 || !strings.Contains(w.Body.String(), "log in again") {
		t.Errorf("expired session: %d %s", w.Code, w.Body)
	}
}
