package obs_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	for _, want := range []string{"class=config_list,code=200,method=GET", "class=state,code=200,method=GET", "class=config_id,code=404,method=GET"} {
		if !got[want] {
			t.Errorf("no series %s; have %v", want, got)
		}
	}
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
// access log (JSON, to a discarding writer at info) and the metrics on,
// against both off. Compare the two ns/op:
//
//	go test -run '^$' -bench GetByID -count 5 ./internal/obs/
func BenchmarkGetByID(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		var outer func(http.Handler) http.Handler
		if on {
			name = "on"
			m := obs.NewMetrics()
			log := slog.New(slog.NewJSONHandler(io.Discard, nil))
			outer = func(h http.Handler) http.Handler { return obs.Wrap(h, obs.HandlerOptions{Log: log, Metrics: m}) }
		}
		b.Run(name, func(b *testing.B) {
			s, err := testserver.Start("", testserver.Options{Outer: outer})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			_ = ctx
			resp, err := http.Get(s.URL + "/public/v1/config/Port?IntfRef=fpPort1")
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			i := strings.Index(string(body), `"ObjectId":"`)
			id := string(body[i+12 : i+48])
			url := s.URL + "/public/v1/config/Port/" + id
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			b.ResetTimer()
			for b.Loop() {
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
		})
	}
}
