package auth

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Realm is the realm of the WWW-Authenticate challenge.
const Realm = "swmgr"

// Options configure Handler.
type Options struct {
	Verifier *Verifier
	Throttle *Throttle // shared by every listener
	// Anonymous accepts requests without credentials as the local admin
	// (Local). Only for plain HTTP on a loopback address; credentials,
	// when sent, are still checked and used.
	Anonymous bool
	Log       *slog.Logger
	// Refused, if set, is told of each request refused with 403; the
	// request carries the user's identity. The config log records them.
	Refused func(r *http.Request, err error)
}

// Handler returns next behind authentication and role checks. A request
// without usable credentials gets 401 with a Basic challenge; a user name
// locked out for the client's address gets 429 with Retry-After; a user
// whose role may not make the request gets 403. OPTIONS (a CORS preflight,
// which browsers send without credentials) goes through as is.
func Handler(next http.Handler, opts Options) http.Handler {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &handler{next: next, opts: opts}
}

type handler struct {
	next http.Handler
	opts Options
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		h.next.ServeHTTP(w, r)
		return
	}
	name, password, ok := r.BasicAuth()
	if !ok {
		if h.opts.Anonymous && r.Header.Get("Authorization") == "" {
			// The local admin: a request with no identity in its context.
			// Attaching Local() would copy the request on the hottest path
			// for nothing: every consumer treats no identity the same way.
			h.next.ServeHTTP(w, r)
			return
		}
		h.fail(w, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "",
			"authentication required: send the HTTP Basic credentials of a User"))
		return
	}
	addr := clientAddr(r.RemoteAddr)
	if wait := h.opts.Throttle.Wait(name, addr); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		h.opts.Log.Warn("login refused: too many failures", "user", name, "addr", addr.String(), "retry_after_s", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		h.fail(w, apierr.New(http.StatusTooManyRequests, apierr.CodeTooManyAttempts, "", "",
			"too many failed logins for %q from %s; try again in %d s", name, addr, secs))
		return
	}
	id, ok, err := h.opts.Verifier.Verify(r.Context(), name, password)
	if err != nil {
		h.opts.Log.Error("cannot check credentials", "user", name, "addr", addr.String(), "err", err)
		h.fail(w, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "",
			"the switch's accounts cannot be read; try again later"))
		return
	}
	if !ok {
		lock := h.opts.Throttle.Failed(name, addr)
		h.opts.Log.Warn("login failed", "user", name, "addr", addr.String(), "method", r.Method, "path", r.URL.Path, "locked_for", lock.String())
		h.fail(w, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "wrong user name or password"))
		return
	}
	h.opts.Throttle.Succeeded(name, addr)
	if need := Required(r.Method, r.URL.Path); !id.Role.May(need) {
		h.opts.Log.Warn("request forbidden", "user", name, "group", id.Group, "addr", addr.String(), "method", r.Method, "path", r.URL.Path)
		e := apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "",
			"user %s (group %s: %s) may not %s %s; that needs %s", name, id.Group, id.Role, r.Method, r.URL.Path, need)
		if h.opts.Refused != nil {
			h.opts.Refused(r.WithContext(NewContext(r.Context(), id)), e)
		}
		h.fail(w, e)
		return
	}
	h.next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id)))
}

func (h *handler) fail(w http.ResponseWriter, e *apierr.Error) {
	hdr := w.Header()
	if e.Status == http.StatusUnauthorized {
		hdr.Set("WWW-Authenticate", `Basic realm="`+Realm+`"`)
	}
	body := e.Body()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Content-Type", "application/json; charset=UTF-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	w.Write(body)
}

// clientAddr is the IP address of a request's peer.
func clientAddr(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		a, _ := netip.ParseAddr(remote)
		return a.Unmap()
	}
	return ap.Addr().Unmap()
}

// Loopback reports whether a listen address is on a loopback address only
// (127.0.0.0/8, ::1 or localhost); an address on every interface is not.
func Loopback(listen string) bool {
	host := listen
	if h, _, err := net.SplitHostPort(listen); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
