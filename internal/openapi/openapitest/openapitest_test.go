package openapitest

import (
	"net/http"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

func TestTheDocumentLoads(t *testing.T) {
	v, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if !v.Doc().IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", v.Doc().OpenAPI)
	}
	for _, k := range model.Builtin().Kinds() {
		if v.Doc().Components.Schemas[k.Name] == nil {
			t.Errorf("no schema for %s", k.Name)
		}
	}
}

func TestTemplate(t *testing.T) {
	v, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/public/v1/config/port", "/public/v1/config/Port"},
		{"/public/v1//config/Ports/", "/public/v1/config/Ports"},
		{"/public/v1/config/NtpServer/0f0e", "/public/v1/config/NtpServer/{ObjectId}"},
		{"/public/v1/state/Port", "/public/v1/state/Port"},
		{"/public/v1/state/ConfigLogs", "/public/v1/state/ConfigLogs"},
		{"/public/v1/action/saveconfig", "/public/v1/action/SaveConfig"},
		{"/public/v1/candidates/abc/config/Ports", "/public/v1/candidates/{CandidateId}/config/Ports"},
		{"/public/v1/candidates/abc/commit", "/public/v1/candidates/{CandidateId}/commit"},
		{"/public/v1/revisions/7/confirm", "/public/v1/revisions/{Revision}/confirm"},
		{"/public/v1/revisions/7/cancel", "/public/v1/revisions/{Revision}/cancel"},
		{"/public/v1/revisions/7/diff/9", "/public/v1/revisions/{Revision}/diff/{To}"},
		{"/healthz", "/healthz"},
		{"/public/v1/config/NoSuchKind", ""},
		{"/elsewhere", ""},
	} {
		got, ok := v.Template(tc.path)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Template(%q) = %q, %v; want %q", tc.path, got, ok, tc.want)
		}
	}
}

// The validator fails what the document does not allow, so the suites that
// use it can catch a drift.
func TestCheckRefusesWhatTheDocumentDoesNotSay(t *testing.T) {
	v, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	jsonHdr := http.Header{"Content-Type": {"application/json; charset=UTF-8"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
		ok                 bool
	}{
		{"an error body", "GET", "/public/v1/config/NoSuchKind", 404, `{"Result":"Error: x","Error":{"Status":404,"Code":"unknown_kind","Message":"x"}}`, true},
		{"an unknown error code", "GET", "/public/v1/config/NoSuchKind", 404, `{"Result":"Error: x","Error":{"Status":404,"Code":"nope","Message":"x"}}`, false},
		{"a success on an unknown path", "GET", "/public/v1/config/NoSuchKind", 200, `{}`, false},
		{"an undocumented status", "POST", "/public/v1/candidates", 202, `{"Result":"Success","CandidateId":"a","BaseRevision":1}`, false},
		{"a candidate", "POST", "/public/v1/candidates", 201, `{"Result":"Success","CandidateId":"a","BaseRevision":1}`, true},
		{"an unknown field", "POST", "/public/v1/candidates", 201, `{"Result":"Success","CandidateId":"a","BaseRevision":1,"Extra":1}`, false},
		{"a wrong type", "POST", "/public/v1/candidates", 201, `{"Result":"Success","CandidateId":"a","BaseRevision":"1"}`, false},
		{"a missing field", "GET", "/public/v1/candidates", 200, `{}`, false},
		{"not JSON", "GET", "/public/v1/candidates", 200, `{`, false},
		{"a secret read back", "GET", "/public/v1/config/Users", 200, `{"CurrentMarker":0,"NextMarker":0,"MoreExist":false,"ObjCount":1,"Objects":[{"ObjectId":"9b2f6c1e-1111-4222-8333-944455556666","Object":{"Name":"a","Group":"admin","Password":"x"}}]}`, false},
	} {
		err := v.Check(tc.method, tc.path, tc.status, jsonHdr, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
