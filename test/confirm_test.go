package test

import (
	"strings"
	"testing"
)

// A confirmed commit that deletes a User could never be
// rolled back (the password is not kept) and locked out every write. It is
// refused, changes nothing, and writes go on; the same deletion without
// Confirm works.
func TestConfirmedDeleteOfAUserRefused(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/User", `{"Name":"bobconfirm","Group":"operator","Password":"bob-pass-123"}`)
	cand := s.expect(t, 201, "POST", "/candidates", `{"Comment":"drop bob"}`).str("CandidateId")
	s.expect(t, 200, "DELETE", "/candidates/"+cand+"/config/User?Name=bobconfirm", "")
	for _, q := range []string{"", "?dry_run=true"} {
		r := s.expect(t, 400, "POST", "/candidates/"+cand+"/commit"+q, `{"Confirm":2}`)
		if !strings.Contains(string(r.raw), `"Field":"Confirm"`) || !strings.Contains(string(r.raw), "bobconfirm") {
			t.Errorf("refusal%s: %s", q, r)
		}
	}
	s.expect(t, 200, "GET", "/config/User?Name=bobconfirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.31"}`) // no confirmation pending
	s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{}`)
	s.expect(t, 404, "GET", "/config/User?Name=bobconfirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.32"}`)
	// Other confirmed commits work as before.
	cand = s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
	s.expect(t, 201, "POST", "/candidates/"+cand+"/config/NtpServer", `{"IpAddr":"192.0.2.33"}`)
	r := s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{"Confirm":30}`)
	s.expect(t, 200, "POST", "/revisions/"+jsonOf(r.body["Revision"])+"/confirm", "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.34"}`)
}
