package obs_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/testserver"
)

func TestRouteClass(t *testing.T) {
	for path, want := range map[string]string{
		"/public/v1/config/Port":          "config",
		"/public/v1/state/Ports":          "state",
		"/public/v1/action/SaveConfig":    "action",
		"/public/v1/candidates/x/commit":  "candidates",
		"/public/v1/revisions/3":          "revisions",
		"/public/v1/events":               "events",
		"/public/v1/openapi.json":         "openapi",
		"/public/v1/intent/webhook":       "webhook",
		"/public/v1//config/Port":         "config",
		"/public/v1/nonsense/huge-string": "other",
		"/metrics":                        "metrics",
		"/healthz":                        "health",
		"/readyz":                         "health",
		"/api-docs/index.html":            "api_docs",
		"/favicon.ico":                    "other",
	} {
		if got := obs.RouteClass(path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// The REST layer's Note refines the class (one object by id, a list).
func TestNoteRefinesClass(t *testing.T) {
	m := obs.NewMetrics()
	s, err := testserver.Start("", testserver.Options{Outer: func(h http.Handler) http.Handler {
		return obs.Wrap(h, obs.HandlerOptions{Metrics: m})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"/public/v1/config/Ports", "/public/v1/state/Port?IntfRef=fpPort1", "/public/v1/config/Port/00000000-0000-0000-0000-000000000000"} {
		resp, err := http.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A response with a Content-Length is complete for the client before
	// the wrapper records it, so the series may appear a moment later.
	wants := []string{"class=config_list,code=200,method=GET", "class=state,code=200,method=GET", "class=config_id,code=404,method=GET"}
	var got map[string]bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got = requestSeries(m)
		missing := 0
		for _, want := range wants {
			if !got[want] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range wants {
		if !got[want] {
			t.Errorf("no series %s; have %v", want, got)
		}
	}
}

// requestSeries lists the label sets of the request duration histogram.
func requestSeries(m *obs.Metrics) map[string]bool {
	fams, _ := m.Registry().Gather()
	got := map[string]bool{}
	for _, f := range fams {
		if f.GetName() != "swmgr_http_request_duration_seconds" {
			continue
		}
		for _, mt := range f.GetMetric() {
			var parts []string
			for _, l := range mt.GetLabel() {
				parts = append(parts, l.GetName()+"="+l.GetValue())
			}
			got[strings.Join(parts, ",")] = true
		}
	}
	return got
}

func TestNotify(t *testing.T) {
	if sent, err := obs.Notify("READY=1"); sent || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: %v %v", sent, err)
	}
	for _, name := range []string{filepath.Join(t.TempDir(), "notify"), "@swmgr-obs-test-" + time.Now().Format("150405.000000")} {
		addr := &net.UnixAddr{Name: name, Net: "unixgram"}
		if name[0] == '@' {
			addr.Name = "\x00" + name[1:]
		}
		ln, err := net.ListenUnixgram("unixgram", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NOTIFY_SOCKET", name)
		if sent, err := obs.Notify("READY=1"); !sent || err != nil {
			t.Fatalf("%s: %v %v", name, sent, err)
		}
		buf := make([]byte, 64)
		ln.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := ln.Read(buf)
		if err != nil || string(buf[:n]) != "READY=1" {
			t.Errorf("%s: read %q %v", name, buf[:n], err)
		}
		ln.Close()
	}
	t.Setenv("NOTIFY_SOCKET", "relative/path")
	if _, err := obs.Notify("READY=1"); err == nil {
		t.Error("a relative NOTIFY_SOCKET is accepted")
	}
}

// BenchmarkGetByID compares a GET by ObjectId over loopback HTTP with the
// access log (JSON to a file, at info) and the metrics on,
// against both off. Two servers run side by side and the requests
// alternate between them in small rounds, so that the noise of a shared
// machine falls on both alike; it reports each one's ns/op and
// throughput ratio = off ns/op / on ns/op (1 means no cost):
//
//	go test -run '^$' -bench GetByID -benchtime 20000x -count 5 ./internal/obs/
func BenchmarkGetByID(b *testing.B) {
	m := obs.NewMetrics()
	log := benchAccessLog(b, "json")
	on := startBenchServer(b, func(h http.Handler) http.Handler { return obs.Wrap(h, obs.HandlerOptions{Access: log, Metrics: m}) })
	off := startBenchServer(b, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(url string) {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
	for range 200 { // warm both up
		get(on)
		get(off)
	}
	const round = 20
	var tOn, tOff time.Duration
	n := 0
	b.ResetTimer()
	for n < b.N {
		start := time.Now()
		for range round {
			get(off)
		}
		tOff += time.Since(start)
		start = time.Now()
		for range round {
			get(on)
		}
		tOn += time.Since(start)
		n += round
	}
	b.StopTimer()
	b.ReportMetric(float64(tOff.Nanoseconds())/float64(n), "off-ns/op")
	b.ReportMetric(float64(tOn.Nanoseconds())/float64(n), "on-ns/op")
	b.ReportMetric(float64(tOff)/float64(tOn), "ratio")
}

// startBenchServer runs a stack and returns the URL of fpPort1 by ObjectId.
func startBenchServer(b *testing.B, outer func(http.Handler) http.Handler) string {
	s, err := testserver.Start("", testserver.Options{Outer: outer})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	resp, err := http.Get(s.URL + "/public/v1/config/Port?IntfRef=fpPort1")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	i := strings.Index(string(body), `"ObjectId":"`)
	return s.URL + "/public/v1/config/Port/" + string(body[i+12:i+48])
}

// benchAccessLog is serve's access log for a benchmark: a real file, as
// serve's stderr is when redirected, behind the line buffer serve puts in
// front of it, so that the system calls are counted.
func benchAccessLog(b *testing.B, format string) *obs.AccessLog {
	b.Helper()
	logFile, err := os.Create(filepath.Join(b.TempDir(), "access.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logFile.Close() })
	lines := obs.NewLineBuffer(logFile)
	b.Cleanup(func() { lines.Close() })
	return obs.NewAccessLog(lines.Buffered(), format, slog.LevelInfo)
}
