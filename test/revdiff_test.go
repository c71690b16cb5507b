package test

import (
	"strings"
	"testing"
)

// GET /revisions/<a>/diff/<b> against the built swmgr: what changed
// between two past revisions (neither the running one), both ways round,
// a secret redacted, and a 404 for a revision that does not exist; the
// OpenAPI document describes the answer (the validating client checks).
func TestRevisionDiffOverREST(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.61"}`)
	rev := func() string {
		t.Helper()
		return jsonOf(s.listAll(t, "/revisions", 1)[0]["Object"].(map[string]any)["Revision"])
	}
	from := rev()
	s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"192.0.2.62","Secret":"diff-secret-7"}`)
	s.expect(t, 200, "PATCH", "/config/Port?IntfRef=fpPort3", `{"Description":"between"}`)
	s.expect(t, 200, "DELETE", "/config/NtpServer?IpAddr=192.0.2.61", "")
	to := rev()
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.63"}`) // after: not in the diff

	forward := s.expect(t, 200, "GET", "/revisions/"+from+"/diff/"+to, "")
	if strings.Contains(string(forward.raw), "diff-secret-7") || !strings.Contains(string(forward.raw), `"Secret":"******"`) {
		t.Errorf("the secret in the diff: %s", forward)
	}
	if strings.Contains(string(forward.raw), "192.0.2.63") {
		t.Errorf("a change after %s in the diff: %s", to, forward)
	}
	ops := func(r reply) string {
		var out []string
		for _, c := range r.body["Changes"].([]any) {
			c := c.(map[string]any)
			out = append(out, c["Kind"].(string)+":"+c["Op"].(string))
		}
		return strings.Join(out, " ")
	}
	if got := ops(forward); got != "Tacacs:create Port:update NtpServer:delete" {
		t.Errorf("diff %s..%s: %s", from, to, got)
	}
	if got := ops(s.expect(t, 200, "GET", "/revisions/"+to+"/diff/"+from, "")); got != "Tacacs:delete Port:update NtpServer:create" {
		t.Errorf("diff %s..%s: %s", to, from, got)
	}
	s.expect(t, 404, "GET", "/revisions/"+from+"/diff/999999", "")
	s.expect(t, 404, "GET", "/revisions/x/diff/"+from, "")
	s.expect(t, 405, "POST", "/revisions/"+from+"/diff/"+to, "")
}
