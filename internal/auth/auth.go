// Package auth authenticates and authorises REST requests.
//
// Handler wraps the REST handler of one listener. It reads HTTP Basic
// credentials, refuses a user name that failed too often from an address
// (Throttle, 429), checks the password (Verifier: the accounts backend behind
// a short-lived cache keyed by an HMAC of user and password), and checks the
// role of the user's group against what the request needs (Required, 403).
// The authenticated identity travels in the request's context
// (FromContext).
//
// Roles come from the group: admin may do everything; operator may read,
// change configuration (except users), use candidates, roll back and save
// the configuration; any other group may read and change its own password.
// Only admins manage users, reset or restore the configuration and clear the
// config log. Requests without credentials are accepted only where the
// listener allows it (plain HTTP on a loopback address, the Unix socket),
// as the local OS user on the other end of the connection (Peers).
package auth

import (
	"context"
	"net/http"
	"strings"
)

// Role is what a user may do.
type Role int

// Roles, from least to most.
const (
	Reader   Role = iota + 1 // any group but operator and admin
	Operator                 // group operator
	Admin                    // group admin
)

// RoleOf maps a group to its role.
func RoleOf(group string) Role {
	switch group {
	case "admin":
		return Admin
	case "operator":
		return Operator
	}
	return Reader
}

func (r Role) String() string {
	switch r {
	case Admin:
		return "admin"
	case Operator:
		return "operator"
	case Reader:
		return "read-only"
	}
	return "none"
}

// Need is what a request requires of its user.
type Need int

const (
	NeedRead     Need = iota + 1 // reads: any user
	NeedSelf                     // UserPassword: any user, for their own account (the handler checks the name)
	NeedOperator                 // configuration changes
	NeedAdmin                    // user management, reset, restore, clearing the config log, anything unknown
)

func (n Need) String() string {
	switch n {
	case NeedRead, NeedSelf:
		return "any user"
	case NeedOperator:
		return "an operator or admin"
	}
	return "an admin"
}

// May reports whether a role may make a request that needs n.
func (r Role) May(n Need) bool {
	switch n {
	case NeedRead, NeedSelf:
		return r >= Reader
	case NeedOperator:
		return r >= Operator
	}
	return r >= Admin
}

// Identity is who made a request.
type Identity struct {
	Name  string // "" for an unauthenticated local request
	Group string
	Role  Role
	Local bool // an OS user of this host found by the kernel (Peers), not by credentials
}

// Local is the identity of a request without credentials on a listener that
// accepts them (plain HTTP on a loopback address): the local admin, with an
// empty name.
func Local() Identity { return Identity{Role: Admin} }

type identityKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity of a request. A request that carries
// none is the unauthenticated local admin of a loopback listener: the
// handler lets it through untouched (copying the request to attach Local()
// would cost every local call), so FromContext answers Local() for it.
func FromContext(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok {
		return id
	}
	return Local()
}

// Required classifies a request by method and path. Reads need any user.
// Writes under /public/v1/config need an operator, or an admin for User;
// actions as the contract says; candidates (staging and committing) and
// revision confirmations an operator, or an admin to stage a User change.
// Anything not recognised needs an admin. Kind names are case-insensitive
// and repeated slashes are ignored, as the REST router does.
func Required(method, path string) Need {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return NeedRead
	}
	var segArr [8]string
	segs := segArr[:0]
	for rest := path; rest != "" && len(segs) < len(segArr); {
		var s string
		s, rest, _ = strings.Cut(rest, "/")
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) < 3 || segs[0] != "public" || segs[1] != "v1" {
		return NeedAdmin
	}
	switch segs[2] {
	case "config":
		return configNeed(segs[3:])
	case "action":
		if len(segs) != 4 {
			return NeedAdmin
		}
		switch strings.ToLower(segs[3]) {
		case "userpassword":
			return NeedSelf
		case "saveconfig", "rollback":
			return NeedOperator
		}
		return NeedAdmin // ResetConfig, ResetConfigToFile, ClearConfigLog, and any action not known here
	case "candidates":
		// candidates, candidates/{id}, candidates/{id}/commit,
		// candidates/{id}/config/{Kind}[/{uuid}]
		if len(segs) >= 5 && segs[4] == "config" {
			return configNeed(segs[5:])
		}
		return NeedOperator
	case "revisions":
		return NeedOperator // revisions/{rev}/confirm
	}
	return NeedAdmin
}

// configNeed is what a write to /config/<segs...> needs.
func configNeed(segs []string) Need {
	if len(segs) > 0 && (strings.EqualFold(segs[0], "User") || strings.EqualFold(segs[0], "Users")) {
		return NeedAdmin
	}
	return NeedOperator
}
