package model

import "net/http"

// Who may do what, and where state comes from, is declared on the kinds
// (Kind.Role, Kind.Self, Kind.Source); the REST server's access decision,
// its action dispatch, its state reads, the OpenAPI document and the docs
// all read these declarations through the functions below.

// State sources: where a state-only kind's objects come from.
const (
	// SourceBackend: the backend's driver of the kind lists them (the
	// default).
	SourceBackend = ""
	// SourceService: the service itself fills them (its readiness, its
	// version, what its daemons learned), registered with the REST server.
	SourceService = "service"
	// SourceConfigLog: the config log's entries.
	SourceConfigLog = "configlog"
)

// Access is what a request needs of its user.
type Access struct {
	// Role is the least role that may make the request.
	Role Role
	// Self, if set, names the field of an action's body that names a User:
	// any user may make the request when that field is its own name.
	Self string
}

// Reading is what any read needs: any user.
var Reading = Access{Role: RoleReader}

// AccessFor is what a request with method on a path of kind k needs:
// reads any user; writes of a config kind its WriteRole; an action its
// WriteRole, or any user for itself when it declares Self. A write to a
// state path needs an admin (it is refused anyway).
func (k *Kind) AccessFor(method string) Access {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return Reading
	}
	switch k.Class {
	case Config:
		return Access{Role: k.WriteRole()}
	case Action:
		return Access{Role: k.WriteRole(), Self: k.Self}
	}
	return Access{Role: RoleAdmin}
}

// Allows reports whether a user of role r whose name is user may make a
// request that needs a, given the request's parsed fields (nil when they
// are not known yet: then Self lets anyone through, and the caller checks
// again once it has them).
func (a Access) Allows(r Role, user string, fields Object) bool {
	if r >= a.Role {
		return true
	}
	if a.Self == "" {
		return false
	}
	return fields == nil || fields.Str(a.Self) == user
}

// Who describes, for people, who may make a request that needs a.
func (a Access) Who() string {
	var w string
	switch a.Role {
	case RoleAdmin:
		w = "admins"
	case RoleOperator:
		w = "operators and admins"
	default:
		w = "any user"
	}
	if a.Self != "" && a.Role > RoleReader {
		w += " (any user for itself: " + a.Self + " = its own name)"
	}
	return w
}

// checkDeclaredAccess refuses declarations that the access and state
// source rules could not honour.
func (k *Kind) checkDeclaredAccess() error {
	if k.Self != "" && (k.Class != Action || k.Field(k.Self) == nil) {
		return errorf("%s: Self names %q, which is not a field of an action", k.Name, k.Self)
	}
	if k.Role != 0 && (k.Role < RoleReader || k.Role > RoleAdmin || k.Class == State) {
		return errorf("%s: Role %d cannot be declared on a %s kind", k.Name, k.Role, k.Class)
	}
	switch k.Source {
	case SourceBackend:
	case SourceService, SourceConfigLog:
		if k.Class != State {
			return errorf("%s: only state-only kinds declare a Source (%q)", k.Name, k.Source)
		}
	default:
		return errorf("%s: unknown Source %q (known: %q, %q, %q)", k.Name, k.Source, SourceBackend, SourceService, SourceConfigLog)
	}
	if k.DryRunnable && k.Class != Action {
		return errorf("%s: only actions declare DryRunnable", k.Name)
	}
	return nil
}

// APIPrefix is the path under which the REST interface serves every
// object, action and state (FlexSwitch's).
const APIPrefix = "/public/v1/"
