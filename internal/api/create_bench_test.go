package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// createWriter is the least a handler needs of a ResponseWriter: the
// benchmark measures swmgr's own work per create, not a recorder's.
type createWriter struct {
	h      http.Header
	status int
}

func (w *createWriter) Header() http.Header         { return w.h }
func (w *createWriter) WriteHeader(code int)        { w.status = code }
func (w *createWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkCreateHandler is the server's own cost of a durable create, as
// bench/run.sh (b) sends them, without the network and net/http: 64
// goroutines (b.SetParallelism) each POSTing NtpServers with unique keys to
// the handler, through the engine's group commit into a real store. It
// reports allocs/op, which the machine's load does not move, and
// cpu-us/op, the process's CPU time (user and system) per create, which it
// moves less than ns/op, the wall time of creates that wait for their
// fsyncs (bench/createcpu.sh is the CPU figure with net/http).
func BenchmarkCreateHandler(b *testing.B) {
	s := newAPIHarness(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	cpu0 := processCPU()
	b.ResetTimer()
	defer func() { b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/op") }()
	b.RunParallel(func(pb *testing.PB) {
		var body []byte
		rd := bytes.NewReader(nil)
		for pb.Next() {
			i := n.Add(1)
			body = append(body[:0], `{"IpAddr":"10.`...)
			body = strconv.AppendInt(body, i>>16&255, 10)
			body = append(body, '.')
			body = strconv.AppendInt(body, i>>8&255, 10)
			body = append(body, '.')
			body = strconv.AppendInt(body, i&255, 10)
			body = append(body, `","MinPoll":6,"MaxPoll":10}`...)
			rd.Reset(body)
			req := httptest.NewRequest("POST", "/public/v1/config/NtpServer", io.NopCloser(rd))
			req.ContentLength = int64(len(body))
			w := &createWriter{h: http.Header{}}
			s.h.ServeHTTP(w, req)
			if w.status != http.StatusCreated {
				b.Errorf("create %d: status %d", i, w.status)
				return
			}
		}
	})
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
