package obs

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
)

// RPC is what the access line of one gRPC call (a gNMI RPC) says. Never a
// credential, a path or a value: a count of paths, not the paths.
type RPC struct {
	End     time.Time
	Latency time.Duration
	// User is the authenticated user; "": not authenticated, not shown.
	User   string
	Source net.Addr // the peer
	// Method is the RPC's name without its service (Get, Set,
	// Capabilities, Subscribe).
	Method string
	Code   codes.Code
	// Paths is the number of paths a Get reads or a Set writes (deletes,
	// replaces and updates); negative: not shown.
	Paths int
	// Mode is a Subscribe's mode (stream, once, poll); "": not shown, nor
	// Notifications, the notifications sent to it.
	Mode          string
	Notifications int64
}

// WriteRPC writes r's access line (message gnmi), in the form and with
// the quoting of the request lines.
func (a *AccessLog) WriteRPC(ctx context.Context, r *RPC) { a.write(ctx, nil, r) }

// slowRPC writes r through slog.
func (a *AccessLog) slowRPC(ctx context.Context, r *RPC) {
	rec := slog.NewRecord(r.End, slog.LevelInfo, "gnmi", 0)
	if r.User != "" {
		rec.AddAttrs(slog.String("user", r.User))
	}
	rec.AddAttrs(
		slog.String("source", sourceText(r.Source)),
		slog.String("method", r.Method),
		slog.String("code", r.Code.String()),
	)
	if r.Paths >= 0 {
		rec.AddAttrs(slog.Int("paths", r.Paths))
	}
	if r.Mode != "" {
		rec.AddAttrs(slog.String("mode", r.Mode), slog.Int64("notifications", r.Notifications))
	}
	rec.AddAttrs(slog.Float64("latency_ms", latencyMillis(r.Latency)))
	_ = a.slow.Handler().Handle(ctx, rec)
}

// appendRPC appends r as slog would write it, or false (as appendLine).
func (a *AccessLog) appendRPC(b []byte, r *RPC) ([]byte, bool) {
	b, ok := a.appendHead(b, r.End, r.Latency, "gnmi")
	if !ok {
		return b, false
	}
	if r.User != "" {
		if b, ok = a.appendString(b, "user", r.User); !ok {
			return b, false
		}
	}
	if b, ok = a.appendSource(b, r.Source); !ok {
		return b, false
	}
	for _, kv := range [...]struct{ k, v string }{{"method", r.Method}, {"code", r.Code.String()}} {
		if b, ok = a.appendString(b, kv.k, kv.v); !ok {
			return b, false
		}
	}
	if r.Paths >= 0 {
		b = a.appendKey(b, "paths")
		b = strconv.AppendInt(b, int64(r.Paths), 10)
	}
	if r.Mode != "" {
		if b, ok = a.appendString(b, "mode", r.Mode); !ok {
			return b, false
		}
		b = a.appendKey(b, "notifications")
		b = strconv.AppendInt(b, r.Notifications, 10)
	}
	b = a.appendKey(b, "latency_ms")
	b = appendMillis(b, r.Latency.Microseconds())
	if a.json {
		b = append(b, '}')
	}
	return append(b, '\n'), true
}

// appendSource appends the peer's address (host:port) if both handlers
// write it as it is. A TCP peer's is formatted in place (its String
// would be a string made for every RPC).
func (a *AccessLog) appendSource(b []byte, addr net.Addr) ([]byte, bool) {
	t, ok := addr.(*net.TCPAddr)
	if !ok {
		return a.appendString(b, "source", sourceText(addr))
	}
	ap := tcpAddrPort(t)
	if !ap.Addr().IsValid() {
		return b, false
	}
	b = a.appendKey(b, "source")
	if a.json {
		b = append(b, '"')
	}
	n := len(b)
	b = ap.AppendTo(b)
	for _, c := range b[n:] {
		if !plainByte[c] {
			return b, false
		}
	}
	if a.json {
		b = append(b, '"')
	}
	return b, true
}

// tcpAddrPort is t as net.TCPAddr.String writes it: an IPv4-mapped
// address as IPv4.
func tcpAddrPort(t *net.TCPAddr) netip.AddrPort {
	ap := t.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

func sourceText(addr net.Addr) string {
	switch t := addr.(type) {
	case nil:
		return ""
	case *net.TCPAddr:
		return tcpAddrPort(t).String()
	}
	return addr.String()
}
