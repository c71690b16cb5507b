package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// webClient sends the page's own requests (/ui/...), which are not the
// REST API's and so not in its OpenAPI document.
var webClient = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// screenshotDir is where TestWebUI keeps its screenshots:
// $SWMGR_WEBUI_SCREENSHOTS (docs/webui to refresh docs/webui.md's), else
// the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("SWMGR_WEBUI_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// webLogin logs name in through the page's login form endpoint, as a
// script would, and returns the session cookie and CSRF token.
func webLogin(t testing.TB, root, name, password string) (*http.Cookie, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", root+"/ui/login", strings.NewReader(url.Values{"user": {name}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := webClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ User, Role, CSRF string }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("login %s: %d %v", name, resp.StatusCode, err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "swmgr-session" {
			return c, got.CSRF
		}
	}
	t.Fatalf("login %s set no session cookie", name)
	return nil, ""
}

// checkPanel checks the page's front panel against the ports' states
// REST reports, in text as well as colour.
func checkPanel(t *testing.T, p *browserPage, s *server) {
	t.Helper()
	var shown map[string][2]string
	p.eval(&shown, `Object.fromEntries([...document.querySelectorAll('#ports [data-port]')].map(e => [e.dataset.port, [e.dataset.admin, e.title]]))`)
	if len(shown) != 32 {
		t.Errorf("the front panel shows %d ports, want 32", len(shown))
	}
	for _, o := range s.listAll(t, "/state/Ports", 100) {
		port := o["Object"].(map[string]any)
		name, admin, oper := port["IntfRef"].(string), port["AdminState"].(string), port["OperState"].(string)
		want := fmt.Sprintf("%s admin %s, oper %s", name, strings.ToLower(admin), strings.ToLower(oper))
		if got := shown[name]; got[0] != admin || !strings.HasPrefix(got[1], want) {
			t.Errorf("%s shown as %q, REST says %s", name, got, want)
		}
	}
}

// followsPortOverREST sets fpPort1 up, then down, over REST: its picture
// follows through the feed, in the same page (no reload: the marker
// stays), admin and oper state as REST then reads them (the page reads
// states coalesced).
func followsPortOverREST(t *testing.T, p *browserPage, s *server) {
	t.Helper()
	p.eval(nil, "window.notReloaded = true")
	for _, state := range []string{"UP", "DOWN"} {
		s.expect(t, 200, "PATCH", "/config/Port?IntfRef=fpPort1", `{"AdminState":"`+state+`"}`)
		oper := strings.ToLower(s.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort1", "").object()["OperState"].(string))
		took := p.waitFor(`document.querySelector('[data-port="fpPort1"]').dataset.admin === "`+state+`" && document.querySelector('[data-port="fpPort1"]').title.startsWith("fpPort1 admin `+strings.ToLower(state)+`, oper `+oper+`") && window.notReloaded`, 20*time.Second)
		t.Logf("fpPort1 set %s over REST: shown %s on the page within %s (the test's 20 ms polling included)", state, state, took.Round(time.Millisecond))
	}
}

// webSend sends a REST request with a session cookie and headers given as
// name, value pairs; it answers the status and body.
func webSend(t testing.TB, method, u string, c *http.Cookie, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if c != nil {
		req.AddCookie(c)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := webClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebUI drives the web page in headless Chromium against the built
// swmgr: the page is served with a policy that runs no inline script; a
// user logs in through its form; the front panel shows the 32 ports with
// the states REST reports and follows a port set down over REST through
// the change feed, without a reload; a change made on the page (staged,
// previewed, committed) is a revision of source web; a confirmed commit's
// banner counts down and its buttons confirm it or cancel another; a rollback from the
// history restores the earlier objects; a read-only user sees no edit
// control and the server refuses its forged write; a request without the
// CSRF token and a cross-site one are refused; the session ends when its
// User is deleted. It keeps a screenshot of each view.
func TestWebUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	chromium(t)
	s := startServer(t, "")
	root := "http://" + s.addr
	shots := screenshotDir(t)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"webop","Group":"operator","Password":"web-operator-pass"}`)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"webrd","Group":"users","Password":"web-reader-pass"}`)

	// The page: served at / with its policy; no inline script in it.
	resp, err := webClient.Get(root + "/")
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q allows inline code", csp)
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(string(html), -1) {
		if !strings.Contains(tag, "src=") {
			t.Errorf("the page has an inline script: %s", tag)
		}
	}

	b := newBrowser(t, 1280, 900)
	b.navigate(root + "/")
	b.waitFor("!document.getElementById('login').hidden", 20*time.Second)
	b.screenshot(shots, "login")
	loginAs := func(name, password string) { t.Helper(); b.logIn(name, password) }
	// A wrong password is refused on the form.
	b.fill("#login-user", "webop")
	b.fill("#login-password", "not-the-password")
	b.click("#login-submit")
	b.waitFor("document.getElementById('login-error').textContent.includes('wrong user name or password')", 20*time.Second)
	loginAs("webop", "web-operator-pass")

	checkPanel(t, &b.browserPage, s)
	b.screenshot(shots, "panel")
	followsPortOverREST(t, &b.browserPage, s)
	checkPanel(t, &b.browserPage, s)

	// A port's detail, and a change made on the page: staged, previewed,
	// committed, recorded with source web.
	b.eval(nil, "location.hash = '#port/fpPort2'")
	b.waitFor("!document.getElementById('port').hidden && document.querySelectorAll('#port-graphs figure').length === 4", 20*time.Second)
	b.fill("#port-edit [name=Description]", "uplink to core")
	b.fill("#port-edit [name=AdminState]", "UP")
	b.click("#port-edit button[type=submit]")
	b.waitFor("!document.getElementById('stage').hidden && document.getElementById('stage-diff').textContent.includes('uplink to core')", 20*time.Second)
	b.screenshot(shots, "preview")
	b.click("#stage-commit")
	b.waitFor("document.getElementById('stage').hidden", 20*time.Second)
	b.waitFor(`document.querySelector('[data-port="fpPort2"]').title.includes('uplink to core')`, 20*time.Second)
	b.screenshot(shots, "port")
	latest := func() map[string]any {
		t.Helper()
		return s.listAll(t, "/revisions", 1)[0]["Object"].(map[string]any)
	}
	if rev := latest(); rev["Source"] != "web" || rev["User"] != "webop" {
		t.Errorf("the page's commit is recorded as %v by %v, want web by webop", rev["Source"], rev["User"])
	}
	if d := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort2", "").object()["Description"]; d != "uplink to core" {
		t.Errorf("fpPort2's description is %v", d)
	}

	// A confirmed commit from the page: the banner counts down, and its
	// button confirms the commit.
	commitMtuConfirmed := func(mtu string) {
		t.Helper()
		b.fill("#port-edit [name=Mtu]", mtu)
		b.click("#port-edit button[type=submit]")
		b.waitFor("!document.getElementById('stage').hidden", 20*time.Second)
		b.fill("#stage-form [name=Confirm]", "600")
		b.click("#stage-commit")
		b.waitFor("!document.getElementById('banner').hidden", 20*time.Second)
	}
	commitMtuConfirmed("9000")
	secondsLeft := func() int {
		var text string
		b.eval(&text, "document.getElementById('banner-text').textContent")
		m := regexp.MustCompile(`rolled back in (\d+) s`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("banner %q", text)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	first := secondsLeft()
	b.waitFor(fmt.Sprintf("/rolled back in (\\d+) s/.exec(document.getElementById('banner-text').textContent)[1] < %d", first), 20*time.Second)
	b.screenshot(shots, "banner")
	pending := s.expect(t, 200, "GET", "/revisions/pending", "")
	if pending.body["Awaiting"] != true {
		t.Fatalf("no commit awaits confirmation: %s", pending)
	}
	b.click("#banner-confirm")
	b.waitFor("document.getElementById('banner').hidden", 20*time.Second)
	if p := s.expect(t, 200, "GET", "/revisions/pending", ""); p.body["Awaiting"] != false {
		t.Errorf("still awaiting after the banner's confirm: %s", p)
	}
	if m := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort2", "").object()["Mtu"]; m != float64(9000) {
		t.Errorf("fpPort2's MTU after confirming is %v", m)
	}
	// Another, which the banner's other button cancels: rolled back now.
	commitMtuConfirmed("9100")
	cancelled := s.expect(t, 200, "GET", "/revisions/pending", "").body["Revision"]
	b.click("#banner-cancel")
	b.waitFor("document.getElementById('banner').hidden", 20*time.Second)
	if p := s.expect(t, 200, "GET", "/revisions/pending", ""); p.body["Awaiting"] != false {
		t.Errorf("still awaiting after the banner's cancel: %s", p)
	}
	if m := s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort2", "").object()["Mtu"]; m != float64(9000) {
		t.Errorf("fpPort2's MTU after cancelling is %v, want 9000 again", m)
	}
	if rev := latest(); rev["Source"] != "web" || rev["Comment"] != fmt.Sprintf("revision %v cancelled", cancelled) {
		t.Errorf("the cancel is recorded as %v, %q", rev["Source"], rev["Comment"])
	}

	// A rollback from the history: previewed (a dry run), then made; the
	// NTP server made since is gone again.
	before := int(latest()["Revision"].(float64))
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.55"}`)
	b.eval(nil, "location.hash = '#history'")
	sel := fmt.Sprintf(`#revs tr[data-revision="%d"] button.rollback`, before)
	b.click(sel)
	b.waitFor("!document.getElementById('stage').hidden && document.getElementById('stage-diff').textContent.includes('NtpServer')", 20*time.Second)
	if n := len(s.listAll(t, "/config/NtpServers", 100)); n != 1 {
		t.Fatalf("the rollback's preview changed something: %d NTP servers", n)
	}
	b.screenshot(shots, "rollback")
	b.click("#stage-commit")
	b.waitFor("document.getElementById('stage').hidden", 20*time.Second)
	if n := len(s.listAll(t, "/config/NtpServers", 100)); n != 0 {
		t.Errorf("after the rollback to %d: %d NTP servers, want 0", before, n)
	}
	if rev := latest(); rev["Source"] != "rollback" || rev["User"] != "webop" {
		t.Errorf("the rollback is recorded as %v by %v", rev["Source"], rev["User"])
	}
	b.waitFor(fmt.Sprintf(`document.querySelector('#revs tr[data-revision="%d"]')`, before+2), 20*time.Second)
	b.click(fmt.Sprintf(`#revs tr[data-revision="%d"] button`, before+1))
	b.waitFor("document.getElementById('diff').textContent.includes('192.0.2.55')", 20*time.Second)
	b.screenshot(shots, "history")
	// Two revisions apart: from the cancelled MTU commit to the NTP server's
	// (the cancel and the new server between, composed by the server).
	b.fill("#cmp-a", strconv.Itoa(before-1))
	b.eval(nil, "const c = document.getElementById('cmp-b'); c.value = 'revision'; c.dispatchEvent(new Event('change'))")
	b.fill("#cmp-to", strconv.Itoa(before+1))
	b.click("#cmp-go")
	b.waitFor(fmt.Sprintf("document.getElementById('diff').textContent.includes('from revision %d to revision %d')", before-1, before+1), 20*time.Second)
	var shown string
	b.eval(&shown, "document.getElementById('diff').textContent")
	if !strings.Contains(shown, "fpPort2") || !strings.Contains(shown, "9100") || !strings.Contains(shown, "192.0.2.55") {
		t.Errorf("the diff of revisions %d and %d shows %q", before-1, before+1, shown)
	}
	b.screenshot(shots, "revdiff")
	b.eval(nil, "location.hash = '#log'")
	b.waitFor("document.querySelectorAll('#logtable tbody tr').length > 3", 20*time.Second)
	b.eval(nil, "const f = document.getElementById('log-filter'); f.value = 'webop'; f.dispatchEvent(new Event('input'))")
	b.waitFor("[...document.querySelectorAll('#logtable tbody tr')].every(r => r.textContent.includes('webop'))", 20*time.Second)
	b.screenshot(shots, "log")

	// No inline script runs, and the browser reports the attempt.
	var inline struct {
		Ran      bool
		Violated string
	}
	b.eval(&inline, `new Promise(done => {
		let violated = '';
		document.addEventListener('securitypolicyviolation', e => { violated = e.violatedDirective; });
		const s = document.createElement('script');
		s.textContent = 'window.inlineRan = true';
		document.body.append(s);
		setTimeout(() => done({Ran: !!window.inlineRan, Violated: violated}), 200);
	})`)
	if inline.Ran || !strings.HasPrefix(inline.Violated, "script-src") {
		t.Errorf("an inline script added to the page: ran %v, policy violation %q", inline.Ran, inline.Violated)
	}

	// A request of the session without the CSRF token, and one a browser
	// marks as cross-site, are refused; the token makes the first pass.
	var noToken int
	b.eval(&noToken, `fetch('/public/v1/config/NtpServer', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"IpAddr":"192.0.2.66"}'}).then(r => r.status)`)
	if noToken != 403 {
		t.Errorf("the page's POST without the CSRF token: %d, want 403", noToken)
	}
	cookie, csrf := webLogin(t, root, "webop", "web-operator-pass")
	if code, body := webSend(t, "POST", s.base+"/config/NtpServer", cookie, `{"IpAddr":"192.0.2.67"}`, "X-CSRF-Token", csrf, "Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"); code != 403 || !strings.Contains(body, "cross-origin") {
		t.Errorf("cross-site POST with the cookie and token: %d %s", code, body)
	}
	if code, _ := webSend(t, "POST", root+"/ui/login", nil, "user=webop&password=web-operator-pass", "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Errorf("cross-site login: %d, want 403", code)
	}
	if code, body := webSend(t, "POST", s.base+"/config/NtpServer", cookie, `{"IpAddr":"192.0.2.68"}`, "X-CSRF-Token", csrf); code != 201 {
		t.Errorf("the session's POST with its token: %d %s", code, body)
	}
	if n := len(s.listAll(t, "/config/NtpServers", 100)); n != 1 {
		t.Errorf("%d NTP servers, want only the one the token let through", n)
	}

	// A read-only user: no edit control shown, and the server refuses its
	// write even when forged with the session's own token.
	b.click("#logout")
	b.waitFor("!document.getElementById('login').hidden", 20*time.Second)
	loginAs("webrd", "web-reader-pass")
	b.eval(nil, "location.hash = '#port/fpPort3'")
	b.waitFor("!document.getElementById('port').hidden", 20*time.Second)
	var editShown bool
	b.eval(&editShown, "document.getElementById('port-edit').offsetParent !== null || document.getElementById('ntp-add').offsetParent !== null")
	if editShown {
		t.Error("a read-only user is shown the edit forms")
	}
	var forged struct {
		Status int
		Body   string
	}
	b.eval(&forged, `fetch('/ui/session').then(r => r.json()).then(s => fetch('/public/v1/config/Port?IntfRef=fpPort3', {method: 'PATCH', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': s.CSRF}, body: '{"AdminState":"UP"}'})).then(async r => ({Status: r.status, Body: await r.text()}))`)
	if forged.Status != 403 || !strings.Contains(forged.Body, "webrd") {
		t.Errorf("a read-only user's forged PATCH: %d %s", forged.Status, forged.Body)
	}
	b.screenshot(shots, "readonly")

	// Its User deleted: the page is logged out by the feed, at once.
	s.expect(t, 200, "DELETE", "/config/User?Name=webrd", "")
	b.waitFor("!document.getElementById('login').hidden", 20*time.Second)

	// Performance: what the first load of the page transfers.
	var loaded struct{ Bytes, Painted float64 }
	b.navigate(root + "/")
	loginAs("webop", "web-operator-pass")
	b.navigate(root + "/ui/")
	b.waitFor("performance.getEntriesByName('panel-painted').length", 20*time.Second)
	b.eval(&loaded, `({Bytes: performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).filter(e => !e.name.includes('/events')).reduce((n, e) => n + e.transferSize, 0), Painted: performance.getEntriesByName('panel-painted')[0].startTime})`)
	t.Logf("first load: %.0f bytes transferred (page, script, style, the API's answers); front panel painted %.0f ms after navigation", loaded.Bytes, loaded.Painted)
	if loaded.Bytes <= 0 || loaded.Bytes > 300<<10 {
		t.Errorf("the first load transfers %.0f bytes, want less than 300 KB", loaded.Bytes)
	}
	t.Logf("screenshots in %s", shots)
}
