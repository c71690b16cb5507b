package test

import (
	"testing"
)

// One commit (a candidate's) that changes an object, then deletes it, or
// deletes it and creates it again, ends as its edits say, in the running
// swmgr and after kill -9 and a restart; a rollback brings the object back
// with its ObjectId.
func TestOneObjectChangedTwiceInOneCommit(t *testing.T) {
	cases := []struct {
		name  string
		edits string
		want  string // the object's MinPoll after, as JSON; "": gone
	}{
		{"patch then delete", `[{"Method":"PATCH","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.70","MinPoll":5}},{"Method":"DELETE","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.70"}}]`, ""},
		{"delete then create", `[{"Method":"DELETE","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.70"}},{"Method":"POST","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.70","MinPoll":8}}]`, "8"},
	}
	dir := t.TempDir()
	s := startServer(t, dir)
	for _, tc := range cases {
		created := s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.70"}`).str("ObjectId")
		cand := s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
		s.expect(t, 200, "POST", "/candidates/"+cand+"/edits", `{"Edits":`+tc.edits+`}`)
		rev, _ := s.expect(t, 200, "POST", "/candidates/"+cand+"/commit", `{}`).body["Revision"].(float64)
		check := func(when string) {
			r := s.do(t, "GET", "/config/NtpServer?IpAddr=192.0.2.70", "")
			switch {
			case tc.want == "" && r.code != 404:
				t.Errorf("%s, %s: GET %s; want a 404", tc.name, when, r)
			case tc.want != "" && (r.code != 200 || jsonOf(r.object()["MinPoll"]) != tc.want || r.str("ObjectId") == created):
				t.Errorf("%s, %s: GET %s; want MinPoll %s under a new ObjectId", tc.name, when, r, tc.want)
			}
			s.expect(t, 404, "GET", "/config/NtpServer/"+created, "")
		}
		check("after the commit")
		s.kill9()
		s = startServer(t, dir)
		check("after kill -9 and a restart")

		s.expect(t, 200, "POST", "/action/Rollback", `{"Revision":`+jsonOf(rev-1)+`}`)
		if r := s.expect(t, 200, "GET", "/config/NtpServer/"+created, ""); jsonOf(r.object()["MinPoll"]) != "6" {
			t.Errorf("%s, after the rollback: %s", tc.name, r)
		}
		s.expect(t, 200, "DELETE", "/config/NtpServer/"+created, "")
	}
}
