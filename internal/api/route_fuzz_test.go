package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// FuzzRouter: any path either maps to a kind or is a 404, never a panic.
func FuzzRouter(f *testing.F) {
	for _, seed := range []string{"/public/v1/config/NtpServer", "/public/v1/config/ntpservers", "/public/v1/state/configlogs",
		"/public/v1/config/Port/0f8fad5b-d9cb-469f-a165-70867728950e", "/public/v1/config", "/public/v1/", "//public/v1//config//Vrf//",
		"/public/v1/action/Rollback/x", "/public/v1/config/s", "/public/v1/config/NtpServer/a/b/c"} {
		f.Add(seed)
	}
	reg := model.Builtin()
	f.Fuzz(func(t *testing.T, path string) {
		r, err := ParseRoute(reg, path)
		if err != nil {
			if err.Status != 404 {
				t.Fatalf("ParseRoute(%q): status %d, want 404", path, err.Status)
			}
			return
		}
		if r.Kind == nil || len(r.Allowed()) == 0 {
			t.Fatalf("ParseRoute(%q) = %+v", path, r)
		}
	})
}

// FuzzHandler sends arbitrary requests to the whole handler with a real
// store: every answer is JSON (or empty for 204 and HEAD) and never a 5xx.
func FuzzHandler(f *testing.F) {
	for _, seed := range []struct{ method, path, body string }{
		{"POST", "/public/v1/config/NtpServer", `{"IpAddr":"10.0.0.1"}`},
		{"PATCH", "/public/v1/config/Port", `{"IntfRef":"fpPort1","BreakOutMode":"4x10"}`},
		{"DELETE", "/public/v1/config/Vrf?Vrf=red", ``},
		{"GET", "/public/v1/config/Ports?Count=2&CurrentMarker=3", ``},
		{"POST", "/public/v1/candidates", `{"Comment":"x"}`},
		{"POST", "/public/v1/action/Rollback", `{"Revision":1}`},
		{"OPTIONS", "/public/v1/config/Span", ``},
		{"GET", "/public/v1/revisions?Count=1", ``},
	} {
		f.Add(seed.method, seed.path, seed.body)
	}
	s := newTxnServer(f)
	h := New(s.eng, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Fuzz(func(t *testing.T, method, path, body string) {
		switch method {
		case "GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS", "PUT":
		default:
			return
		}
		if strings.Contains(path, "/events") || !strings.HasPrefix(path, "/") {
			return // the change feed streams until the client leaves
		}
		req, err := http.NewRequest(method, "http://swmgr"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 && w.Code != http.StatusNotImplemented {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body.Bytes())
		}
		if w.Code == http.StatusNoContent || method == "HEAD" {
			return
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s %q: %d, body is not JSON: %q", method, path, body, w.Code, w.Body.Bytes())
		}
	})
}
