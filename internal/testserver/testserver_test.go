package testserver_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/testserver"
)

// TestLoginsAsServe: a test server checks logins as swmgr serve does
// (package access), so a user of a central TACACS+ server logs in over
// HTTPS once the switch is configured to ask it, with the role the server
// gives, and a wrong password or a local user the server does not know is
// refused.
func TestLoginsAsServe(t *testing.T) {
	const key = "testserver-tacacs-key"
	tac := aaatest.StartTacacs(t, key, []aaatest.User{
		{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15},
		{Name: "viewer", Password: "remote-viewer-pass", PrivLvl: 1},
	})
	s, err := testserver.Start("", testserver.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Without credentials on the plain listener: this process, an admin.
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":` + strconv.Itoa(tac.Port) + `,"Secret":"` + key + `","AuthService":"login"}`},
		{"PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`},
	} {
		if code, body := send(t, http.DefaultClient, w.method, s.URL+"/public/v1"+w.path, "", "", w.body); code/100 != 2 {
			t.Fatalf("%s %s: %d %s", w.method, w.path, code, body)
		}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: s.TLSConfig()}}
	for _, tc := range []struct {
		method, path, user, password, body string
		want                               int
	}{
		{"POST", "/config/NtpServer", "netadmin", "remote-admin-pass", `{"IpAddr":"192.0.2.44"}`, 201},
		{"GET", "/config/NtpServers", "viewer", "remote-viewer-pass", "", 200},
		{"POST", "/config/NtpServer", "viewer", "remote-viewer-pass", `{"IpAddr":"192.0.2.45"}`, 403},
		{"GET", "/config/NtpServers", "netadmin", "wrong-password", "", 401},
		// While a server answers, it decides: the local admin it does not
		// know is refused (docs/aaa.md).
		{"GET", "/config/NtpServers", "admin", testserver.AdminPassword, "", 401},
	} {
		if code, body := send(t, hc, tc.method, s.TLSURL+"/public/v1"+tc.path, tc.user, tc.password, tc.body); code != tc.want {
			t.Errorf("%s %s as %s: %d %s, want %d\ntacquito: %s", tc.method, tc.path, tc.user, code, body, tc.want, tac.Output())
		}
	}
}

// TestStreamEndsWithItsUsersAccess: a test server ends a change-feed
// stream when its user is deleted, as swmgr serve does (the sessions of
// package access), and says why in the stream's last event.
func TestStreamEndsWithItsUsersAccess(t *testing.T) {
	s, err := testserver.Start("", testserver.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body := send(t, http.DefaultClient, "POST", s.URL+"/public/v1/config/User", "", "", `{"Name":"op-gone","Group":"operator","Password":"op-gone-pass-1"}`); code != 201 {
		t.Fatalf("create the User: %d %s", code, body)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: s.TLSConfig()}}
	req, err := http.NewRequest("GET", s.TLSURL+"/public/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("op-gone", "op-gone-pass-1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /events: %d", resp.StatusCode)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		read <- string(b)
	}()
	if code, body := send(t, http.DefaultClient, "DELETE", s.URL+"/public/v1/config/User?Name=op-gone", "", "", ""); code != 200 {
		t.Fatalf("delete the User: %d %s", code, body)
	}
	select {
	case got := <-read:
		if !strings.Contains(got, `"Status":401`) || !strings.Contains(got, "op-gone") {
			t.Errorf("the stream ended with %q; want a 401 naming the user", got)
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a measure
		t.Fatal("the deleted user's stream is still open")
	}
}

func send(t *testing.T, hc *http.Client, method, url, user, password, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
