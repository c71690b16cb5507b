package engine

import (
	"context"
	"errors"
	"net/http"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// AdminGroup is the group whose users may do everything.
const AdminGroup = model.AdminGroup

// Users returns the User objects (no passwords: they are never stored).
func (e *Engine) Users(ctx context.Context) ([]model.Object, error) {
	k := e.reg.Lookup(model.Config, "User")
	var out []model.Object
	err := e.store.View(func(tx store.Txn) error {
		_, _, err := tx.List(k.Name, 0, int(^uint(0)>>1), func(rec store.Record) error {
			o, err := e.decode(k, rec)
			if err == nil {
				out = append(out, o)
			}
			return err
		})
		return err
	})
	return out, err
}

// HasUser reports whether a User object name exists.
func (e *Engine) HasUser(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := e.store.View(func(tx store.Txn) error {
		var err error
		_, ok, err = tx.Get("User", name)
		return err
	})
	return ok, err
}

// SetPassword runs the UserPassword action: it sets the password of the
// account of User name through the backend's accounts, and records the
// action in the config log (info.Data holds the body with the password
// redacted). Whether the caller may do it is the caller's to check. The
// password is set outside the writer, so that its hashing does not hold up
// other commits.
func (e *Engine) SetPassword(ctx context.Context, name, password string, meta Meta, info *LogInfo) error {
	err := e.setPassword(ctx, name, password)
	if err != nil {
		if info != nil {
			e.logFailure(ctx, meta, info, err)
		}
		return err
	}
	if info == nil {
		return nil
	}
	return e.logSuccess(ctx, meta, info)
}

func (e *Engine) setPassword(ctx context.Context, name, password string) error {
	var acc accounts.Accounts
	if keeper, ok := e.backend.(backend.AccountKeeper); ok {
		acc = keeper.Accounts()
	}
	if acc == nil {
		return apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, "UserPassword", "", "the %s backend keeps no user accounts", e.backend.Name())
	}
	if ok, err := e.HasUser(ctx, name); err != nil {
		return err
	} else if !ok {
		return apierr.NotFound(apierr.CodeNotFound, "UserPassword", "no User named %s", name)
	}
	err := acc.SetPassword(ctx, name, password)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, accounts.ErrInvalid):
		return apierr.BadRequest(apierr.CodeInvalidValue, "UserPassword", "Password", "%v", err)
	case errors.Is(err, accounts.ErrNotFound):
		return apierr.New(http.StatusConflict, apierr.CodeBackend, "UserPassword", "Name", "User %s has no account on the switch; delete the User and create it again", name)
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "UserPassword", "", "the switch failed to set the password: %v", err)
}
