// Package users is the accounts provider's engine side: which User objects
// exist (what authentication asks before it trusts an account) and the
// UserPassword action, which sets an account's password in the accounts the
// service binds to the User kind (useracct.Provider applies the User
// objects themselves).
//
// A User object's create, update and delete are ordinary commits (the
// accounts provider's User driver makes the account; the model's
// constraint keeps the last admin), so they need nothing here. A password
// change is not a commit: no object changes, since passwords are never
// stored. It is set in the accounts outside the writer, so that its hashing
// does not hold up other commits, and recorded in the config log through
// the engine.
package users

import (
	"context"
	"errors"
	"net/http"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend/useracct"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

const userKind = useracct.UserKind

// List returns the User objects (no passwords: they are never stored).
func List(ctx context.Context, e *engine.Engine) ([]model.Object, error) {
	k := e.Registry().Lookup(model.Config, userKind)
	var out []model.Object
	err := e.Store().View(func(tx store.Txn) error {
		return e.EachStored(tx, k, func(o model.Object) error {
			out = append(out, o)
			return nil
		})
	})
	return out, err
}

// Exists reports whether a User object name exists in the store st (the
// engine's): authentication asks it before it trusts an account.
func Exists(ctx context.Context, st store.Config, name string) (bool, error) {
	var ok bool
	err := st.View(func(tx store.Txn) error {
		var err error
		_, ok, err = tx.Get(userKind, name)
		return err
	})
	return ok, err
}

// SetPassword runs the UserPassword action: it sets the password of the
// account of User name through acc, the accounts the User kind is bound to
// (nil: none), and records the action in the config log (info.Data holds
// the body with the password redacted). Whether the caller may do it is
// the caller's to check.
func SetPassword(ctx context.Context, e *engine.Engine, acc accounts.Accounts, name, password string, meta engine.Meta, info *engine.LogInfo) error {
	if err := setPassword(ctx, e, acc, name, password); err != nil {
		e.Log(ctx, meta, info, err)
		return err
	}
	if info == nil {
		return nil
	}
	return e.LogSuccess(ctx, meta, info)
}

func setPassword(ctx context.Context, e *engine.Engine, acc accounts.Accounts, name, password string) error {
	if acc == nil {
		return apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, useracct.PasswordAction, "", "the switch keeps no user accounts")
	}
	if ok, err := Exists(ctx, e.Store(), name); err != nil {
		return err
	} else if !ok {
		return apierr.NotFound(apierr.CodeNotFound, useracct.PasswordAction, "no User named %s", name)
	}
	err := acc.SetPassword(ctx, name, password)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, accounts.ErrInvalid):
		return apierr.BadRequest(apierr.CodeInvalidValue, useracct.PasswordAction, "Password", "%v", err)
	case errors.Is(err, accounts.ErrNotFound):
		return apierr.New(http.StatusConflict, apierr.CodeBackend, useracct.PasswordAction, "Name", "User %s has no account on the switch; delete the User and create it again", name)
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, useracct.PasswordAction, "", "the switch failed to set the password: %v", err)
}

// Actions is the accounts provider's action on the engine e: UserPassword
// sets a password in acc, the accounts the User kind is bound to (nil:
// none). Who may run it (an admin, or the user itself) is declared on the
// action and checked by the table.
func Actions(e *engine.Engine, acc accounts.Accounts) bind.Provider {
	return passwordAction{e: e, acc: acc}
}

type passwordAction struct {
	e   *engine.Engine
	acc accounts.Accounts
}

func (passwordAction) Name() string { return useracct.ProviderName }

func (p passwordAction) Bindings() []bind.Binding {
	return []bind.Binding{{Kind: useracct.PasswordAction, Action: &bind.Action{Run: p.run}}}
}

func (p passwordAction) run(ctx context.Context, c bind.Call) (bind.Result, error) {
	return bind.Result{}, SetPassword(ctx, p.e, p.acc, c.Fields.Str("Name"), c.Fields.Str("Password"), c.Meta, c.Log) // logged
}
