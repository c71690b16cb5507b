package obs

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// AccessLog writes the access lines, one per request at info level, in the
// text or JSON form of log/slog's handlers (the form of the service's own
// log), byte for byte what a slog.TextHandler or slog.JSONHandler with
// only a Level option writes. It formats the line itself, without slog's
// Record, attribute and quoting machinery: a line costs a few hundred
// nanoseconds instead of microseconds, on every request. A line with a
// value that slog would quote or escape (a strange path or user name) goes
// through slog itself.
type AccessLog struct {
	mu  sync.Mutex // one line per Write, as slog's handlers
	out io.Writer
	// whole: out keeps each Write whole by itself (a LineBuffer), so
	// the line needs no lock of its own.
	whole bool
	json  bool
	on    bool         // info is enabled
	slow  *slog.Logger // the same lines through slog
	bufs  sync.Pool
	// stamp is the text form of the last second a line was written in:
	// lines of the same second copy it and add their milliseconds.
	stamp atomic.Pointer[secondStamp]
}

// secondStamp is a second as the text format writes it, split around the
// milliseconds: "2026-11-23T21:09:05." and "Z" (or "+05:45").
type secondStamp struct {
	sec        int64
	loc        *time.Location
	head, zone string
}

// NewAccessLog writes access lines to out in format ("text" or "json") when
// level lets info lines through.
func NewAccessLog(out io.Writer, format string, level slog.Level) *AccessLog {
	opts := &slog.HandlerOptions{Level: level}
	_, whole := out.(bufferedLines)
	a := &AccessLog{out: out, whole: whole, json: format == "json", on: level <= slog.LevelInfo}
	if a.json {
		a.slow = slog.New(slog.NewJSONHandler(out, opts))
	} else {
		a.slow = slog.New(slog.NewTextHandler(out, opts))
	}
	a.bufs.New = func() any { b := make([]byte, 0, 512); return &b }
	return a
}

// accessLine is what one access line says.
type accessLine struct {
	end                               time.Time
	user, source, method, route, path string
	status                            int
	bytes                             int64
	latency                           time.Duration
	revision                          uint64 // 0: not shown
}

// write writes one access line: a request's (l) or, when l is nil, an
// RPC's (r). It is formatted in a pooled buffer, or written through slog
// when a value is one slog would quote or escape. The two kinds of line
// are two pointers and direct calls, not an interface or a function value:
// the compiler cannot see through those, and the line they are given would
// then be made on the heap, an allocation per request.
func (a *AccessLog) write(ctx context.Context, l *accessLine, r *RPC) {
	if !a.on {
		return
	}
	bp := a.bufs.Get().(*[]byte)
	var line []byte
	var ok bool
	if l != nil {
		line, ok = a.appendLine((*bp)[:0], l)
	} else {
		line, ok = a.appendRPC((*bp)[:0], r)
	}
	switch {
	case ok:
		a.emit(line)
	case l != nil:
		a.slowLine(ctx, l)
	default:
		a.slowRPC(ctx, r)
	}
	*bp = line[:0]
	a.bufs.Put(bp)
}

// emit writes one formatted line.
func (a *AccessLog) emit(line []byte) {
	if a.whole {
		a.out.Write(line) // a line that cannot be written is not the request's failure
		return
	}
	a.mu.Lock()
	a.out.Write(line)
	a.mu.Unlock()
}

// slowLine writes l through slog.
func (a *AccessLog) slowLine(ctx context.Context, l *accessLine) {
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("user", l.user),
		slog.String("source", l.source),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.String("path", l.path),
		slog.Int("status", l.status),
		slog.Int64("bytes", l.bytes),
		slog.Float64("latency_ms", latencyMillis(l.latency)),
	)
	if l.revision != 0 {
		r.AddAttrs(slog.Uint64("revision", l.revision))
	}
	_ = a.slow.Handler().Handle(ctx, r)
}

// appendLine appends l as slog would write it; false if a value is one
// that slog would quote or escape, or a time or number it would write in
// another form than the common one.
func (a *AccessLog) appendLine(b []byte, l *accessLine) ([]byte, bool) {
	b, ok := a.appendHead(b, l.end, l.latency, "request")
	if !ok {
		return b, false
	}
	for _, kv := range [...]struct{ k, v string }{{"user", l.user}, {"source", l.source}, {"method", l.method}, {"route", l.route}, {"path", l.path}} {
		if b, ok = a.appendString(b, kv.k, kv.v); !ok {
			return b, false
		}
	}
	b = a.appendKey(b, "status")
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = a.appendKey(b, "bytes")
	b = strconv.AppendInt(b, l.bytes, 10)
	b = a.appendKey(b, "latency_ms")
	b = appendMillis(b, l.latency.Microseconds())
	if l.revision != 0 {
		b = a.appendKey(b, "revision")
		b = strconv.AppendUint(b, l.revision, 10)
	}
	if a.json {
		b = append(b, '}')
	}
	return append(b, '\n'), true
}

// appendHead appends the time, level and msg of a line ending at end after
// latency; false if slog would write the time or the latency in another
// form than the common one.
func (a *AccessLog) appendHead(b []byte, end time.Time, latency time.Duration, msg string) ([]byte, bool) {
	t := end.Round(0)
	if y := t.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	if us := latency.Microseconds(); us < 0 || us >= maxPlainMicros {
		return b, false
	}
	if a.json {
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"`...)
		b = append(b, msg...)
		return append(b, '"'), true
	}
	b = append(b, "time="...)
	b = a.appendStamp(b, t)
	b = append(b, " level=INFO msg="...)
	return append(b, msg...), true
}

func (a *AccessLog) appendKey(b []byte, k string) []byte {
	if a.json {
		b = append(b, ',', '"')
		b = append(b, k...)
		return append(b, '"', ':')
	}
	b = append(b, ' ')
	b = append(b, k...)
	return append(b, '=')
}

// appendString appends key and value if the value is written as it is by
// both handlers (no quoting in text, no escaping in JSON).
func (a *AccessLog) appendString(b []byte, k, v string) ([]byte, bool) {
	if v == "" { // text quotes it
		return b, false
	}
	for i := 0; i < len(v); i++ {
		if !plainByte[v[i]] {
			return b, false
		}
	}
	b = a.appendKey(b, k)
	if a.json {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), true
	}
	return append(b, v...), true
}

// plainByte are the bytes that neither slog handler quotes or escapes
// (fewer than that: a value with any other goes through slog).
var plainByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "-._~:/[]@+,%!*()$;'|^`{}?#" {
		t[c] = true
	}
	return t
}()

// appendStamp is appendRFC3339Millis, from the second's text when the last
// line was written in the same second (most are: one time format per
// second instead of one per request).
func (a *AccessLog) appendStamp(b []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	st := a.stamp.Load()
	if st == nil || st.sec != sec || st.loc != loc {
		const fracStart = len("2006-01-02T15:04:05.")
		full := appendRFC3339Millis(nil, t)
		st = &secondStamp{sec: sec, loc: loc, head: string(full[:fracStart]), zone: string(full[fracStart+3:])}
		a.stamp.Store(st)
	}
	ms := t.Nanosecond() / 1e6
	b = append(b, st.head...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, st.zone...)
}

// appendRFC3339Millis appends t as RFC 3339 with exactly three digits of
// fraction, as slog's text handler writes times: the fast RFC3339Nano
// formatter, on t truncated to the millisecond plus 100 µs so that four
// digits are always there, less the fourth.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const fracEnd = len("2006-01-02T15:04:05.000")
	n := len(b)
	b = t.Truncate(time.Millisecond).Add(100*time.Microsecond).AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+fracEnd], b[n+fracEnd+1:]...)
}

// latencyMillis is the latency_ms of an access line: milliseconds to the
// microsecond.
func latencyMillis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// maxPlainMicros bounds the latencies appendMillis writes: from 10^6 ms
// on, slog's text handler (strconv's shortest 'g') switches to an exponent.
const maxPlainMicros = 1e9

// appendMillis appends us microseconds as milliseconds, the bytes slog
// writes for latencyMillis (0 <= us < maxPlainMicros): the integer part,
// then up to three decimals without trailing zeros. Below maxPlainMicros a
// number of microseconds has at most 12 significant digits, so its
// shortest round-trip form ('g' and 'f' with precision -1) is exactly this
// decimal, and never an exponent (the smallest non-zero value, 0.001,
// is above 'g”s 1e-4).
func appendMillis(b []byte, us int64) []byte {
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100))
	if frac%100 != 0 {
		b = append(b, byte('0'+frac/10%10))
		if frac%10 != 0 {
			b = append(b, byte('0'+frac%10))
		}
	}
	return b
}
