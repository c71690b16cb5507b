package aaa

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/model"
)

// Collector is one SyslogCollector as the forwarder needs it.
type Collector struct {
	Name     string // its ServerIpAddr
	Addr     string // host:port
	TCP      bool
	Severity int // the least severe level sent, 0 emerg .. 7 debug
	Facility int
}

// Forwarder sends swmgr's own log lines to the SyslogCollectors as RFC
// 5424 messages: over UDP one message per datagram (RFC 5426), over TCP
// framed by octet counting (RFC 6587 section 3.4.1) on a connection kept
// open and dialled again after an error. Lines wait in a bounded queue; a
// line that finds it full, or that a collector cannot take, is counted as
// dropped: logging never waits for the network. swmgr sends them itself,
// rather than through the system's rsyslog, so that the forwarding works
// the same on every backend and on hosts without rsyslog, and its state
// (sent, dropped, last error) is swmgr's to show.
type Forwarder struct {
	host  string
	queue chan line
	mu    sync.Mutex
	dests map[string]*dest
	on    atomic.Int32 // the least severe level any collector wants, -1 none
	stop  chan struct{}
	done  chan struct{}
}

type line struct {
	sev  int
	t    time.Time
	text string
}

type dest struct {
	c       Collector
	conn    net.Conn
	sent    atomic.Int64
	dropped atomic.Int64
	lastErr atomic.Pointer[string]
}

// NewForwarder starts a forwarder with no collector.
func NewForwarder() *Forwarder {
	host, _ := os.Hostname()
	if host == "" {
		host = "-"
	}
	f := &Forwarder{host: host, queue: make(chan line, 1024), dests: map[string]*dest{}, stop: make(chan struct{}), done: make(chan struct{})}
	f.on.Store(-1)
	go f.run()
	return f
}

// Close stops the forwarder; lines still queued are abandoned.
func (f *Forwarder) Close() {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.dests {
		if d.conn != nil {
			d.conn.Close()
		}
	}
}

// Configure sets the collectors; those kept keep their counters.
func (f *Forwarder) Configure(cs []Collector) {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := map[string]*dest{}
	least := -1
	for _, c := range cs {
		d := f.dests[c.Name]
		if d == nil || d.c != c {
			if d != nil && d.conn != nil {
				d.conn.Close()
			}
			old := d
			d = &dest{c: c}
			if old != nil {
				d.sent.Store(old.sent.Load())
				d.dropped.Store(old.dropped.Load())
			}
		}
		next[c.Name] = d
		least = max(least, c.Severity)
	}
	for name, d := range f.dests {
		if next[name] == nil && d.conn != nil {
			d.conn.Close()
		}
	}
	f.dests = next
	f.on.Store(int32(least))
}

// State is SyslogCollector's state of the collector name.
func (f *Forwarder) State(name string) model.Object {
	f.mu.Lock()
	d := f.dests[name]
	f.mu.Unlock()
	if d == nil {
		return nil
	}
	st := model.Object{"Sent": d.sent.Load(), "Dropped": d.dropped.Load(), "LastError": ""}
	if e := d.lastErr.Load(); e != nil {
		st["LastError"] = *e
	}
	return st
}

// severity is the RFC 5424 severity of a slog level.
func severity(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3
	case l >= slog.LevelWarn:
		return 4
	case l >= slog.LevelInfo:
		return 6
	}
	return 7
}

func (f *Forwarder) wants(l slog.Level) bool { return severity(l) <= int(f.on.Load()) }

func (f *Forwarder) enqueue(l line) {
	select {
	case f.queue <- l:
	default:
		f.mu.Lock()
		for _, d := range f.dests {
			d.dropped.Add(1)
		}
		f.mu.Unlock()
	}
}

func (f *Forwarder) run() {
	defer close(f.done)
	for {
		select {
		case <-f.stop:
			return
		case l := <-f.queue:
			f.mu.Lock()
			dests := make([]*dest, 0, len(f.dests))
			for _, d := range f.dests {
				dests = append(dests, d)
			}
			f.mu.Unlock()
			for _, d := range dests {
				if l.sev <= d.c.Severity {
					f.send(d, l)
				}
			}
		}
	}
}

// format renders an RFC 5424 message: no structured data, the text as MSG.
func (f *Forwarder) format(c Collector, l line) string {
	return fmt.Sprintf("<%d>1 %s %s swmgr %d - - %s", c.Facility*8+l.sev, l.t.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), f.host, os.Getpid(), l.text)
}

func (f *Forwarder) send(d *dest, l line) {
	msg := f.format(d.c, l)
	f.mu.Lock()
	conn := d.conn
	f.mu.Unlock()
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if conn == nil {
			network := "udp"
			if d.c.TCP {
				network = "tcp"
			}
			conn, err = net.DialTimeout(network, d.c.Addr, 2*time.Second)
			if err != nil {
				break
			}
			f.mu.Lock()
			d.conn = conn
			f.mu.Unlock()
		}
		conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if d.c.TCP {
			_, err = conn.Write([]byte(strconv.Itoa(len(msg)) + " " + msg))
		} else {
			_, err = conn.Write([]byte(msg))
		}
		if err == nil {
			d.sent.Add(1)
			return
		}
		conn.Close()
		conn = nil
		f.mu.Lock()
		d.conn = nil
		f.mu.Unlock()
	}
	d.dropped.Add(1)
	e := err.Error()
	d.lastErr.Store(&e)
}

// Handler returns a slog.Handler that hands every record to inner (as
// inner decides) and to the forwarder (as the collectors' Severity
// decides).
func (f *Forwarder) Handler(inner slog.Handler) slog.Handler {
	return &teeHandler{inner: inner, f: f}
}

type teeHandler struct {
	inner  slog.Handler
	f      *Forwarder
	attrs  string // rendered attributes of WithAttrs
	prefix string // group prefix of WithGroup
}

func (h *teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l) || h.f.wants(l)
}

func (h *teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.inner.Enabled(ctx, r.Level) {
		err = h.inner.Handle(ctx, r)
	}
	if h.f.wants(r.Level) {
		var b strings.Builder
		b.WriteString(oneLine(r.Message, false))
		b.WriteString(h.attrs)
		r.Attrs(func(a slog.Attr) bool {
			appendAttr(&b, h.prefix, a)
			return true
		})
		t := r.Time
		if t.IsZero() {
			t = time.Now()
		}
		h.f.enqueue(line{sev: severity(r.Level), t: t, text: b.String()})
	}
	return err
}

func (h *teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		appendAttr(&b, h.prefix, a)
	}
	return &teeHandler{inner: h.inner.WithAttrs(as), f: h.f, attrs: b.String(), prefix: h.prefix}
}

func (h *teeHandler) WithGroup(name string) slog.Handler {
	return &teeHandler{inner: h.inner.WithGroup(name), f: h.f, attrs: h.attrs, prefix: h.prefix + name + "."}
}

func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			appendAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	b.WriteString(" " + prefix + a.Key + "=" + oneLine(v.String(), true))
}

// oneLine is s as it goes into a collector's line: quoted, with escapes,
// when it holds a rune model.TextLine refuses (newline, ESC, U+2028...) or
// is not UTF-8, so that it never ends or forges a line of the collector's
// log; an attribute's value (value) also when it is empty or holds a
// blank, = or ".
func oneLine(s string, value bool) string {
	if value && (s == "" || strings.ContainsAny(s, " =\"")) || strings.ContainsFunc(s, model.IsLineBreaking) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}
