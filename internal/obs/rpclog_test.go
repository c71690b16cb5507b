package obs

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// An RPC's access line is what slog's handlers write for the same fields,
// byte for byte, in both formats: its own formatting where it has one,
// slog's for the rest (an odd user name, a peer that is not TCP).
func TestRPCLineIsSlogs(t *testing.T) {
	v4 := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 51234} // 16 bytes: IPv4-mapped
	base := []RPC{
		{User: "admin", Source: v4, Method: "Get", Code: codes.OK, Paths: 2, Latency: 52 * time.Microsecond},
		{Source: v4, Method: "Get", Code: codes.Unauthenticated, Paths: 1, Latency: time.Millisecond},
		{User: "op", Source: &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 9339}, Method: "Set", Code: codes.PermissionDenied, Paths: 1000, Latency: 2517 * time.Microsecond},
		{User: "admin", Source: &net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, Method: "Subscribe", Code: codes.Canceled, Paths: -1, Mode: "stream", Notifications: 12345, Latency: 3 * time.Hour},
		{User: "admin", Source: v4, Method: "Capabilities", Code: codes.OK, Paths: -1},
		{User: "a b\"c", Source: v4, Method: "Get", Code: codes.OK, Paths: 0},
		{User: "ünïcode", Source: &net.UnixAddr{Name: "@x y", Net: "unix"}, Method: "Get", Code: codes.OK, Paths: 1},
		{User: "admin", Source: nil, Method: "Subscribe", Code: codes.ResourceExhausted, Paths: -1, Mode: "poll"},
		{User: "admin", Source: &net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "a\"b"}, Method: "Get", Code: codes.Code(99), Paths: 1},
		{User: "admin", Source: &net.TCPAddr{}, Method: "Get", Code: codes.OK, Paths: 1},
	}
	fast := 0
	for _, format := range []string{"text", "json"} {
		for i, r := range base {
			r.End = time.Date(2026, 11, 23, 21, 9, 5, i*123456789%1e9, time.UTC)
			var got, want bytes.Buffer
			a := NewAccessLog(&got, format, slog.LevelInfo)
			if _, ok := a.appendRPC(nil, &r); ok {
				fast++
			}
			a.WriteRPC(context.Background(), &r)
			NewAccessLog(&want, format, slog.LevelInfo).slowRPC(context.Background(), &r)
			if got.String() != want.String() {
				t.Errorf("%s line %d:\n got %s\nwant %s", format, i, got.String(), want.String())
			}
			if r.User == "" && strings.Contains(got.String(), "user") {
				t.Errorf("%s line %d: a user without one: %s", format, i, got.String())
			}
		}
	}
	if fast < 2*4 {
		t.Errorf("only %d lines were formatted without slog", fast)
	}
	var buf bytes.Buffer
	NewAccessLog(&buf, "text", slog.LevelWarn).WriteRPC(context.Background(), &base[0])
	if buf.Len() != 0 {
		t.Errorf("written at warn: %s", buf.String())
	}
	// The common line, as an operator reads it.
	a := NewAccessLog(&buf, "text", slog.LevelInfo)
	r := base[0]
	r.End = time.Date(2026, 11, 23, 21, 9, 5, 0, time.UTC)
	a.WriteRPC(context.Background(), &r)
	if want := "time=2026-11-23T21:09:05.000Z level=INFO msg=gnmi user=admin source=127.0.0.1:51234 method=Get code=OK paths=2 latency_ms=0.052\n"; buf.String() != want {
		t.Errorf("got  %swant %s", buf.String(), want)
	}
}

// An RPC's line costs no allocation (the peer's address is formatted in
// place).
func TestRPCLineAllocates(t *testing.T) {
	a := NewAccessLog(discard{}, "json", slog.LevelInfo)
	r := RPC{End: time.Now(), User: "admin", Source: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5555}, Method: "Get", Code: codes.OK, Paths: 1, Latency: time.Millisecond}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { a.WriteRPC(ctx, &r) }); n != 0 {
		t.Errorf("%v allocations a line", n)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
