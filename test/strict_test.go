package test

import (
	"bytes"
	"strings"
	"testing"
)

// A malformed or repeated query parameter is a 400 on
// every path, so a dry run can never become a real write; the store is
// unchanged after all of them.
func TestMalformedQueriesAre400(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)
	rev := jsonOf(s.expect(t, 200, "GET", "/revisions", "").body["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any)["Revision"])
	cand := s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
	s.expect(t, 201, "POST", "/candidates/"+cand+"/config/NtpServer", `{"IpAddr":"192.0.2.9"}`)
	s.stop(t)
	before := dump(t, dir)
	s = startServer(t, dir)
	dryRuns := []string{"dry_run=true%", "dry_run=true;", "dry_run%=true", "dry_run=true&dry_run=false", "dry_run=true&dry_run=true", "dry_run=%ff", "dry_run=true;x=1"}
	for _, q := range dryRuns {
		for _, w := range []struct{ method, path, body string }{
			{"POST", "/config/NtpServer", `{"IpAddr":"198.51.100.1"}`},
			{"PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":5}`},
			{"DELETE", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`},
			{"POST", "/candidates/" + cand + "/commit", `{}`},
			{"POST", "/action/Rollback", `{"Revision":` + rev + `}`},
		} {
			r := s.do(t, w.method, w.path+"?"+q, w.body)
			if r.code != 400 || !strings.Contains(string(r.raw), `"Code":"malformed_query"`) {
				t.Errorf("%s %s?%s: %s", w.method, w.path, q, r)
			}
		}
	}
	for _, q := range []string{"Count=0;", "Count=%zz", "%zz=1", "Count=1&Count=2", "CurrentMarker=0&CurrentMarker=0", "=1"} {
		if r := s.do(t, "GET", "/config/NtpServers?"+q, ""); r.code != 400 {
			t.Errorf("GET NtpServers?%s: %s", q, r)
		}
	}
	s.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused queries changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The well-formed dry run still works and changes nothing.
	s = startServer(t, dir)
	s.expect(t, 200, "POST", "/config/NtpServer?dry_run=true", `{"IpAddr":"198.51.100.1"}`)
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=198.51.100.1", "")
}

// The spellings of one address or name are one object,
// stored and returned in the canonical form, also after a restart.
func TestAddressSpellingsAreOneObject(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	for _, tc := range []struct {
		canonical string
		spellings []string
	}{
		{"2001:db8::1", []string{"2001:db8::1", "2001:DB8::1", "2001:0db8::1", "2001:db8:0:0:0:0:0:1"}},
		{"192.0.2.77", []string{"192.0.2.77", "::ffff:192.0.2.77"}},
		{"ntp.example.com", []string{"NTP.EXAMPLE.COM", "ntp.example.com", "ntp.example.com."}},
	} {
		id := s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"`+tc.spellings[0]+`"}`).str("ObjectId")
		for _, sp := range tc.spellings[1:] {
			if r := s.expect(t, 409, "POST", "/config/NtpServer", `{"IpAddr":"`+sp+`"}`); r.str("ObjectId") != id {
				t.Errorf("%q: %s", sp, r)
			}
		}
		for _, sp := range tc.spellings {
			if r := s.expect(t, 200, "GET", "/config/NtpServer", `{"IpAddr":"`+sp+`"}`); r.object()["IpAddr"] != tc.canonical {
				t.Errorf("GET %q: %s", sp, r)
			}
		}
	}
	s.stop(t)
	s = startServer(t, dir)
	list := s.listAll(t, "/config/NtpServers", 100)
	var got []string
	for _, o := range list {
		got = append(got, o["Object"].(map[string]any)["IpAddr"].(string))
	}
	if strings.Join(got, " ") != "2001:db8::1 192.0.2.77 ntp.example.com" {
		t.Errorf("stored: %v", got)
	}
}
