package auth

import (
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
)

// AllowChanges is the one rule for the changes a commit makes that its
// caller did not name one by one (a rollback's, a candidate's, a gNMI
// Set's once resolved, a breakout's sub-ports), and for deciding the fate
// of a commit awaiting confirmation (confirming it, cancelling it, moving
// its deadline), whatever the front door: a change of an object of kind k
// needs the role k declares for writing it, so an operator may not touch
// a User. It is the engine's Request.Allow for id; what names the request
// in the refusal (the kind's name when ""). It is nil for an admin, who
// may make every change (the unauthenticated local admin included).
func AllowChanges(id Identity, what string) func(k *model.Kind, op model.Op, key string) error {
	if id.Role == Admin {
		return nil
	}
	return func(k *model.Kind, op model.Op, key string) error {
		need := k.AccessFor(http.MethodPost)
		if id.Role.Model() >= need.Role {
			return nil
		}
		kind := what
		if kind == "" {
			kind = k.Name
		}
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, kind, "", "this would %s %s %s; only %s may change %s objects (user %s is %s)", op, k.Name, k.DescribeKey(key), need.Who(), k.Name, id.Name, id.Role)
	}
}
