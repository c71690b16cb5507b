package test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
)

// eventStream is a change feed read in the background as one user.
type eventStream struct {
	commits atomic.Int64
	mu      sync.Mutex
	errors  []string // the data of its error events
	done    chan struct{}
}

// openEvents opens the change feed at base as user, over plain HTTP with
// Basic credentials (which win over the local peer's identity).
func openEvents(t testing.TB, base, user, password string) *eventStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req) // no timeout: a stream
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET /events as %s: %d", user, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	e := &eventStream{done: make(chan struct{})}
	go func() {
		defer close(e.done)
		sc := bufio.NewScanner(resp.Body)
		var kind string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "event: commit":
				e.commits.Add(1)
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && kind == "error":
				e.mu.Lock()
				e.errors = append(e.errors, strings.TrimPrefix(line, "data: "))
				e.mu.Unlock()
			case line == "":
				kind = ""
			}
		}
	}()
	return e
}

// waitCommits waits (generously) until the stream has had n commits.
func (e *eventStream) waitCommits(t testing.TB, what string, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for e.commits.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d commits, want %d", what, e.commits.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ended waits (generously) for the stream to end, and returns its error
// events.
func (e *eventStream) ended(t testing.TB, what string) string {
	t.Helper()
	select {
	case <-e.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the stream is still open", what)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.errors, "\n")
}

// subscribeNtp is a gNMI STREAM subscription, ON_CHANGE, to the
// NtpServers, as user; it returns once the subscription is in sync.
func (g *gnmiServer) subscribeNtp(t testing.TB, user, password string) (*syncBuffer, chan error) {
	t.Helper()
	out, done := g.backgroundAs(t, user, password, "-dt", "p", "-sd", "600s", "-proto", `subscribe:<prefix:<> mode:STREAM encoding:JSON
subscription:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer">> mode:ON_CHANGE>>`)
	waitFor(t, out, "sync_response:true")
	return out, done
}

// gnmiEnded waits (generously) for a gnmi_cli subscription to exit, and
// returns its output without blanks.
func gnmiEnded(t testing.TB, what string, out *syncBuffer, done chan error) string {
	t.Helper()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("%s: gnmi_cli exited 0", what)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the subscription is still open:\n%s", what, out)
	}
	return strings.Join(strings.Fields(out.String()), "")
}

// A local operator's change feed and gNMI subscription end, with a 401
// and Unauthenticated saying why, soon after an admin deletes the User,
// and after an admin sets its password (how an admin takes an account
// away: a User has no disabled state); the admin's own feed goes on and
// sees every commit. No login failure is counted.
func TestStreamsEndWhenTheirUserIsDeletedOrItsPasswordSet(t *testing.T) {
	g := startGNMIServer(t, "")
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op-gone","Group":"operator","Password":"op-gone-pass-1"}`)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op-reset","Group":"operator","Password":"op-reset-pass-1"}`)
	admin := openEvents(t, g.base, "admin", blackBoxAdminPassword)
	commits := int64(0)
	for i, tc := range []struct {
		user, password, how string
		end                 func()
	}{
		{"op-gone", "op-gone-pass-1", "deleted", func() { g.expect(t, 200, "DELETE", "/config/User?Name=op-gone", "") }},
		{"op-reset", "op-reset-pass-1", "password set", func() {
			g.expect(t, 200, "POST", "/action/UserPassword", `{"Name":"op-reset","Password":"op-reset-pass-2"}`)
		}},
	} {
		feed := openEvents(t, g.base, tc.user, tc.password)
		sub, done := g.subscribeNtp(t, tc.user, tc.password)
		ip := fmt.Sprintf("192.0.2.%d", 80+i)
		g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"`+ip+`"}`)
		commits++
		feed.waitCommits(t, tc.user+"'s feed", 1)
		waitFor(t, sub, ip)

		tc.end()
		if final := feed.ended(t, tc.user+"'s feed, "+tc.how); !strings.Contains(final, `"Status":401`) || !strings.Contains(final, tc.user) {
			t.Errorf("%s's feed, %s: its last error event is %q; want a 401 naming the user", tc.user, tc.how, final)
		}
		if out := gnmiEnded(t, tc.user+"'s subscription, "+tc.how, sub, done); !strings.Contains(out, "code=Unauthenticated") || !strings.Contains(out, tc.user+"'saccessended") {
			t.Errorf("%s's subscription, %s, ended with:\n%s", tc.user, tc.how, out)
		}
		if tc.how == "deleted" {
			commits++ // the User's deletion
		}
	}
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.99"}`)
	commits++
	admin.waitCommits(t, "the admin's feed", commits)
	select {
	case <-admin.done:
		t.Fatal("the admin's feed ended")
	default:
	}
	if n := strings.Count(g.logs.String(), "stream closed: its user's access ended"); n != 4 {
		t.Errorf("%d streams logged as closed, want 4", n)
	}
	// No login failed: the subscriptions ended are not counted as one.
	if m := string(scrape(t, g.server)); !strings.Contains(m, "\nswmgr_login_failures_total 0\n") {
		t.Errorf("login failures counted:\n%s", m)
	}
}

// A central user's streams end once the TACACS+ server stops accepting
// the user (found by the periodic authorisation, here every second:
// nothing on the switch changed); another central user's go on.
func TestStreamsOfACentralUserEndWhenTheServerRefusesIt(t *testing.T) {
	keep := aaatest.User{Name: "netkeep", Password: "remote-keep-pass", PrivLvl: 1}
	gone := aaatest.User{Name: "netgone", Password: "remote-gone-pass", PrivLvl: 15}
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{keep, gone})
	g := startGNMIServer(t, "", "--reauth-interval", "1s")
	g.expect(t, 201, "POST", "/config/Tacacs", fmt.Sprintf(`{"ServerIp":"127.0.0.1","Port":%d,"Secret":"%s","AuthService":"login"}`, tac.Port, tacKey))
	g.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)

	kept := openEvents(t, g.base, keep.Name, keep.Password)
	feed := openEvents(t, g.base, gone.Name, gone.Password)
	sub, done := g.subscribeNtp(t, gone.Name, gone.Password)
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.90"}`)
	feed.waitCommits(t, "the central user's feed", 1)
	kept.waitCommits(t, "the other central user's feed", 1)
	waitFor(t, sub, "192.0.2.90")

	tac.SetUsers(t, []aaatest.User{keep})
	if final := feed.ended(t, "the refused user's feed"); !strings.Contains(final, `"Status":401`) {
		t.Errorf("the refused user's feed: its last error event is %q; want a 401", final)
	}
	if out := gnmiEnded(t, "the refused user's subscription", sub, done); !strings.Contains(out, "code=Unauthenticated") {
		t.Errorf("the refused user's subscription ended with:\n%s", out)
	}
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.91"}`)
	kept.waitCommits(t, "the other central user's feed", 2)
	select {
	case <-kept.done:
		t.Fatal("the feed of the user the server still accepts ended")
	default:
	}
	if strings.Contains(g.logs.String(), gone.Password) || strings.Contains(g.logs.String(), tacKey) {
		t.Error("the log holds a password or the key")
	}
}
