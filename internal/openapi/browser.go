package openapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// BrowserPath is where the API browser is served (FlexSwitch served its
// own at the same place).
const BrowserPath = "/api-docs/"

// ui is Swagger UI from the npm package swagger-ui-dist (version and
// checksums in ui/VERSION, refreshed by ui/update.sh), with swmgr's own page
// and start-up script. It is embedded so that the page works on a switch
// without any other network access.
//
//go:embed ui/index.html ui/init.js ui/swagger-ui-bundle.js ui/swagger-ui.css ui/favicon-32x32.png ui/swagger-ui-bundle.js.LICENSE.txt ui/LICENSE.swagger-ui ui/NOTICE.swagger-ui
var ui embed.FS

// browserPolicy keeps the page to what this switch serves: a script, style
// sheet, image or request to any other origin is refused by the browser,
// and no other site may frame the page.
const browserPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Browser serves the API browser under BrowserPath: a page that reads the
// document at Path and lets an operator browse it and try the requests
// (with the credentials the browser sends, like any other client). It
// answers GET and HEAD only; the files are static and reveal nothing that
// the document does not.
func Browser() http.Handler {
	files, err := fs.Sub(ui, "ui")
	if err != nil {
		panic(err) // the embedded directory is fixed at build time
	}
	serve := http.StripPrefix(BrowserPath[:len(BrowserPath)-1], http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the API browser answers GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == BrowserPath[:len(BrowserPath)-1] {
			http.Redirect(w, r, BrowserPath, http.StatusMovedPermanently)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", browserPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		serve.ServeHTTP(w, r)
	})
}
