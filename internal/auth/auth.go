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
// config log. Who may do what is declared on the kinds and actions (package
// model); auth does not parse paths: the REST server reads the route once
// and tells it what the request needs (Options.Access). Requests without credentials are accepted only where the
// listener allows it (plain HTTP on a loopback address, the Unix socket),
// as the local OS user on the other end of the connection (Peers).
//
// A long-lived request (the change feed, a gNMI subscription) is held
// (Sessions): its identity is authorised again when its account or the
// central AAA configuration changes and periodically, and its context ends
// when a new request of the same identity would be refused.
package auth

import (
	"context"

	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// Role is what a user may do.
type Role int

// Roles, from least to most: the model's (model.Role), which kinds and
// actions declare.
const (
	Reader   = Role(model.RoleReader)   // any group but operator and admin
	Operator = Role(model.RoleOperator) // group operator
	Admin    = Role(model.RoleAdmin)    // group admin
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

func (r Role) String() string { return model.Role(r).String() }

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

// identityKey is the context key of a request's identity: an *Identity
// the authentication attached (NewContext), or, for a request without
// credentials from the local peer, the connection's *peerConn (Peers).
type identityKey struct{}

// identityCtx carries an identity in one allocation (context.WithValue
// would take a second one to box the Identity).
type identityCtx struct {
	context.Context
	id Identity
}

func (c *identityCtx) Value(key any) any {
	if key == (identityKey{}) {
		return &c.id
	}
	return c.Context.Value(key)
}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return &identityCtx{Context: ctx, id: id}
}

// FromContext returns the identity of a request. A request without
// credentials from the local peer (Peers) carries its connection's: the
// handler attaches nothing to it, since that would copy every local
// request; a connection whose peer is not identified has an identity that
// may do nothing. A context that carries neither is the unauthenticated
// local admin (Local).
func FromContext(ctx context.Context) Identity {
	switch v := ctx.Value(identityKey{}).(type) {
	case *Identity:
		return *v
	case *peerConn:
		if r := v.role.Load(); r != nil && r.err == nil {
			return r.id
		}
		return Identity{Local: true} // a peer not (yet) identified may do nothing
	}
	return Local()
}

// NeedOf is what a request that needs a (as the REST server read it from
// the declarations of the kind or action its route names) requires of its
// user here, before its body is read: an action that any user may run on
// itself lets every user through, and the REST server checks the name once
// it has parsed the body.
func NeedOf(a model.Access) Need {
	switch {
	case a.Role <= model.RoleReader:
		return NeedRead
	case a.Self != "":
		return NeedSelf
	case a.Role == model.RoleOperator:
		return NeedOperator
	}
	return NeedAdmin
}

// Model is the role as the model's declarations name it.
func (r Role) Model() model.Role { return model.Role(r) }

// Caller is the identity as the binding table knows a caller: who runs an
// action or makes a commit, and its role.
func (id Identity) Caller() bind.Caller { return bind.Caller{Name: id.Name, Role: id.Role.Model()} }
