package main

import (
	"strings"
	"testing"
)

// A candidate belongs to the user who opened it: another operator can
// neither read, stage into, diff, commit nor discard it (404, as if it did
// not exist), even with its id from the config log, where a failed commit
// prints it; an admin may describe and discard another user's candidate,
// and is told whose it is (403) for the rest.
func TestCandidatesBelongToTheirCreator(t *testing.T) {
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), adminPasswordFile: writeFile(t, "first-admin-pass")})
	admin := cred{"admin", "first-admin-pass"}
	op1, op2 := cred{"opone", "op-one-pass-1"}, cred{"optwo", "op-two-pass-1"}
	for _, u := range []cred{op1, op2} {
		s.want(s.as(admin, "POST", "/config/User", `{"Name":"`+u.name+`","Group":"operator","Password":"`+u.password+`"}`), 201, "make "+u.name)
	}
	open := func(u cred) string {
		t.Helper()
		r := s.as(u, "POST", "/candidates", `{"Comment":"`+u.name+`'s"}`)
		s.want(r, 201, u.name+" opens a candidate")
		id, _ := r.body["CandidateId"].(string)
		return id
	}
	// The admin's candidate fails to commit (a conflict): the config log,
	// which every reader sees, names it.
	mine := open(admin)
	s.want(s.as(admin, "POST", "/candidates/"+mine+"/config/NtpServer", `{"IpAddr":"192.0.2.1"}`), 201, "stage")
	s.want(s.as(admin, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`), 201, "the same, directly")
	s.want(s.as(admin, "POST", "/candidates/"+mine+"/commit", `{}`), 409, "the commit conflicts")
	s.want(s.as(admin, "DELETE", "/config/NtpServer?IpAddr=192.0.2.1", ""), 200, "delete")
	if log := s.as(op1, "GET", "/state/ConfigLogs", ""); !strings.Contains(log.raw, mine) {
		t.Fatalf("the config log does not show the failed commit's candidate (the test's premise): %s", log.raw)
	}
	others := []struct{ method, path, body string }{
		{"GET", "", ""},
		{"POST", "/config/User", `{"Name":"evil","Group":"admin","Password":"evil-pass-123"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.66"}`},
		{"POST", "/edits", `{"Edits":[{"Method":"POST","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.67"}}]}`},
		{"GET", "/config/NtpServers", ""},
		{"GET", "/diff", ""},
		{"POST", "/commit", `{}`},
		{"DELETE", "", ""},
	}
	for _, o := range others {
		r := s.as(op1, o.method, "/candidates/"+mine+o.path, o.body)
		if refusedForRole(r) {
			continue
		}
		if r.status != 404 || !strings.Contains(r.raw, "of yours") {
			t.Errorf("another operator %s %s of the admin's candidate: %d %s", o.method, o.path, r.status, r.raw)
		}
	}
	// The owner still has it, untouched.
	r := s.as(admin, "GET", "/candidates/"+mine, "")
	s.want(r, 200, "the owner describes it")
	if r.body["Edits"] != float64(1) {
		t.Errorf("the admin's candidate: %s", r.raw)
	}
	s.want(s.as(admin, "DELETE", "/candidates/"+mine, ""), 200, "the owner discards it")

	// An operator's candidate: the other operator gets 404; the admin may
	// describe and discard it, and nothing else.
	theirs := open(op1)
	s.want(s.as(op1, "POST", "/candidates/"+theirs+"/config/NtpServer", `{"IpAddr":"192.0.2.2"}`), 201, "the owner stages")
	s.want(s.as(op1, "GET", "/candidates/"+theirs+"/diff", ""), 200, "the owner diffs")
	for _, o := range others {
		if r := s.as(op2, o.method, "/candidates/"+theirs+o.path, o.body); r.status != 404 && !refusedForRole(r) {
			t.Errorf("another operator %s %s: %d %s", o.method, o.path, r.status, r.raw)
		}
		want := 403
		if o.path == "" {
			continue // GET and DELETE: below
		}
		if r := s.as(admin, o.method, "/candidates/"+theirs+o.path, o.body); r.status != want || !strings.Contains(r.raw, `belongs to user \"opone\"`) {
			t.Errorf("an admin %s %s of an operator's candidate: %d %s", o.method, o.path, r.status, r.raw)
		}
	}
	if r := s.as(admin, "GET", "/candidates/"+theirs, ""); r.status != 200 || r.body["User"] != "opone" || r.body["Edits"] != float64(1) {
		t.Errorf("an admin describes an operator's candidate: %d %s", r.status, r.raw)
	}
	s.want(s.as(admin, "DELETE", "/candidates/"+theirs, ""), 200, "an admin discards an operator's candidate")
	s.want(s.as(op1, "GET", "/candidates/"+theirs, ""), 404, "discarded")
	s.want(s.as(admin, "GET", "/config/User?Name=evil", ""), 404, "no User was staged and committed")
}

// refusedForRole says whether r is the 403 of a role that may not make the
// request at all (an operator staging a User), which comes first.
func refusedForRole(r reply) bool {
	return r.status == 403 && strings.Contains(r.raw, "that needs an admin")
}
