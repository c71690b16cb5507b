package obs

import (
	"bufio"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// HandlerOptions configure Wrap.
type HandlerOptions struct {
	// Access writes one line per request (at info level); nil: Log does.
	Access *AccessLog
	// Log receives one line per request at info level, when Access is nil;
	// both nil: no access log.
	Log     *slog.Logger
	Metrics *Metrics // nil: no request metrics
}

// Wrap returns next with the access log and request metrics around it. It
// goes outside authentication, so that refused requests are seen too.
func Wrap(next http.Handler, opts HandlerOptions) http.Handler {
	if opts.Access == nil && opts.Log == nil && opts.Metrics == nil {
		return next
	}
	return &handler{next: next, opts: opts}
}

type handler struct {
	next http.Handler
	opts HandlerOptions
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	note := &rec.n
	h.next.ServeHTTP(rec, r)
	end := time.Now()
	took := end.Sub(start)
	status, bytes := rec.status, rec.bytes+note.Sent
	if status == 0 {
		status = http.StatusOK
	}
	class := note.Class
	if class == "" {
		class = RouteClass(r.URL.Path)
	}
	revision := note.Revision
	if m := h.opts.Metrics; m != nil {
		m.request(class, r.Method, status, took, bytes)
		if status == http.StatusUnauthorized && r.Header.Get("Authorization") != "" {
			m.loginFailures.Inc()
		}
	}
	if a := h.opts.Access; a != nil {
		// Never the query string, the headers or the body: they may hold
		// a secret (credentials go in headers; a misused query, in the URL).
		a.write(r.Context(), &accessLine{end: end, user: userOf(r), source: r.RemoteAddr, method: r.Method, route: class, path: r.URL.Path,
			status: status, bytes: bytes, latency: took, revision: revision}, nil)
		return
	}
	if h.opts.Log != nil && h.opts.Log.Enabled(r.Context(), slog.LevelInfo) {
		// The record goes to the handler directly: Logger.LogAttrs would
		// also take the caller's program counter (a stack walk) for a
		// source that the access line never shows, and read the clock
		// again. Never the query string, the headers or the body: they may
		// hold a secret (credentials go in headers; a misused query, in
		// the URL).
		line := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		line.AddAttrs(
			slog.String("user", userOf(r)),
			slog.String("source", r.RemoteAddr),
			slog.String("method", r.Method),
			slog.String("route", class),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Int64("bytes", bytes),
			slog.Float64("latency_ms", latencyMillis(took)),
		)
		if revision != 0 {
			line.AddAttrs(slog.Uint64("revision", revision))
		}
		_ = h.opts.Log.Handler().Handle(r.Context(), line) // a line that cannot be written is not the request's failure
	}
}

// userOf names the caller: the Basic user name (whether or not the
// password was right), "(bearer token)" for the metrics token, or "local"
// for the credential-less loopback admin.
func userOf(r *http.Request) string {
	// The canonical key indexed directly: most requests (the local
	// tools') have none, and Header.Get would check the key's form first.
	if v := r.Header["Authorization"]; len(v) == 0 || v[0] == "" {
		return "local"
	}
	if name, _, ok := r.BasicAuth(); ok {
		return name
	}
	if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		return "(bearer token)" // the metrics token: it names no one
	}
	return "(bad credentials)"
}

// RouteClass maps a path to a class of routes with few members, for
// metrics labels: config, config_list, config_id, state..., action,
// candidates, revisions, events, openapi, webhook (the intent's push
// webhook), api_docs, web_ui, metrics, health, other.
// The REST layer refines config and state (list or one) through the Note.
func RouteClass(path string) string {
	rest, ok := strings.CutPrefix(path, "/public/v1/")
	if !ok {
		switch {
		case path == "/metrics":
			return "metrics"
		case path == "/healthz" || path == "/readyz":
			return "health"
		case strings.HasPrefix(path, "/api-docs"):
			return "api_docs"
		case path == "/" || path == "/ui" || strings.HasPrefix(path, "/ui/"):
			return "web_ui"
		}
		return "other"
	}
	seg, _, _ := strings.Cut(strings.TrimLeft(rest, "/"), "/")
	switch seg {
	case "config", "state", "action", "candidates", "revisions", "events":
		return seg
	case "openapi.json":
		return "openapi"
	case "intent":
		return "webhook"
	}
	return "other"
}

// recorder notes the status and the bytes written.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	n      Note
}

func (r *recorder) note() *Note { return &r.n }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// Flush keeps the change feed streaming through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack passes through, should a handler need it.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("hijack not supported")
}
