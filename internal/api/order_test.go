package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

// TestCandidateEditsOfOneObject: a candidate's edits of one object, committed
// over REST, end as their order says: the candidate's diff, the commit's
// answer and its revision record hold the same changes, which end with the
// object as GET then shows it; a rollback restores it.
func TestCandidateEditsOfOneObject(t *testing.T) {
	const (
		patch5 = `{"Method":"PATCH","Path":"config/NtpServer","Body":{"IpAddr":"10.7.7.7","MinPoll":5}}`
		patch7 = `{"Method":"PATCH","Path":"config/NtpServer","Body":{"IpAddr":"10.7.7.7","MinPoll":7}}`
		remove = `{"Method":"DELETE","Path":"config/NtpServer","Body":{"IpAddr":"10.7.7.7"}}`
		post8  = `{"Method":"POST","Path":"config/NtpServer","Body":{"IpAddr":"10.7.7.7","MinPoll":8}}`
	)
	cases := []struct {
		name    string
		edits   []string
		changes []string // the commit's changes: "op MinPoll" (a delete's before, else after)
		want    int      // MinPoll after; 0: gone
	}{
		{"patch, delete", []string{patch5, remove}, []string{"delete 6"}, 0},
		{"patch, patch, delete", []string{patch5, patch7, remove}, []string{"delete 6"}, 0},
		{"patch, patch", []string{patch5, patch7}, []string{"update 7"}, 7},
		{"delete, create", []string{remove, post8}, []string{"delete 6", "create 8"}, 8},
		{"patch, delete, create", []string{patch5, remove, post8}, []string{"delete 6", "create 8"}, 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPIHarness(t)
			resp, body := a.send("POST", "/config/NtpServer", nil, `{"IpAddr":"10.7.7.7"}`)
			var created struct{ ObjectId string }
			if resp.StatusCode != 201 || json.Unmarshal(body, &created) != nil {
				t.Fatalf("create: %d %s", resp.StatusCode, body)
			}
			resp, body = a.send("POST", "/candidates", nil, `{}`)
			var cand struct {
				CandidateId  string
				BaseRevision uint64
			}
			if resp.StatusCode != 201 || json.Unmarshal(body, &cand) != nil {
				t.Fatalf("POST /candidates: %d %s", resp.StatusCode, body)
			}
			edits := `{"Edits":[`
			for i, ed := range tc.edits {
				if i > 0 {
					edits += ","
				}
				edits += ed
			}
			if resp, body := a.send("POST", "/candidates/"+cand.CandidateId+"/edits", nil, edits+"]}"); resp.StatusCode != 200 {
				t.Fatalf("staging: %d %s", resp.StatusCode, body)
			}
			// The candidate's view shows the object as the edits leave it,
			// once, by key and in the get-all, under the ObjectId a GET by
			// key gives.
			candPath := "/candidates/" + cand.CandidateId
			resp, body = a.send("GET", candPath+"/config/NtpServer?IpAddr=10.7.7.7", nil, "")
			if got := minPollOf(t, resp.StatusCode, body); got != tc.want {
				t.Errorf("in the candidate: GET %d %s; want MinPoll %d (0: a 404)", resp.StatusCode, body, tc.want)
			}
			var one struct{ ObjectId string }
			json.Unmarshal(body, &one)
			resp, body = a.send("GET", candPath+"/config/NtpServers", nil, "")
			var all struct {
				Objects []struct {
					Object   struct{ MinPoll int }
					ObjectId string
				}
			}
			if resp.StatusCode != 200 || json.Unmarshal(body, &all) != nil {
				t.Fatalf("in the candidate: GET all: %d %s", resp.StatusCode, body)
			}
			var listed []string
			for _, o := range all.Objects {
				listed = append(listed, fmt.Sprintf("%s %d", o.ObjectId, o.Object.MinPoll))
			}
			if want := []string{fmt.Sprintf("%s %d", one.ObjectId, tc.want)}; tc.want != 0 && !reflect.DeepEqual(listed, want) || tc.want == 0 && len(listed) != 0 {
				t.Errorf("in the candidate: GET all lists %q; want %q", listed, want)
			}
			resp, body = a.send("GET", candPath+"/config/NtpServer/"+created.ObjectId, nil, "")
			if kept := tc.changes[0] == "update 7"; kept != (resp.StatusCode == 200) {
				t.Errorf("in the candidate: GET by the ObjectId the object had: %d %s", resp.StatusCode, body)
			}
			_, body = a.send("GET", candPath+"/diff", nil, "")
			if got := changesOf(t, body); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("the candidate's diff: %q; want %q (%s)", got, tc.changes, body)
			}
			resp, body = a.send("POST", "/candidates/"+cand.CandidateId+"/commit", nil, `{}`)
			var commit struct{ Revision uint64 }
			if resp.StatusCode != 200 || json.Unmarshal(body, &commit) != nil {
				t.Fatalf("commit: %d %s", resp.StatusCode, body)
			}
			if got := changesOf(t, body); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("the commit's answer: %q; want %q (%s)", got, tc.changes, body)
			}
			_, body = a.send("GET", "/revisions/"+strconv.FormatUint(commit.Revision, 10), nil, "")
			if got := changesOf(t, body); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("revision %d: %q; want %q (%s)", commit.Revision, got, tc.changes, body)
			}

			resp, body = a.send("GET", "/config/NtpServer?IpAddr=10.7.7.7", nil, "")
			if got := minPollOf(t, resp.StatusCode, body); got != tc.want {
				t.Errorf("after the commit: GET %d %s; want MinPoll %d (0: a 404)", resp.StatusCode, body, tc.want)
			}
			// The object keeps its ObjectId only if it was never deleted.
			kept := tc.changes[0] == "update 7"
			resp, body = a.send("GET", "/config/NtpServer/"+created.ObjectId, nil, "")
			if kept != (resp.StatusCode == 200) {
				t.Errorf("GET by the ObjectId the object had: %d %s", resp.StatusCode, body)
			}

			resp, body = a.send("POST", "/action/Rollback", nil, fmt.Sprintf(`{"Revision":%d}`, cand.BaseRevision))
			if resp.StatusCode != 200 {
				t.Fatalf("rollback: %d %s", resp.StatusCode, body)
			}
			// By its ObjectId too: a re-created object comes back with it.
			resp, body = a.send("GET", "/config/NtpServer/"+created.ObjectId, nil, "")
			if got := minPollOf(t, resp.StatusCode, body); got != 6 {
				t.Errorf("after the rollback: GET by ObjectId %d %s; want MinPoll 6", resp.StatusCode, body)
			}
		})
	}
}

// changesOf describes the Changes of an answer: "op MinPoll", the MinPoll
// a delete's object had, or the one a create or an update gives it.
func changesOf(t *testing.T, body []byte) []string {
	t.Helper()
	var r struct {
		Changes []struct {
			Op            string
			Before, After struct{ MinPoll int }
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var out []string
	for _, c := range r.Changes {
		poll := c.After.MinPoll
		if c.Op == "delete" {
			poll = c.Before.MinPoll
		}
		out = append(out, fmt.Sprintf("%s %d", c.Op, poll))
	}
	return out
}

// minPollOf is the MinPoll of a GET's object, 0 for a 404.
func minPollOf(t *testing.T, status int, body []byte) int {
	t.Helper()
	if status == 404 {
		return 0
	}
	var r struct{ Object struct{ MinPoll int } }
	if status != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("GET: %d %s", status, body)
	}
	return r.Object.MinPoll
}
