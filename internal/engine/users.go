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
const AdminGroup = "admin"

// checkLastAdmin refuses (409) a commit that deletes an admin User and
// leaves none: nobody could manage users any more.
func (v *view) checkLastAdmin(changes []*change) error {
	var deleted string
	touched := map[string]bool{}
	for _, c := range changes {
		if c.Kind.Name != "User" {
			continue
		}
		touched[c.Key] = true
		if c.Op == backend.Delete && c.Before.Str("Group") == AdminGroup {
			deleted = c.Key
		}
	}
	if deleted == "" {
		return nil
	}
	for _, c := range changes {
		if c.Kind.Name == "User" && c.Op != backend.Delete && c.After.Str("Group") == AdminGroup {
			return nil
		}
	}
	k := v.e.reg.Lookup(model.Config, "User")
	found := errors.New("found")
	_, _, err := v.tx.List(k.Name, 0, int(^uint(0)>>1), func(rec store.Record) error {
		if touched[rec.Key] {
			return nil
		}
		o, err := v.e.decode(k, rec)
		if err != nil {
			return err
		}
		if o.Str("Group") == AdminGroup {
			return found
		}
		return nil
	})
	if errors.Is(err, found) {
		return nil
	}
	if err != nil {
		return err
	}
	return apierr.Conflict(apierr.CodeConflict, k.Name, "%s is the last user of group %s: create another admin before deleting it", deleted, AdminGroup)
}

// Users returns the User objects (no passwords: they are never stored).
func (e *Engine) Users(ctx context.Context) ([]model.Object, error) {
	k := e.reg.Lookup(model.Config, "User")
	var out []model.Object
	err := e.store.View(func(tx *store.Tx) error {
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
	err := e.store.View(func(tx *store.Tx) error {
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
// password is set outside the store's committer, so that its hashing does
// not hold up other commits.
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
	return e.store.Commit(context.WithoutCancel(ctx), func(tx *store.Tx) (func(), error) {
		e.appendLog(tx, meta, info, "Success")
		return nil, nil
	})
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
