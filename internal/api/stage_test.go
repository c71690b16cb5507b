package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/auth"
)

// POST /candidates/{id}/edits stages a list of edits (creates, updates by
// key or ObjectId, deletes) in one request; a list with one bad edit is a
// 4xx that names the edit and stages nothing.
func TestStageManyOverREST(t *testing.T) {
	s := newTxnServer(t)
	code, body, _ := s.do("POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1"}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	ntpID := body["ObjectId"].(string)
	_, body, _ = s.do("POST", "/candidates", `{}`)
	id := body["CandidateId"].(string)
	good := `{"Edits":[
		{"Method":"POST","Path":"config/Vlan","Body":{"VlanId":10,"UntagIntfList":["fpPort1"]}},
		{"Method":"POST","Path":"config/Vlan","Body":{"VlanId":20,"UntagIntfList":["fpPort1"]}},
		{"Method":"PATCH","Path":"config/Vlan?VlanId=10","Body":{"UntagIntfList":["fpPort2"]}},
		{"Method":"DELETE","Path":"/public/v1/config/NtpServer/` + ntpID + `"}]}`
	for _, bad := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"unknown envelope field", `{"Edit":[]}`, 400, "Edits"},
		{"no edits", `{"Edits":[]}`, 400, "empty"},
		{"a GET", `{"Edits":[{"Method":"GET","Path":"config/Vlan"}]}`, 400, "Edits[0]"},
		{"a state path", `{"Edits":[{"Method":"POST","Path":"state/Vlan","Body":{}}]}`, 400, "Edits[0]"},
		{"another host", `{"Edits":[{"Method":"POST","Path":"http://example.com/config/Vlan","Body":{}}]}`, 400, "Edits[0]"},
		{"a bad field in edit 1", `{"Edits":[{"Method":"POST","Path":"config/Vlan","Body":{"VlanId":30}},{"Method":"POST","Path":"config/Vlan","Body":{"VlanId":5000}}]}`, 400, "Edits[1]"},
		{"a rule broken by the result", strings.Replace(good, `"Body":{"UntagIntfList":["fpPort2"]}`, `"Body":{"Description":"x"}`, 1), 409, "untagged member"},
		{"a query the create would ignore", `{"Edits":[{"Method":"POST","Path":"config/Vlan?VlanId=31","Body":{"VlanId":30}}]}`, 400, "Edits[0]"},
		{"a body the delete by id would ignore", `{"Edits":[{"Method":"DELETE","Path":"config/NtpServer/` + ntpID + `","Body":{"IpAddr":"192.0.2.9"}}]}`, 400, "Edits[0]"},
		{"an update of nothing", `{"Edits":[{"Method":"PATCH","Path":"config/Vlan?VlanId=99","Body":{"Description":"x"}}]}`, 404, "Edits[0]"},
	} {
		before := s.dump()
		code, body, _ := s.do("POST", "/candidates/"+id+"/edits", bad.body)
		if code != bad.status || !strings.Contains(jsonOf(body), bad.says) {
			t.Errorf("%s: %d %v; want %d saying %s", bad.name, code, body, bad.status, bad.says)
		}
		if !bytes.Equal(before, s.dump()) {
			t.Errorf("%s: the refused list changed the store", bad.name)
		}
	}
	code, body, _ = s.do("POST", "/candidates/"+id+"/edits", good)
	if code != 200 || body["Staged"] != float64(4) {
		t.Fatalf("stage four edits: %d %v", code, body)
	}
	if ids := body["ObjectIds"].([]any); len(ids) != 4 || ids[0] == "" || ids[3] != ntpID {
		t.Errorf("ObjectIds %v; want the new VLANs' and the deleted server's", ids)
	}
	_, info, _ := s.do("GET", "/candidates/"+id, ``)
	if info["Edits"] != float64(4) {
		t.Errorf("candidate has %v edits; want 4", info["Edits"])
	}
	if code, body, _ := s.do("POST", "/candidates/"+id+"/commit", `{}`); code != 200 {
		t.Fatalf("commit: %d %v", code, body)
	}
	_, vlan, _ := s.do("GET", "/config/Vlan?VlanId=10", ``)
	if got := jsonOf(vlan["Object"].(map[string]any)["UntagIntfList"]); got != `["fpPort2"]` {
		t.Errorf("Vlan 10 UntagIntfList %s after the commit", got)
	}
	if code, _, _ := s.do("GET", "/config/NtpServer/"+ntpID, ``); code != 404 {
		t.Errorf("the deleted NtpServer answers %d", code)
	}
}

// Each edit of a list needs what it would need staged alone: an operator
// may stage NtpServers but not a User, and a list with a User in it
// stages nothing.
func TestStageManyNeedsEachEditsAccess(t *testing.T) {
	h := newAPIHarness(t)
	as := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/public/v1/"+path, strings.NewReader(body))
		r = r.WithContext(auth.NewContext(r.Context(), auth.Identity{Name: "op", Group: "operator", Role: auth.Operator}))
		w := httptest.NewRecorder()
		h.h.ServeHTTP(w, r)
		return w
	}
	stage := func(id, body string) *httptest.ResponseRecorder { return as("candidates/"+id+"/edits", body) }
	s := &txnServer{t: t, url: h.base, client: h.client, st: h.st, eng: h.eng}
	var body map[string]any
	if err := json.Unmarshal(as("candidates", `{}`).Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	id := body["CandidateId"].(string)
	before := s.dump()
	w := stage(id, `{"Edits":[{"Method":"POST","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.5"}},{"Method":"POST","Path":"config/User","Body":{"Name":"eve","Group":"admin","Password":"Secret-pass-123"}}]}`)
	if w.Code != 403 || !strings.Contains(w.Body.String(), "Edits[1]") {
		t.Fatalf("an operator staging a User in a list: %d %s; want 403 naming Edits[1]", w.Code, w.Body)
	}
	if !bytes.Equal(before, s.dump()) {
		t.Fatal("the refused list changed the store")
	}
	if w := stage(id, `{"Edits":[{"Method":"POST","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.5"}}]}`); w.Code != 200 {
		t.Fatalf("an operator staging an NtpServer: %d %s", w.Code, w.Body)
	}
}
