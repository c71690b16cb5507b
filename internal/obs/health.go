package obs

import (
	"net/http"
	"sync/atomic"
)

// Health answers /healthz (the process serves requests) and /readyz (the
// backend was reconciled with the store at start, so reads and writes are
// the switch's truth: the same fact SystemStatus.Ready reports). Neither
// needs credentials: supervisors and load balancers probe them.
type Health struct {
	ready atomic.Bool
}

// SetReady marks the service ready.
func (h *Health) SetReady() { h.ready.Store(true) }

// Ready reports whether SetReady was called.
func (h *Health) Ready() bool { return h.ready.Load() }

// Paths served by Health.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, `{"Result":"Error: `+r.Method+` is not allowed; use GET","Error":{"Status":405,"Code":"method_not_allowed","Message":"`+r.Method+` is not allowed; use GET"}}`)
		return
	}
	switch r.URL.Path {
	case HealthzPath:
		writeJSON(w, http.StatusOK, `{"Status":"alive"}`)
	case ReadyzPath:
		if h.Ready() {
			writeJSON(w, http.StatusOK, `{"Ready":true}`)
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, `{"Ready":false}`)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(body + "\n"))
}
