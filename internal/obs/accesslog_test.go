package obs

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// AccessLog writes what slog's handlers write for the same line, byte for
// byte, in both formats: its own formatting where it has one, slog's for
// the rest.
func TestAccessLogIsSlogs(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("x", -(3*3600 + 30*60)), time.FixedZone("y", 5*3600+45*60)}
	base := []accessLine{
		{user: "local", source: "127.0.0.1:51234", method: "GET", route: "config_id", path: "/public/v1/config/NtpServer/0a0b0c0d-0000-0000-0000-000000000000", status: 200, bytes: 143, latency: 52 * time.Microsecond},
		{user: "admin", source: "[::1]:443", method: "POST", route: "config", path: "/public/v1/config/NtpServer", status: 201, bytes: 262, latency: 2517 * time.Microsecond, revision: 77},
		{user: "(bad credentials)", source: "192.0.2.7:5555", method: "GET", route: "metrics", path: "/metrics", status: 401, bytes: 0, latency: 0},
		{user: "local", source: "127.0.0.1:1", method: "GET", route: "other", path: "/a b=c\"d\\e", status: 404, latency: time.Millisecond},
		{user: "ünïcode", source: "127.0.0.1:1", method: "PATCH", route: "config_id", path: "/public/v1/config/Port/x\u2028y", status: 200, latency: 123456789 * time.Microsecond},
		{user: "", source: "", method: "BREW", route: "other", path: "/<script>&", status: 999, bytes: -1, latency: 999 * time.Nanosecond},
		{user: "bob", source: "127.0.0.1:2", method: "DELETE", route: "config_id", path: "/public/v1/config/User/x", status: 204, latency: 1 << 62, revision: 1 << 60},
		{user: "bob", source: "127.0.0.1:2", method: "GET", route: "config_list", path: "/public/v1/config/Ports?{}|^`'#", status: 200, latency: (maxPlainMicros - 1) * time.Microsecond},
		{user: "bob", source: "127.0.0.1:2", method: "GET", route: "state", path: "/\x00\x7f\t", status: 200, latency: time.Microsecond},
	}
	fast := 0
	for _, format := range []string{"text", "json"} {
		for _, zone := range zones {
			for i, l := range base {
				l.end = time.Date(2026, 11, 23, 21, 9, 5, int(i)*123456789%1e9, zone)
				var got, want bytes.Buffer
				a := NewAccessLog(&got, format, slog.LevelInfo)
				if _, ok := a.appendLine(nil, &l); ok {
					fast++
				}
				a.write(context.Background(), &l, nil)
				ref := NewAccessLog(&want, format, slog.LevelInfo)
				ref.slowLine(context.Background(), &l)
				if got.String() != want.String() {
					t.Errorf("%s line %d:\n got %s\nwant %s", format, i, got.String(), want.String())
				}
			}
		}
	}
	if fast < 2*len(zones)*3 {
		t.Errorf("only %d lines were formatted without slog", fast)
	}
	// Above info, nothing.
	var buf bytes.Buffer
	NewAccessLog(&buf, "text", slog.LevelWarn).write(context.Background(), &base[0], nil)
	if buf.Len() != 0 {
		t.Errorf("written at warn: %s", buf.String())
	}
}

// TestAccessLogStampsEverySecond writes lines through one AccessLog, so
// that its cached second is reused, changed and reused again (a new
// second, a new zone, milliseconds at both ends), and checks each line's
// time against slog's.
func TestAccessLogStampsEverySecond(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("x", -(3*3600 + 30*60)), time.Local}
	var got bytes.Buffer
	a := NewAccessLog(&got, "text", slog.LevelInfo)
	l := accessLine{user: "local", source: "127.0.0.1:1", method: "GET", route: "config_id", path: "/x", status: 200, latency: time.Millisecond}
	base := time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC)
	for i, ns := range []int{0, 999_999_999, 1_000_000_000, 1_000_999_999, 1_001_000_000, 1_999_999_999, 2_000_000_000, 2_000_000_000, 2_500_000_000} {
		for _, zone := range zones {
			l.end = base.Add(time.Duration(ns)).In(zone)
			got.Reset()
			a.write(context.Background(), &l, nil)
			var want bytes.Buffer
			NewAccessLog(&want, "text", slog.LevelInfo).slowLine(context.Background(), &l)
			if got.String() != want.String() {
				t.Errorf("line %d in %s:\n got %s\nwant %s", i, zone, got.String(), want.String())
			}
		}
	}
}

// appendMillis writes what strconv writes for the same milliseconds in the
// forms slog uses (text: shortest 'g'; JSON: shortest 'f'), for every
// latency below a tenth of a second, around each power of ten, and at
// random up to maxPlainMicros.
func TestAppendMillisIsStrconvs(t *testing.T) {
	var us []int64
	for i := int64(0); i < 100_000; i++ {
		us = append(us, i)
	}
	for p := int64(1); p <= maxPlainMicros; p *= 10 {
		for d := int64(-3); d <= 3; d++ {
			if v := p + d; v >= 0 && v < maxPlainMicros {
				us = append(us, v)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		us = append(us, r.Int64N(maxPlainMicros))
	}
	for _, v := range us {
		ms := latencyMillis(time.Duration(v) * time.Microsecond)
		got := string(appendMillis(nil, v))
		if g := strconv.FormatFloat(ms, 'g', -1, 64); got != g {
			t.Fatalf("%d µs: %q, strconv 'g' %q", v, got, g)
		}
		if f := strconv.FormatFloat(ms, 'f', -1, 64); got != f {
			t.Fatalf("%d µs: %q, strconv 'f' %q", v, got, f)
		}
	}
}

// userOf names the caller as the access line shows it, whatever the
// Authorization header holds.
func TestUserOf(t *testing.T) {
	for _, c := range []struct {
		auth []string // nil: no header
		want string
	}{
		{nil, "local"},
		{[]string{""}, "local"},
		{[]string{"Basic YWRtaW46c2VjcmV0"}, "admin"}, // admin:secret
		{[]string{"Basic YWRtaW46"}, "admin"},         // admin with an empty password
		{[]string{"Basic !!!"}, "(bad credentials)"},
		{[]string{"Bearer abc"}, "(bearer token)"}, // the metrics token names no one
		{[]string{"Negotiate abc"}, "(bad credentials)"},
		{[]string{"Basic YWRtaW4="}, "(bad credentials)"}, // no colon
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil)
		if c.auth != nil {
			r.Header["Authorization"] = c.auth
		}
		if got := userOf(r); got != c.want {
			t.Errorf("Authorization %q: %q, want %q", c.auth, got, c.want)
		}
	}
}
