package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// removedKept is how long what a deleted account removed is kept, so that
// undoing the delete (a later change of the same commit failed, or the
// commit could not be written) can put it back with its password hash.
const removedKept = 10 * time.Minute

type removedAccount struct {
	r  *accounts.Removed
	at time.Time
}

// Accounts implements backend.AccountKeeper.
func (s *Sim) Accounts() accounts.Accounts { return s.opts.Accounts }

func (s *Sim) loginShell(defaultShell string) string {
	cli := s.opts.CLIShell
	if cli == "" {
		cli = "/usr/local/bin/swmgr"
	}
	return accounts.LoginShell(defaultShell, cli)
}

// userDriver applies Users to the accounts. Accounts that write behind
// (Files with WriteBehind) are told which changes the store has, write only
// those, and are synced before a commit with a User is answered; accounts
// that can be reconciled (all of them when the switch owns them, those
// swmgr made on a host) are made those of the stored Users at start.
func (s *Sim) userDriver() *backend.Driver {
	d := &backend.Driver{Prepare: s.prepareUser, Apply: s.applyUser}
	if syncer, ok := s.opts.Accounts.(accounts.Syncer); ok {
		d.Settle, d.Sync = syncer.Settle, syncer.Sync
	}
	if _, ok := s.opts.Accounts.(accounts.Reconciler); ok {
		d.Reconcile = s.reconcileUsers
	}
	return d
}

// reconcileUsers makes the switch's own accounts those of the stored Users:
// a power loss can leave the account files behind the store (they are
// written beside it, not before it), a crash can leave a host's accounts
// ahead of it (their tools run before the store's write), and files edited
// by hand can differ.
func (s *Sim) reconcileUsers(ctx context.Context, stored []model.Object) ([]string, error) {
	want := make([]accounts.Account, len(stored))
	for i, u := range stored {
		want[i] = accounts.Account{Name: u.Str("Name"), Group: u.Str("Group"), Shell: s.loginShell(u.Str("DefaultShell"))}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	did, err := s.opts.Accounts.(accounts.Reconciler).Reconcile(ctx, want)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reconcile the switch's accounts with the stored Users: %w", err)
	}
	out := make([]string, len(did))
	for i, d := range did {
		out[i] = d.Did
	}
	return out, nil
}

// prepareUser hashes a new User's password before the change reaches the
// writer, when the accounts can take a hash: hashing is the slow part of
// making an account, and must not hold up other commits.
func (s *Sim) prepareUser(ctx context.Context, ed *model.Edit) (any, error) {
	h, ok := s.opts.Accounts.(accounts.HashCreator)
	if !ok || ed.Op != backend.Create || ed.Fields.Str("Password") == "" {
		return nil, nil
	}
	hash, err := h.HashPassword(ed.Fields.Str("Password"))
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, accountError(ed.Fields.Str("Name"), err)
	}
	return preparedHash(hash), nil
}

// preparedHash is a User's password hash made by prepareUser.
type preparedHash string

// applyUser makes a User change real on the accounts: create, delete, and
// a DefaultShell change (Access is only recorded). A create without a
// password is the undo of a delete: it restores what the delete removed.
func (s *Sim) applyUser(ctx context.Context, c backend.Change) (model.Object, error) {
	if err := s.fault(c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.applyAccount(ctx, c)
}

func (s *Sim) applyAccount(ctx context.Context, c backend.Change) error {
	acc := s.opts.Accounts
	if acc == nil {
		return nil
	}
	now := time.Now()
	for name, r := range s.removed {
		if now.Sub(r.at) > removedKept {
			delete(s.removed, name)
		}
	}
	switch c.Op {
	case backend.Create:
		o := c.After
		name, password := o.Str("Name"), o.Str("Password")
		if password == "" {
			r, ok := s.removed[name]
			if !ok {
				return refused(http.StatusBadRequest, "User", "Password", "Password is required to create the account of %s", name)
			}
			if err := acc.Restore(ctx, r.r); err != nil {
				return accountError(name, err)
			}
			delete(s.removed, name)
			return nil
		}
		create := func() error {
			if hash, ok := c.Prepared.(preparedHash); ok {
				return acc.(accounts.HashCreator).CreateHashed(ctx, name, o.Str("Group"), s.loginShell(o.Str("DefaultShell")), string(hash))
			}
			return acc.Create(ctx, name, o.Str("Group"), s.loginShell(o.Str("DefaultShell")), password)
		}
		err := create()
		if errors.Is(err, accounts.ErrExists) && s.opts.OwnAccounts {
			if _, derr := acc.Delete(ctx, name); derr == nil {
				err = create()
			}
		}
		if err != nil {
			return accountError(name, err)
		}
		delete(s.removed, name)
	case backend.Update:
		if c.Before.Str("DefaultShell") != c.After.Str("DefaultShell") {
			name := c.After.Str("Name")
			if err := acc.SetShell(ctx, name, s.loginShell(c.After.Str("DefaultShell"))); err != nil {
				return accountError(name, err)
			}
		}
	case backend.Delete:
		name := c.Before.Str("Name")
		r, err := acc.Delete(ctx, name)
		if errors.Is(err, accounts.ErrNotFound) {
			return nil // already gone: the User can go too
		}
		if err != nil {
			return accountError(name, err)
		}
		s.removed[name] = removedAccount{r: r, at: now}
	}
	return nil
}

// accountError reports a failure of the accounts as the switch refusing.
func accountError(name string, err error) error {
	switch {
	case errors.Is(err, accounts.ErrExists):
		return refused(http.StatusConflict, "User", "Name", "an account named %s already exists on the switch", name)
	case errors.Is(err, accounts.ErrNotFound):
		return refused(http.StatusNotFound, "User", "Name", "the switch has no account named %s", name)
	case errors.Is(err, accounts.ErrInvalid):
		return refused(http.StatusBadRequest, "User", "", "%v", err)
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "User", "", "the switch's accounts failed: %v", err)
}
