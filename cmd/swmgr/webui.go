package main

import (
	"net/http"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/webui"
)

// webUI is the web page (internal/webui) on every HTTP listener, over the
// web sessions every listener's authentication takes as a credential
// (access.Access.Web).
type webUI struct {
	page *webui.Handler
}

func newWebUI(web *auth.WebSessions) *webUI {
	return &webUI{page: webui.New(web)}
}

// route sends the page's requests (/ and /ui/...: the files, the login)
// to the page, before authentication, and the rest to next.
func (u *webUI) route(next http.Handler) http.Handler {
	if u == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webui.Wants(r.URL.Path) {
			u.page.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
