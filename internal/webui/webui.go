// Package webui serves swmgr's web page: the front panel, the system's
// state, the commit history with its diffs, rollback and confirmation, and
// the config log, at / and under /ui/. The page is static (HTML, CSS and
// one script written for swmgr, embedded in the binary: no framework, no
// other origin) and is a client of the REST API like any other: it reads
// and writes /public/v1/... and follows the change feed, authenticated by
// a web session (auth.WebSessions), so every request runs with the user's
// role and meets REST's refusals. This package serves the files and the
// session's login, logout and whoami; nothing else.
package webui

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
)

// Prefix is where the page's files and session endpoints are; the page
// itself is also at /.
const Prefix = "/ui/"

// Paths of the session's endpoints.
const (
	LoginPath   = Prefix + "login"   // POST user, password (a form): the session
	LogoutPath  = Prefix + "logout"  // POST, with the CSRF token: ends the session
	SessionPath = Prefix + "session" // GET: the session's user, role and CSRF token
)

//go:embed assets
var assets embed.FS

// Policy is the page's Content-Security-Policy: scripts, styles and
// requests of this origin only, no inline script or style, no frame.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// maxLoginBody bounds a login form.
const maxLoginBody = 4 << 10

// Handler serves the page and its session endpoints; Wants says which
// requests are its.
type Handler struct {
	web     *auth.WebSessions
	files   http.Handler
	index   []byte
	origins *http.CrossOriginProtection
}

// New makes the page's handler over web's sessions.
func New(web *auth.WebSessions) *Handler {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is fixed at build time
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	return &Handler{web: web, files: http.StripPrefix(Prefix[:len(Prefix)-1], http.FileServerFS(files)), index: index, origins: http.NewCrossOriginProtection()}
}

// Wants reports whether a request path is the page's: / or under /ui/.
func Wants(path string) bool {
	return path == "/" || path == Prefix[:len(Prefix)-1] || strings.HasPrefix(path, Prefix)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", Policy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("X-Frame-Options", "DENY")
	switch r.URL.Path {
	case LoginPath:
		h.login(w, r)
		return
	case LogoutPath:
		h.logout(w, r)
		return
	case SessionPath:
		h.session(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		fail(w, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "", "", "%s is not allowed on %s; allowed: GET, HEAD", r.Method, r.URL.Path))
		return
	}
	hdr.Set("Cache-Control", "no-cache")
	switch r.URL.Path {
	case "/", Prefix[:len(Prefix)-1], Prefix, Prefix + "index.html":
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Length", strconv.Itoa(len(h.index)))
		if r.Method == http.MethodGet {
			w.Write(h.index)
		}
		return
	}
	h.files.ServeHTTP(w, r)
}

// login answers a login form: the session (JSON) to the page's script,
// which asks for JSON; a redirect to the page to a form sent without it.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.post(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		fail(w, apierr.New(http.StatusBadRequest, apierr.CodeInvalidValue, "", "", "the login form cannot be read: %v", err))
		return
	}
	name, password := r.PostForm.Get("user"), r.PostForm.Get("password")
	if name == "" || password == "" {
		fail(w, apierr.New(http.StatusBadRequest, apierr.CodeMissingField, "", "", "give a user name and a password"))
		return
	}
	got, refused := h.web.Login(w, r, name, password)
	if !strings.Contains(r.Header.Get("Accept"), "application/json") {
		to := "/"
		if refused != nil {
			to = "/?login=" + strconv.Itoa(refused.Err.Status)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	if refused != nil {
		if refused.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(refused.RetryAfter/time.Second)))
		}
		fail(w, refused.Err)
		return
	}
	answer(w, got)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !h.post(w, r) {
		return
	}
	if err := h.web.Logout(w, r); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		fail(w, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "", "", "%s is not allowed on %s; allowed: GET", r.Method, r.URL.Path))
		return
	}
	got, refused := h.web.Current(r)
	if refused != nil {
		fail(w, refused.Err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	answer(w, got)
}

// post refuses what is not a POST of this origin: a login or logout sent
// by another site's page (whose answer would log the browser in as
// someone else, or out).
func (h *Handler) post(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		fail(w, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "", "", "%s is not allowed on %s; allowed: POST", r.Method, r.URL.Path))
		return false
	}
	if err := h.origins.Check(r); err != nil {
		fail(w, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "", "cross-origin request refused: %s is accepted only from this switch's own page", r.URL.Path))
		return false
	}
	return true
}

func answer(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, apierr.New(http.StatusInternalServerError, apierr.CodeInternal, "", "", "%v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

func fail(w http.ResponseWriter, e *apierr.Error) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Status)
	w.Write(append(e.Body(), '\n'))
}
