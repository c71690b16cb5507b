package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
)

// BenchmarkGetByIDHandler measures the handler alone (no network) for a GET
// by ObjectId, the hottest read.
func BenchmarkGetByIDHandler(b *testing.B) {
	s := newTxnServer(b)
	resp, err := http.Post(s.url+"/config/NtpServer", "application/json", strings.NewReader(`{"IpAddr":"10.0.0.1"}`))
	if err != nil {
		b.Fatal(err)
	}
	var created struct{ ObjectId string }
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	h := New(Options{Engine: s.eng, History: history.New(s.eng), Candidates: candidates.New(s.eng)})
	req := httptest.NewRequest("GET", "/public/v1/config/NtpServer/"+created.ObjectId, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
