package auth

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Realm is the realm of the WWW-Authenticate challenge.
const Realm = "swmgr"

// Options configure Handler.
type Options struct {
	Verifier *Verifier
	Throttle *Throttle // shared by every listener
	// Peers, if set, accepts requests without credentials as the local OS
	// user on the other end of the connection. Only for listeners that
	// only this host can reach (plain HTTP on a loopback address, the Unix
	// socket), whose http.Server has Peers.ConnContext as ConnContext.
	// Credentials, when sent, are still checked and used.
	Peers *Peers
	// BodyTimeout is how long a request body may take to arrive, from the
	// end of the headers; 0 means no limit.
	BodyTimeout time.Duration
	Log         *slog.Logger
	// Access says what a request needs of its user, from the route the
	// REST server parsed (api.Server.Access); it may return the request
	// with that route attached, so that it is parsed once. Nil: reads need
	// any user, everything else an admin.
	Access func(r *http.Request) (Need, *http.Request)
	// Refused, if set, is told of each request refused with 403 for its
	// role; the request carries the user's identity. The config log
	// records them.
	Refused func(r *http.Request, err error)
	// RefusalDelay holds a login refused by the throttle (429) or the
	// bound on password checks (503) this long before it is answered
	// (shorter if the client goes away): an attacker's connections then
	// wait instead of coming back at once, so a storm of refused logins
	// costs the CPU a few requests a second per connection rather than
	// thousands, and everyone else keeps being served. Waiting costs no
	// CPU. 0: answered at once.
	RefusalDelay time.Duration
	// Hostname is this host's name (nil: os.Hostname), whose first label
	// a request without credentials may name.
	Hostname func() (string, error)
	// Web, if set, takes the web page's session cookie as a credential
	// beside Basic (WebSessions).
	Web *WebSessions
}

// Handler returns next behind cross-origin protection, authentication and
// role checks:
//
//   - a write that a browser marks as cross-site (Sec-Fetch-Site, or an
//     Origin other than the Host) gets 403, whatever the credentials;
//   - a request without credentials gets 401 with a Basic challenge,
//     unless Peers identifies its sender; one with the web page's session
//     cookie (Options.Web) is its session's user, and must carry the
//     session's CSRF token unless it is a GET or HEAD;
//   - a user name locked out for the client's address gets 429 with
//     Retry-After; 503 with Retry-After when too many password checks are
//     running (Verifier);
//   - a user whose role may not make the request gets 403.
//
// OPTIONS (a CORS preflight, which browsers send without credentials) goes
// through as is. A refused request that has a body is answered with
// Connection: close, so the body is not read (drained) at all.
func Handler(next http.Handler, opts Options) http.Handler {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &handler{next: next, opts: opts, origins: http.NewCrossOriginProtection()}
}

type handler struct {
	next    http.Handler
	opts    Options
	origins *http.CrossOriginProtection
	// hostOK is the last Host that namesThisHost accepted for what the
	// name is (an address, localhost): the same Host again, as every
	// request of a local client sends, is accepted without parsing it.
	hostOK atomic.Pointer[string]
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.origins.Check(r); err != nil {
		h.opts.Log.Warn("cross-origin write refused", "addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path,
			"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		h.fail(w, r, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "",
			"cross-origin request refused: a browser marked this %s as coming from another site (Origin %q, Sec-Fetch-Site %q); writes are accepted only from this server's own origin or from clients that are not browsers",
			r.Method, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")))
		return
	}
	if r.Method == http.MethodOptions {
		h.next.ServeHTTP(w, r)
		return
	}
	name, password, ok := r.BasicAuth()
	if !ok && h.opts.Web != nil && r.Header.Get("Authorization") == "" {
		if _, err := r.Cookie(SessionCookie); err == nil {
			h.serveWeb(w, r)
			return
		}
	}
	if !ok {
		if h.opts.Peers == nil || r.Header.Get("Authorization") != "" {
			h.fail(w, r, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "",
				"authentication required: send the HTTP Basic credentials of a User"))
			return
		}
		if !h.namesThisHost(r) {
			h.opts.Log.Warn("local request refused: foreign Host", "addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "host", r.Host)
			h.fail(w, r, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "",
				"Host %q does not name this switch: a request without credentials must be addressed to an IP address, localhost or the switch's host name (a web page could otherwise reach this port through a name it controls, DNS rebinding); use one of those, or send credentials", r.Host))
			return
		}
		id, err := h.opts.Peers.identity(r.Context())
		if err != nil {
			h.opts.Log.Warn("local request refused", "addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "err", err)
			h.fail(w, r, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "", "%v", err))
			return
		}
		h.authorised(w, r, id, r.RemoteAddr, false) // r's context already answers id (FromContext)
		return
	}
	addr := clientAddr(r.RemoteAddr)
	id, refused := Login(r.Context(), h.opts.Verifier, h.opts.Throttle, h.opts.Log, name, password, addr, r.Method+" "+r.URL.Path)
	if refused != nil {
		h.refuse(w, r, refused)
		return
	}
	h.authorised(w, r, id, addr.String(), true)
}

// refuse answers a login Login refused: late when it says so, with when
// to try again.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, refused *Refusal) {
	if refused.Hold {
		HoldRefusal(r.Context(), h.opts.RefusalDelay)
	}
	if refused.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(refused.RetryAfter/time.Second)))
	}
	h.fail(w, r, refused.Err)
}

// authorised checks the role of an identified request and serves it, with
// id attached to its context if attach.
func (h *handler) authorised(w http.ResponseWriter, r *http.Request, id Identity, addr string, attach bool) {
	need := NeedAdmin
	switch {
	case h.opts.Access != nil:
		need, r = h.opts.Access(r)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		need = NeedRead
	}
	if !id.Role.May(need) {
		h.opts.Log.Warn("request forbidden", "user", id.Name, "group", id.Group, "local", id.Local, "addr", addr, "method", r.Method, "path", r.URL.Path)
		e := apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "",
			"%s may not %s %s; that needs %s", describe(id), r.Method, r.URL.Path, need)
		if h.opts.Refused != nil {
			h.opts.Refused(r.WithContext(NewContext(r.Context(), id)), e)
		}
		h.fail(w, r, e)
		return
	}
	if attach {
		r = r.WithContext(NewContext(r.Context(), id))
	}
	if h.opts.BodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
		r.Body = newDeadlineBody(w, r.Body, h.opts.BodyTimeout)
	}
	h.next.ServeHTTP(w, r)
}

// describe names an identity in an error message.
func describe(id Identity) string {
	switch {
	case id.Local && id.Group == "":
		return fmt.Sprintf("local user %s (not a swmgr User: %s)", id.Name, id.Role)
	case id.Local:
		return fmt.Sprintf("local user %s (User of group %s: %s)", id.Name, id.Group, id.Role)
	}
	return fmt.Sprintf("user %s (group %s: %s)", id.Name, id.Group, id.Role)
}

// deadlineBody puts a read deadline on the connection while a request body
// is read, and lifts it at the end of the body: a client that trickles its
// body is cut off, and one that sent it whole is not disturbed later (the
// server's read of the next request has deadlines of its own).
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	started bool
	timeout time.Duration
	done    bool
}

func newDeadlineBody(w http.ResponseWriter, body io.ReadCloser, timeout time.Duration) *deadlineBody {
	return &deadlineBody{ReadCloser: body, rc: http.NewResponseController(w), timeout: timeout}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	if !b.started {
		b.started = true
		b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	hdr := w.Header()
	if r.ContentLength != 0 {
		// The body is not wanted: close rather than read what may be a
		// large or trickled body to keep the connection.
		hdr.Set("Connection", "close")
	}
	if e.Status == http.StatusUnauthorized && !fromPage(r) {
		hdr.Set("WWW-Authenticate", `Basic realm="`+Realm+`"`)
	}
	body := e.Body()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Content-Type", "application/json; charset=UTF-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(e.Status)
	w.Write(append(body, '\n')) // JSON bodies end their line, as the API's do
}

// namesThisHost reports whether the Host of a request that came without
// credentials over loopback TCP names this host: an IP address, localhost
// (or a name under .localhost), or the host name's first label. Not the
// whole name: an operator may set the switch's host name (SystemParam
// Hostname, which the Linux backend gives the host) to a dotted name of a
// DNS zone anyone controls, which would let that zone's pages in. A single
// label is not resolved by anyone else's zone. A web page that made a
// browser reach the loopback port through a DNS name it controls (DNS
// rebinding) is same-origin for the browser, so cross-origin protection
// does not see it; its Host is that foreign name. A Unix socket is out of
// a browser's reach, so any Host goes there (curl --unix-socket sends its
// URL's).
func (h *handler) namesThisHost(r *http.Request) bool {
	if ok := h.hostOK.Load(); ok != nil && *ok == r.Host {
		return true
	}
	if _, unix := r.Context().Value(http.LocalAddrContextKey).(*net.UnixAddr); unix {
		return true // for the socket, not for the name: not remembered
	}
	if host := r.Host; hostNamesAnyHost(host) {
		h.hostOK.Store(&host)
		return true
	}
	hostname := h.opts.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	name, err := hostname()
	if err != nil {
		return false
	}
	short, _, _ := strings.Cut(strings.ToLower(name), ".")
	return short != "" && normalHost(r.Host) == short // not remembered: the host name may change
}

// normalHost is a Host header's host, lower case, without its port and a
// final dot.
func normalHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// hostNamesAnyHost reports whether a Host header names this host whatever
// its name: an IP address (which cannot be rebound), localhost or a name
// under .localhost (browsers resolve these to loopback themselves), or no
// Host at all (no browser).
func hostNamesAnyHost(hostHeader string) bool {
	host := normalHost(hostHeader)
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || host == "" {
		return true
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// RequestAddr is the IP address of a request's peer (the zero Addr over
// a Unix socket): what the throttle counts a client by.
func RequestAddr(r *http.Request) netip.Addr { return clientAddr(r.RemoteAddr) }

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
