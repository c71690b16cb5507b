package webui

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
)

// newPage is the page's handler over web sessions of real account files
// holding the operator alice.
func newPage(t *testing.T) *Handler {
	t.Helper()
	acc, err := accounts.OpenFiles(t.TempDir(), accounts.FilesOptions{Scheme: accounts.SHA512})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.Create(context.Background(), "alice", "operator", "/bin/sh", "alice-pass-1"); err != nil {
		t.Fatal(err)
	}
	v := auth.NewVerifier(auth.AccountsCheck(acc, nil), auth.VerifierOptions{})
	return New(auth.NewWebSessions(auth.WebOptions{Verifier: v, Throttle: auth.NewThrottle(auth.ThrottleOptions{})}))
}

func send(h http.Handler, method, path, body string, cookie *http.Cookie, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host = "switch.example"
	if body != "" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != nil {
		r.AddCookie(cookie)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestServe: the page and its files answer GET and HEAD, with the policy
// on every answer; the login answers the session to the script and a
// redirect to a form, refuses what is not a POST of this origin, a form
// without both fields and a wrong password; logout needs the session's
// token.
func TestServe(t *testing.T) {
	h := newPage(t)
	const asJSON = "application/json"
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		want                     int
		has                      string
	}{
		{"page at /", "GET", "/", "", nil, 200, `<script src="/ui/app.js"`},
		{"page at /ui/", "GET", "/ui/", "", nil, 200, `<script src="/ui/app.js"`},
		{"page at /ui", "GET", "/ui", "", nil, 200, `<script src="/ui/app.js"`},
		{"script", "GET", "/ui/app.js", "", nil, 200, "'use strict'"},
		{"style", "HEAD", "/ui/app.css", "", nil, 200, ""},
		{"no such file", "GET", "/ui/nothing.js", "", nil, 404, ""},
		{"POST on the page", "POST", "/", "x=1", nil, 405, "method_not_allowed"},
		{"GET on login", "GET", LoginPath, "", nil, 405, "method_not_allowed"},
		{"cross-site login", "POST", LoginPath, "user=alice&password=alice-pass-1", []string{"Sec-Fetch-Site", "cross-site", "Accept", asJSON}, 403, "cross-origin"},
		{"login of another origin", "POST", LoginPath, "user=alice&password=alice-pass-1", []string{"Origin", "http://evil.example", "Accept", asJSON}, 403, "cross-origin"},
		{"login without password", "POST", LoginPath, "user=alice", []string{"Accept", asJSON}, 400, "missing_field"},
		{"wrong password", "POST", LoginPath, "user=alice&password=nope-nope", []string{"Accept", asJSON}, 401, "wrong user name or password"},
		{"login", "POST", LoginPath, "user=alice&password=alice-pass-1", []string{"Accept", asJSON}, 200, `"Role":"operator"`},
		{"login by a plain form", "POST", LoginPath, "user=alice&password=alice-pass-1", nil, 303, ""},
		{"wrong password by a plain form", "POST", LoginPath, "user=alice&password=nope-nope", nil, 303, ""},
		{"no session", "GET", SessionPath, "", nil, 401, "log in again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := send(h, tc.method, tc.path, tc.body, nil, tc.hdr...)
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.has) {
				t.Fatalf("%d %q, want %d with %q", w.Code, w.Body, tc.want, tc.has)
			}
			if w.Header().Get("Content-Security-Policy") != Policy {
				t.Errorf("policy %q", w.Header().Get("Content-Security-Policy"))
			}
			cookies := w.Result().Cookies()
			if (len(cookies) == 1) != (tc.want == 200 && tc.path == LoginPath || tc.name == "login by a plain form") {
				t.Errorf("cookies %v", cookies)
			}
			if tc.want == 303 && w.Header().Get("Location") != map[bool]string{true: "/", false: "/?login=401"}[len(cookies) == 1] {
				t.Errorf("redirected to %q", w.Header().Get("Location"))
			}
		})
	}

	login := send(h, "POST", LoginPath, "user=alice&password=alice-pass-1", nil, "Accept", asJSON)
	cookie := login.Result().Cookies()[0]
	var s struct{ User, Role, CSRF string }
	if err := json.Unmarshal(login.Body.Bytes(), &s); err != nil || s.CSRF == "" {
		t.Fatalf("login answered %s: %v", login.Body, err)
	}
	if strings.Contains(login.Body.String(), "alice-pass-1") {
		t.Fatal("the login answered the password")
	}
	if w := send(h, "GET", SessionPath, "", cookie); w.Code != 200 || !strings.Contains(w.Body.String(), s.CSRF) {
		t.Errorf("session: %d %s", w.Code, w.Body)
	}
	if w := send(h, "POST", LogoutPath, "", cookie); w.Code != 403 {
		t.Errorf("logout without the token: %d %s", w.Code, w.Body)
	}
	if w := send(h, "POST", LogoutPath, "", cookie, auth.CSRFHeader, s.CSRF); w.Code != 204 {
		t.Errorf("logout: %d %s", w.Code, w.Body)
	}
	if w := send(h, "GET", SessionPath, "", cookie); w.Code != 401 {
		t.Errorf("session after logout: %d %s", w.Code, w.Body)
	}
}

// TestAssetsRunNothingInline: the page names only files it embeds, and
// has no inline script, style or event handler, which its policy would
// refuse anyway.
func TestAssetsRunNothingInline(t *testing.T) {
	html, err := fs.ReadFile(assets, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="/ui/([^"]+)"`).FindAllStringSubmatch(string(html), -1) {
		if _, err := fs.Stat(assets, "assets/"+m[1]); err != nil {
			t.Errorf("the page names %s: %v", m[1], err)
		}
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`), regexp.MustCompile(`<style`), regexp.MustCompile(`\son[a-z]+=`), regexp.MustCompile(`\sstyle=`)} {
		if loc := bad.FindIndex(html); loc != nil {
			t.Errorf("the page has inline code: %q", html[loc[0]:min(len(html), loc[1]+40)])
		}
	}
}
