package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// The web page's credential form: a session cookie, and a token every
// request that changes something must send in a header.
const (
	// SessionCookie is the name of the web page's session cookie.
	SessionCookie = "swmgr-session"
	// CSRFHeader is the header that carries a session's CSRF token; a
	// request with the cookie that is not a GET, HEAD or OPTIONS must send
	// it, equal to the token its login answered.
	CSRFHeader = "X-CSRF-Token"
	// DefaultWebSessionTTL is how long a web login lasts, from the login:
	// a working day.
	DefaultWebSessionTTL = 8 * time.Hour
	// DefaultMaxWebSessions is how many web logins the switch keeps at
	// once; a login beyond it ends the one closest to its end.
	DefaultMaxWebSessions = 1024
)

// WebOptions configure WebSessions.
type WebOptions struct {
	Verifier *Verifier
	Throttle *Throttle
	// Sessions, if set, holds every web login as it holds a stream: the
	// login ends (its cookie is refused) as soon as its user's access does
	// (the User deleted or its password set, the central server refusing
	// it), not only at the next request.
	Sessions *Sessions
	TTL      time.Duration // default DefaultWebSessionTTL
	Max      int           // default DefaultMaxWebSessions
	// RefusalDelay holds a refused login as Options.RefusalDelay does.
	RefusalDelay time.Duration
	Log          *slog.Logger
}

// WebSessions are the logins of the web page. A login (Login) checks the
// user name and password exactly as any front door does (Login: central
// AAA then the local accounts, the throttle) and sets a session cookie:
// HttpOnly, SameSite=Strict, Secure on HTTPS, expiring after TTL. Handler
// takes the cookie as a credential beside Basic: every request of the
// session is authenticated again with the credentials of its login (the
// Verifier's cache makes that cheap), so it runs with the user's role of
// the moment and ends when the user's access does. A request that may
// change something must carry the session's CSRF token (CSRFHeader): a
// page of another site cannot read it, so it cannot forge one even where
// a browser would send the cookie. The password of a login is kept in
// memory only, for as long as the login lasts, as a held stream's is
// (Sessions); it is never written or sent anywhere.
type WebSessions struct {
	o       WebOptions
	mu      sync.Mutex
	byToken map[string]*webSession
}

// webSession is one web login.
type webSession struct {
	token    string
	csrf     string
	name     string
	password string
	expires  time.Time
	release  context.CancelFunc // ends its hold in Sessions
}

// NewWebSessions makes WebSessions.
func NewWebSessions(o WebOptions) *WebSessions {
	if o.TTL <= 0 {
		o.TTL = DefaultWebSessionTTL
	}
	if o.Max <= 0 {
		o.Max = DefaultMaxWebSessions
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &WebSessions{o: o, byToken: map[string]*webSession{}}
}

// WebLogin is what a successful web login answers the page: who it is and
// the CSRF token its requests send. Never a secret of the user's.
type WebLogin struct {
	User  string
	Role  string
	CSRF  string
	Until time.Time
}

// Login checks name and password for a web login from r and, when they
// are accepted, starts a session and sets its cookie on w. A refused login
// is answered late (RefusalDelay) when the throttle or the bound on checks
// refused it.
func (ws *WebSessions) Login(w http.ResponseWriter, r *http.Request, name, password string) (WebLogin, *Refusal) {
	addr := clientAddr(r.RemoteAddr)
	id, refused := Login(r.Context(), ws.o.Verifier, ws.o.Throttle, ws.o.Log, name, password, addr, "web login")
	if refused != nil {
		if refused.Hold {
			HoldRefusal(r.Context(), ws.o.RefusalDelay)
		}
		return WebLogin{}, refused
	}
	x := &webSession{token: randomToken(), csrf: randomToken(), name: name, password: password, expires: time.Now().Add(ws.o.TTL)}
	held, release := ws.o.Sessions.Hold(context.Background(), name, password, NeedRead)
	x.release = release
	context.AfterFunc(held, func() {
		if err := Revoked(held); err != nil {
			ws.o.Log.Info("web session ended: its user's access ended", "user", name, "reason", err.Message)
			ws.end(x)
		}
	})
	ws.mu.Lock()
	ws.evictLocked()
	ws.byToken[x.token] = x
	ws.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: x.token, Path: "/", Expires: x.expires,
		MaxAge: int(ws.o.TTL / time.Second), Secure: r.TLS != nil, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	ws.o.Log.Info("web login", "user", name, "addr", addr.String())
	return WebLogin{User: id.Name, Role: id.Role.String(), CSRF: x.csrf, Until: x.expires}, nil
}

// evictLocked drops expired sessions and, when the switch holds Max, the
// one closest to its end.
func (ws *WebSessions) evictLocked() {
	now := time.Now()
	var soonest *webSession
	for _, x := range ws.byToken {
		if now.After(x.expires) {
			ws.dropLocked(x)
			continue
		}
		if soonest == nil || x.expires.Before(soonest.expires) {
			soonest = x
		}
	}
	if len(ws.byToken) >= ws.o.Max && soonest != nil {
		ws.dropLocked(soonest)
	}
}

func (ws *WebSessions) dropLocked(x *webSession) {
	if ws.byToken[x.token] == x {
		delete(ws.byToken, x.token)
	}
	go x.release() // it may run the AfterFunc, which takes ws.mu
}

// end ends x, once.
func (ws *WebSessions) end(x *webSession) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.dropLocked(x)
}

// Len is how many web logins are open.
func (ws *WebSessions) Len() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.byToken)
}

// lookup is the open session r's cookie names, nil if none.
func (ws *WebSessions) lookup(r *http.Request) *webSession {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	x := ws.byToken[c.Value]
	if x != nil && time.Now().After(x.expires) {
		ws.dropLocked(x)
		return nil
	}
	return x
}

// Logout ends the session of r, which must carry its CSRF token, and
// clears its cookie. A request without a session ends nothing and is not
// an error: the page is logged out either way.
func (ws *WebSessions) Logout(w http.ResponseWriter, r *http.Request) *apierr.Error {
	x := ws.lookup(r)
	if x != nil {
		if err := checkCSRF(r, x); err != nil {
			return err
		}
		ws.end(x)
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		Secure: r.TLS != nil, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return nil
}

// Current answers who r's session is (its user authenticated again, as
// every request of the session is), for a page loaded again.
func (ws *WebSessions) Current(r *http.Request) (WebLogin, *Refusal) {
	x := ws.lookup(r)
	if x == nil {
		return WebLogin{}, &Refusal{Err: noSession()}
	}
	id, refused := ws.authenticate(r, x)
	if refused != nil {
		return WebLogin{}, refused
	}
	return WebLogin{User: id.Name, Role: id.Role.String(), CSRF: x.csrf, Until: x.expires}, nil
}

// authenticate checks x's credentials again for a request of it: the
// identity of the moment, or the refusal; a session whose credentials
// are refused is ended.
func (ws *WebSessions) authenticate(r *http.Request, x *webSession) (Identity, *Refusal) {
	id, refused := Login(r.Context(), ws.o.Verifier, ws.o.Throttle, ws.o.Log, x.name, x.password, clientAddr(r.RemoteAddr), r.Method+" "+r.URL.Path)
	if refused != nil && refused.Err.Status == http.StatusUnauthorized {
		ws.end(x)
		refused.Err = apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "",
			"user %s's web session ended: the switch no longer accepts its credentials (the User was deleted or its password set, or the central AAA server refused them); log in again", x.name)
	}
	return id, refused
}

// serveWeb serves a request that carries the session cookie (and no Basic
// credentials): the session's user, its CSRF token on what may change
// something.
func (h *handler) serveWeb(w http.ResponseWriter, r *http.Request) {
	x := h.opts.Web.lookup(r)
	if x == nil {
		h.fail(w, r, noSession())
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := checkCSRF(r, x); err != nil {
			h.opts.Log.Warn("web request refused: CSRF token missing or wrong", "user", x.name, "addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
			h.fail(w, r, err)
			return
		}
	}
	id, refused := h.opts.Web.authenticate(r, x)
	if refused != nil {
		h.refuse(w, r, refused)
		return
	}
	r = r.WithContext(context.WithValue(NewContext(r.Context(), id), webKey{}, x))
	h.authorised(w, r, id, clientAddr(r.RemoteAddr).String(), false)
}

// webKey is the context key of the web session a request came through.
type webKey struct{}

// ViaWeb reports whether a request came through a web session (the page's
// commits are recorded with the source web).
func ViaWeb(ctx context.Context) bool {
	_, ok := ctx.Value(webKey{}).(*webSession)
	return ok
}

// webCredentials are the credentials of the web session of a request's
// context, for a held request (Sessions.HoldRequest).
func webCredentials(ctx context.Context) (name, password string, ok bool) {
	x, ok := ctx.Value(webKey{}).(*webSession)
	if !ok {
		return "", "", false
	}
	return x.name, x.password, true
}

func checkCSRF(r *http.Request, x *webSession) *apierr.Error {
	got := r.Header.Get(CSRFHeader)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(x.csrf)) != 1 {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "",
			"a request of a web session that may change something must send the session's CSRF token in %s", CSRFHeader)
	}
	return nil
}

func noSession() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, apierr.CodeUnauthorized, "", "",
		"no web session: it expired, was ended or never was; log in again")
}

// fromPage reports whether a request came from the web page (its cookie or
// its CSRF header): a 401 then carries no Basic challenge, which would
// make the browser show its own login dialog over the page's.
func fromPage(r *http.Request) bool {
	if r.Header.Get(CSRFHeader) != "" {
		return true
	}
	_, err := r.Cookie(SessionCookie)
	return err == nil
}

// randomToken is 256 random bits, base64url.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
