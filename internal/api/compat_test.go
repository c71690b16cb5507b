package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestNestedRecordsThroughCandidatesAndRollback: a list of records (a
// route's NextHop, BGPGlobal.Redistribution) and the new kinds go through
// candidate staging, commit, the revision record and a rollback like flat
// fields.
func TestNestedRecordsThroughCandidatesAndRollback(t *testing.T) {
	s := newTxnServer(t)
	route := `{"DestinationNw":"192.168.8.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.8.0.2","Weight":1},{"NextHopIp":"10.8.0.3"}]}`
	code, body, _ := s.do("POST", "/candidates", `{}`)
	if code != 201 {
		t.Fatalf("create candidate: %d %v", code, body)
	}
	id := body["CandidateId"].(string)
	base := uint64(body["BaseRevision"].(float64))
	for _, st := range []struct{ method, path, body string }{
		{"POST", "/candidates/" + id + "/config/LogicalIntf", `{"Name":"Loopback1"}`},
		{"POST", "/candidates/" + id + "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`},
		{"POST", "/candidates/" + id + "/config/IPv4Route", route},
		{"PATCH", "/candidates/" + id + "/config/BGPGlobal", `{"Redistribution":[{"Sources":"static"}]}`},
		{"PATCH", "/candidates/" + id + "/config/LLDPGlobal", `{"Enable":true}`},
	} {
		if code, body, _ := s.do(st.method, st.path, st.body); code != 201 && code != 200 {
			t.Fatalf("%s %s: %d %v", st.method, st.path, code, body)
		}
	}
	_, staged, _ := s.do("GET", "/candidates/"+id+"/config/IPv4Route?DestinationNw=192.168.8.0&NetworkMask=255.255.255.0", ``)
	if got := jsonOf(staged["Object"].(map[string]any)["NextHop"]); got != `[{"NextHopIntRef":"","NextHopIp":"10.8.0.2","Weight":1},{"NextHopIntRef":"","NextHopIp":"10.8.0.3","Weight":0}]` {
		t.Errorf("staged NextHop: %s", got)
	}
	if code, body, _ := s.do("POST", "/candidates/"+id+"/commit", `{}`); code != 200 {
		t.Fatalf("commit: %d %v", code, body)
	}
	_, rev, _ := s.do("GET", "/revisions/"+strconv.FormatUint(base+1, 10), ``)
	if changes := jsonOf(rev["Changes"]); !strings.Contains(changes, `"Sources":"STATIC"`) || !strings.Contains(changes, `"NextHopIp":"10.8.0.3"`) {
		t.Errorf("revision record lacks the records: %s", changes)
	}
	// A change of one element is a change of the field; then roll back.
	if code, body, _ := s.do("PATCH", "/config/IPv4Route", `{"DestinationNw":"192.168.8.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.8.0.2","Weight":2}]}`); code != 200 {
		t.Fatalf("update: %d %v", code, body)
	}
	if code, body, _ := s.do("PATCH", "/config/IPv4Route", `{"DestinationNw":"192.168.8.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.8.0.2","Weight":2}]}`); code != 200 {
		t.Fatalf("same update again: %d %v", code, body)
	}
	if code, body, _ := s.do("POST", "/action/Rollback", `{"Revision":`+strconv.FormatUint(base+1, 10)+`}`); code != 200 {
		t.Fatalf("rollback: %d %v", code, body)
	}
	_, cur, _ := s.do("GET", "/config/IPv4Route?DestinationNw=192.168.8.0&NetworkMask=255.255.255.0", ``)
	if got := jsonOf(cur["Object"].(map[string]any)["NextHop"]); got != `[{"NextHopIntRef":"","NextHopIp":"10.8.0.2","Weight":1},{"NextHopIntRef":"","NextHopIp":"10.8.0.3","Weight":0}]` {
		t.Errorf("after rollback: %s", got)
	}
	if code, body, _ := s.do("POST", "/action/Rollback", `{"Revision":`+strconv.FormatUint(base, 10)+`}`); code != 200 {
		t.Fatalf("rollback to before the candidate: %d %v", code, body)
	}
	for _, path := range []string{"/config/IPv4Route?DestinationNw=192.168.8.0&NetworkMask=255.255.255.0", "/config/LogicalIntf?Name=Loopback1", "/config/IPv4Intf?IntfRef=Loopback1"} {
		if code, _, _ := s.do("GET", path, ``); code != 404 {
			t.Errorf("%s after rolling back: %d", path, code)
		}
	}
	_, g, _ := s.do("GET", "/config/BGPGlobal", ``)
	if got := jsonOf(g["Object"].(map[string]any)["Redistribution"]); got != `[]` {
		t.Errorf("Redistribution after rolling back: %s", got)
	}
}

// jsonOf renders v as compact JSON with sorted keys.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
