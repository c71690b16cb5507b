package api

import (
	"net/http"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

// Prefix is the start of every API path.
const Prefix = model.APIPrefix

// Route is a parsed API path.
type Route struct {
	Class  model.Class
	Kind   *model.Kind
	Plural bool   // a get-all path: /config/<Kind>s
	ID     string // the <uuid> segment, if any
	Name   string // the object name as written in the path
}

// ParseRoute maps a path to the kind it names. The object name is
// case-insensitive; an exact kind name wins, otherwise a trailing "s" makes
// a get-all. Repeated and trailing slashes are ignored, as FlexSwitch did.
func ParseRoute(reg *model.Registry, path string) (Route, *apierr.Error) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return Route{}, apierr.NotFound(apierr.CodeNotFound, "", "no such path %q; API paths start with %s", path, Prefix)
	}
	var segArr [4]string
	segs := segArr[:0]
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == "" {
			continue
		}
		if len(segs) == len(segArr) {
			segs = append(segs, seg) // too many: reported below
			break
		}
		segs = append(segs, seg)
	}
	if len(segs) < 2 || len(segs) > 3 {
		return Route{}, apierr.NotFound(apierr.CodeNotFound, "", "no such path %q; use %s{config,state,action}/<Object>[/<ObjectId>]", path, Prefix)
	}
	var r Route
	switch segs[0] {
	case "config":
		r.Class = model.Config
	case "state":
		r.Class = model.State
	case "action":
		r.Class = model.Action
	default:
		return Route{}, apierr.NotFound(apierr.CodeNotFound, "", "no such path %q; the second segment is config, state or action", path)
	}
	r.Name = segs[1]
	if !isObjectName(r.Name) {
		return Route{}, unknownKind(reg, r.Class, r.Name)
	}
	if r.Class == model.State {
		// State paths name the config kind; ConfigLog is state only.
		r.Kind, r.Plural = reg.Resolve(model.State, r.Name)
		if r.Kind == nil {
			r.Kind, r.Plural = reg.Resolve(model.Config, r.Name)
		}
	} else {
		r.Kind, r.Plural = reg.Resolve(r.Class, r.Name)
	}
	if r.Kind == nil || (r.Class == model.Action && r.Plural) {
		return Route{}, unknownKind(reg, r.Class, r.Name)
	}
	if len(segs) == 3 {
		if r.Plural || r.Class == model.Action {
			return Route{}, apierr.NotFound(apierr.CodeNotFound, r.Kind.Name, "no such path %q", path)
		}
		r.ID = segs[2]
	}
	return r, nil
}

func isObjectName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func unknownKind(reg *model.Registry, c model.Class, name string) *apierr.Error {
	names := reg.Names(c)
	if c == model.State {
		// State paths name the kind as its config path does (state/Port,
		// state/ConfigLog), not by its state form's name.
		for i, n := range names {
			names[i] = strings.TrimSuffix(n, "State")
		}
		base := name[:len(name)-min(len(name), len("State"))]
		if strings.EqualFold(name[len(base):], "State") && base != "" {
			k, _ := reg.Resolve(model.State, base)
			if k == nil {
				k, _ = reg.Resolve(model.Config, base)
			}
			if k != nil {
				return apierr.NotFound(apierr.CodeUnknownKind, "", "unknown state object %q; state paths use the kind's name without \"State\": %sstate/%s", name, Prefix, base)
			}
		}
	}
	return apierr.NotFound(apierr.CodeUnknownKind, "", "unknown %s object %q; known: %s", c, name, strings.Join(names, ", "))
}

var (
	allowAction   = []string{http.MethodPost, http.MethodOptions}
	allowRead     = []string{http.MethodGet, http.MethodHead, http.MethodOptions}
	allowIDAll    = []string{http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	allowPatch    = []string{http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodOptions}
	allowCreation = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodOptions}
)

// Allowed lists the methods a route supports, for 405 and Allow. The slice
// is shared: do not modify it.
func (r Route) Allowed() []string {
	k := r.Kind
	switch {
	case r.Class == model.Action:
		return allowAction
	case r.Class == model.State || r.Plural:
		return allowRead
	case r.ID != "":
		if k.Creatable() {
			return allowIDAll
		}
		return allowPatch
	case k.Creatable():
		return allowCreation
	}
	return allowPatch
}

func (r Route) allows(method string) bool {
	for _, m := range r.Allowed() {
		if m == method {
			return true
		}
	}
	return false
}

// metricsClass is the route's class for metrics and the access log: the
// class, and whether it names a list or one object by ObjectId.
func (r Route) metricsClass() string {
	one := 0 // the class itself
	switch {
	case r.Plural:
		one = 1
	case r.ID != "":
		one = 2
	}
	switch r.Class {
	case model.Config:
		return [3]string{"config", "config_list", "config_id"}[one]
	case model.State:
		return [3]string{"state", "state_list", "state_id"}[one]
	case model.Action:
		return "action"
	}
	return ""
}
