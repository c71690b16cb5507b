package api

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// PUT in an edit list replaces: one object becomes exactly its body
// (fields left out return to their defaults), a kind's collection becomes
// exactly its list (others deleted, or reset where clients cannot delete
// them); the server computes the edits, and a commit applies them as one
// revision.
func TestStageReplaceOverREST(t *testing.T) {
	s := newTxnServer(t)
	for _, b := range []string{`{"IpAddr":"192.0.2.1","MinPoll":5,"Prefer":true}`, `{"IpAddr":"192.0.2.2"}`, `{"IpAddr":"192.0.2.3"}`} {
		if code, body, _ := s.do("POST", "/config/NtpServer", b); code != 201 {
			t.Fatalf("create %s: %d %v", b, code, body)
		}
	}
	if code, body, _ := s.do("PATCH", "/config/Port", `{"IntfRef":"fpPort5","Mtu":9000,"Description":"old"}`); code != 200 {
		t.Fatalf("patch port: %d %v", code, body)
	}
	open := func() string {
		_, body, _ := s.do("POST", "/candidates", `{}`)
		return body["CandidateId"].(string)
	}
	id := open()
	for _, bad := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"a collection PUT with an object", `{"Edits":[{"Method":"PUT","Path":"config/NtpServers","Body":{"IpAddr":"192.0.2.1"}}]}`, 400, "JSON array"},
		{"an object PUT without its key", `{"Edits":[{"Method":"PUT","Path":"config/NtpServer","Body":{"MinPoll":5}}]}`, 400, "IpAddr is the key"},
		{"a key listed twice", `{"Edits":[{"Method":"PUT","Path":"config/NtpServers","Body":[{"IpAddr":"192.0.2.1"},{"IpAddr":"192.0.2.1"}]}]}`, 400, "listed twice"},
		{"a bad value", `{"Edits":[{"Method":"PUT","Path":"config/NtpServers","Body":[{"IpAddr":"192.0.2.1"},{"IpAddr":"192.0.2.9","MinPoll":3}]}]}`, 400, "Body[1]"},
		{"a query", `{"Edits":[{"Method":"PUT","Path":"config/NtpServer?IpAddr=192.0.2.1","Body":{"IpAddr":"192.0.2.1"}}]}`, 400, "without a query"},
		{"an ObjectId", `{"Edits":[{"Method":"PUT","Path":"config/NtpServer/0190f1e2-0000-7000-8000-000000000000","Body":{"IpAddr":"192.0.2.1"}}]}`, 400, "keys in its body"},
		{"a port that is not there", `{"Edits":[{"Method":"PUT","Path":"config/Port","Body":{"IntfRef":"fpPort99"}}]}`, 404, "not created by clients"},
		{"IfMatch", `{"Edits":[{"Method":"PUT","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.1"},"IfMatch":"\"3\""}]}`, 400, "If-Match"},
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
	// Replace one: MinPoll and Prefer go back to their defaults.
	code, body, _ := s.do("POST", "/candidates/"+id+"/edits", `{"Edits":[{"Method":"PUT","Path":"config/NtpServer","Body":{"IpAddr":"192.0.2.1","MaxPoll":12}}]}`)
	if code != 200 || jsonOf(body["ObjectIds"]) == `[""]` {
		t.Fatalf("PUT one: %d %v", code, body)
	}
	_, diff, _ := s.do("GET", "/candidates/"+id+"/diff", ``)
	if got := jsonOf(diff["Changes"]); strings.Count(got, `"Op":"update"`) != 1 || !strings.Contains(got, `"MinPoll":6`) || !strings.Contains(got, `"Prefer":false`) {
		t.Errorf("diff after PUT one: %s", got)
	}
	// Override: .1 replaced, .4 created, .2 and .3 deleted.
	code, body, _ = s.do("POST", "/candidates/"+id+"/edits", `{"Edits":[{"Method":"PUT","Path":"config/NtpServers","Body":[{"IpAddr":"192.0.2.1","MaxPoll":12},{"IpAddr":"192.0.2.4"}]}]}`)
	if code != 200 {
		t.Fatalf("PUT collection: %d %v", code, body)
	}
	// Ports cannot be deleted: those not listed return to their defaults.
	code, body, _ = s.do("POST", "/candidates/"+id+"/edits", `{"Edits":[{"Method":"PUT","Path":"config/Ports","Body":[{"IntfRef":"fpPort1","Mtu":9100}]}]}`)
	if code != 200 {
		t.Fatalf("PUT ports: %d %v", code, body)
	}
	_, diff, _ = s.do("GET", "/candidates/"+id+"/diff", ``)
	got := jsonOf(diff["Changes"])
	for _, want := range []string{`"Key":"IpAddr=192.0.2.4","Kind":"NtpServer","ObjectId"`, `{"Before":{"IpAddr":"192.0.2.2"`, `{"Before":{"IpAddr":"192.0.2.3"`, `"Key":"IntfRef=fpPort5"`, `"Key":"IntfRef=fpPort1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %s:\n%.2000s", want, got)
		}
	}
	if strings.Contains(got, `"Key":"IntfRef=fpPort2"`) {
		t.Errorf("an unchanged port is in the diff:\n%.2000s", got)
	}
	_, before, _ := s.do("GET", "/revisions?Count=1", ``)
	if code, body, _ := s.do("POST", "/candidates/"+id+"/commit", `{}`); code != 200 {
		t.Fatalf("commit: %d %v", code, body)
	}
	_, after, _ := s.do("GET", "/revisions?Count=1", ``)
	if revOf(after)-revOf(before) != 1 {
		t.Errorf("the replace made %d revisions; want one", revOf(after)-revOf(before))
	}
	_, list, _ := s.do("GET", "/config/NtpServers", ``)
	if got := jsonOf(list["Objects"]); strings.Count(got, `"IpAddr"`) != 2 || !strings.Contains(got, `"MaxPoll":12`) {
		t.Errorf("NtpServers after the commit: %s", got)
	}
	_, port, _ := s.do("GET", "/config/Port?IntfRef=fpPort5", ``)
	if o := port["Object"].(map[string]any); o["Mtu"] != float64(1500) || o["Description"] != "FP Port" || o["MediaType"] != "QSFP+" {
		t.Errorf("fpPort5 after override: %v", o)
	}
	// The same override again changes nothing.
	id = open()
	s.do("POST", "/candidates/"+id+"/edits", `{"Edits":[{"Method":"PUT","Path":"config/NtpServers","Body":[{"IpAddr":"192.0.2.1","MaxPoll":12},{"IpAddr":"192.0.2.4"}]}]}`)
	if _, diff, _ := s.do("GET", "/candidates/"+id+"/diff", ``); jsonOf(diff["Changes"]) != `[]` {
		t.Errorf("a repeated override would change %s", jsonOf(diff["Changes"]))
	}
}

func revOf(body map[string]any) int {
	list, _ := body["Objects"].([]any)
	if len(list) == 0 {
		return 0
	}
	r, _ := list[0].(map[string]any)["Object"].(map[string]any)["Revision"].(float64)
	return int(r)
}

// TestStagedPathOneReading: a PUT element of an edit list reads its Path
// as the other methods do (one parser): the same paths are taken, with the
// API's prefix or without, and the same bad paths are refused with the same
// answer; a query is what a PUT alone refuses.
func TestStagedPathOneReading(t *testing.T) {
	s := newTxnServer(t)
	_, body, _ := s.do("POST", "/candidates", `{}`)
	id := body["CandidateId"].(string)
	stage := func(method, path, body string) (int, string) {
		code, answer, _ := s.do("POST", "/candidates/"+id+"/edits", `{"Edits":[{"Method":"`+method+`","Path":"`+path+`","Body":`+body+`}]}`)
		return code, jsonOf(answer)
	}
	for i, path := range []string{"config/NtpServer", "/config/NtpServer", "/public/v1/config/NtpServer"} {
		for _, method := range []string{"POST", "PUT"} {
			if code, answer := stage(method, path, `{"IpAddr":"192.0.2.`+strconv.Itoa(10+i)+`"}`); code != 200 {
				t.Errorf("%s %s: %d %s", method, path, code, answer)
			}
		}
	}
	for _, bad := range []struct{ path, says string }{
		{"http://example.com/config/NtpServer", "give the path under the candidate"},
		{"//example.com/config/NtpServer", "give the path under the candidate"},
		{"config/NtpServer#x", "give the path under the candidate"},
		{"%zz", "give the path under the candidate"},
		{"state/NtpServer", "a candidate stages config objects"},
		{"NtpServer", "a candidate stages config objects"},
		{"public/v1/config/NtpServer", "a candidate stages config objects"},
		{"config/NoSuchKind", "NoSuchKind"},
	} {
		before := s.dump()
		postCode, post := stage("POST", bad.path, `{"IpAddr":"192.0.2.8"}`)
		putCode, put := stage("PUT", bad.path, `{"IpAddr":"192.0.2.8"}`)
		if postCode != 400 && postCode != 404 || putCode != postCode || put != post || !strings.Contains(put, bad.says) {
			t.Errorf("Path %q: POST %d %s, PUT %d %s; want one 400 or 404 saying %s", bad.path, postCode, post, putCode, put, bad.says)
		}
		if !bytes.Equal(before, s.dump()) {
			t.Errorf("Path %q: the refused edit changed the store", bad.path)
		}
	}
	if code, answer := stage("PUT", "config/NtpServer?IpAddr=192.0.2.7", `{"IpAddr":"192.0.2.7"}`); code != 400 || !strings.Contains(answer, "without a query") {
		t.Errorf("PUT with a query: %d %s", code, answer)
	}
}
