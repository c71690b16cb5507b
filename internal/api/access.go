package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// Access control reads the declarations (model.Kind.AccessFor): the route
// is parsed here once, what it needs goes to the authentication layer
// (auth.Options.Access), and the parsed route travels on in the request's
// context so that ServeHTTP does not parse it again.

// routeKey carries a parsedRoute in a request's context.
type routeKey struct{}

// parsedRoute is the outcome of parsing path: a route or why there is none.
type parsedRoute struct {
	path  string
	route Route
	err   *apierr.Error
}

// Access is auth.Options.Access for this server: what the request needs of
// its user, from the kind or action its route names. Reads need any user
// and are not parsed here; a write's route is parsed and returned with r.
func (s *Server) Access(r *http.Request) (auth.Need, *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return auth.NeedRead, r
	}
	a, parsed := access(s.reg, r.Method, r.URL.Path)
	if parsed != nil {
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, parsed))
	}
	return auth.NeedOf(a), r
}

// route parses r's path, or takes the route Access parsed for it.
func (s *Server) route(r *http.Request) (Route, *apierr.Error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead { // Access parses writes only
		if p, ok := r.Context().Value(routeKey{}).(*parsedRoute); ok && p.path == r.URL.Path {
			return p.route, p.err
		}
	}
	return ParseRoute(s.reg, r.URL.Path)
}

// access is what method on path needs, and the parsed route of a path of
// the object tree (nil for the transaction paths). A path that names
// nothing needs an admin: nobody else learns what exists from a write.
func access(reg *model.Registry, method, path string) (model.Access, *parsedRoute) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return model.Reading, nil
	}
	operator := model.Access{Role: model.RoleOperator}
	switch {
	case path == eventsPath || strings.HasPrefix(path, eventsPath+"/"):
		return model.Access{Role: model.RoleAdmin}, nil
	case path == revisionsPrefix || strings.HasPrefix(path, revisionsPrefix+"/"):
		return operator, nil // confirmations
	case path == candidatesPrefix || strings.HasPrefix(path, candidatesPrefix+"/"):
		// candidates/{id}/config/<Kind>... stages a write of that kind:
		// it needs what the write itself would.
		// (The same cut as Server.candidates.)
		rest := strings.Trim(strings.TrimPrefix(path, candidatesPrefix), "/")
		if _, sub, _ := strings.Cut(rest, "/"); strings.HasPrefix(sub, "config/") {
			if route, err := ParseRoute(reg, Prefix+sub); err == nil {
				return route.Access(method), nil
			}
		}
		return operator, nil
	}
	route, err := ParseRoute(reg, path)
	if err != nil {
		return model.Access{Role: model.RoleAdmin}, &parsedRoute{path: path, err: err}
	}
	return route.Access(method), &parsedRoute{path: path, route: route}
}

// Access is what method on the route needs, as its kind declares.
func (r Route) Access(method string) model.Access {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return model.Reading
	}
	if r.Class == model.State {
		return model.Access{Role: model.RoleAdmin} // nothing may write state
	}
	return r.Kind.AccessFor(method)
}

// allowUsers vets a commit computed by the engine (a candidate's, a
// confirmation's) for the caller, as the binding table vets an action's:
// bind.Caller.MayChange, the rule every front door shares.
func allowUsers(r *http.Request, what string) func(*model.Kind, backend.Op, string) error {
	return callerOf(r.Context()).MayChange(what)
}
