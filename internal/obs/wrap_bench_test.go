package obs_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/swmgr/swmgr/internal/obs"
)

// BenchmarkWrapOverhead is the cost of the access log (JSON, discarded) and
// the request metrics alone, around a handler that does nothing: what
// BenchmarkGetByID's ratio is made of, without a server's noise.
func BenchmarkWrapOverhead(b *testing.B) {
	m := obs.NewMetrics()
	log := obs.NewAccessLog(io.Discard, "json", slog.LevelInfo)
	h := obs.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }), obs.HandlerOptions{Access: log, Metrics: m})
	r := httptest.NewRequest("GET", "/public/v1/config/Port/0a0b0c0d-0000-0000-0000-000000000000", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
