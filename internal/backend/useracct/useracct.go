// Package useracct is the accounts provider's driver: it makes User objects
// real as accounts of the switch (internal/accounts: swmgr's own files or
// the host's), on any dataplane. The UserPassword action over the same
// accounts is package users of the engine.
package useracct

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// UserKind and PasswordAction are the declared kind and action the accounts
// provider is bound to: every User is an account, and UserPassword sets
// one's password (package users runs it over the provider's accounts).
const (
	UserKind       = "User"
	PasswordAction = "UserPassword"
)

// ProviderName names the accounts provider in the binding table.
const ProviderName = "accounts"

// removedKept is how long what a deleted account removed is kept, so that
// undoing the delete (a later change of the same commit failed, or the
// commit could not be written) can put it back with its password hash.
const removedKept = 10 * time.Minute

type removedAccount struct {
	r  *accounts.Removed
	at time.Time
}

// Options configure a Provider.
type Options struct {
	// Accounts are the switch's user accounts (nil: Users are only
	// recorded, and UserPassword has no accounts to set).
	Accounts accounts.Accounts
	// Own says the accounts belong to swmgr alone (account files in its
	// data directory): an account that a new User finds already there is a
	// leftover of a removed store, and is replaced. Never set it for the
	// host's accounts.
	Own bool
	// CLIShell is the login shell of a User whose DefaultShell is CLI.
	CLIShell string
	// Fault, if set, is called before each change is applied; an error it
	// returns fails the change. Tests use it.
	Fault func(backend.Change) error
}

// Provider is the accounts provider: the driver of the User kind, on any
// dataplane. It makes, changes and removes the account of each User.
type Provider struct {
	o       Options
	mu      sync.Mutex
	removed map[string]removedAccount // user name -> what deleting its account removed, for undo
}

// New makes the accounts provider.
func New(o Options) *Provider {
	return &Provider{o: o, removed: map[string]removedAccount{}}
}

// Accounts returns the accounts Users are bound to (nil for none).
func (p *Provider) Accounts() accounts.Accounts { return p.o.Accounts }

// Drivers returns the driver of the User kind. Accounts that write behind
// (Files with WriteBehind) are told which changes the store has, write only
// those, and are synced before a commit with a User is answered; accounts
// that can be reconciled (all of them when swmgr owns them, those swmgr
// made on a host) are made those of the stored Users at start.
func (p *Provider) Drivers() map[string]*backend.Driver {
	d := &backend.Driver{Prepare: p.prepareUser, Apply: p.applyUser}
	if syncer, ok := p.o.Accounts.(accounts.Syncer); ok {
		d.Settle, d.Sync = syncer.Settle, syncer.Sync
	}
	if _, ok := p.o.Accounts.(accounts.Reconciler); ok {
		d.Reconcile = p.reconcileUsers
	}
	return map[string]*backend.Driver{UserKind: d}
}

// Name implements bind.Provider.
func (p *Provider) Name() string { return ProviderName }

// Bindings implements bind.Provider: the User kind's driver.
func (p *Provider) Bindings() []bind.Binding { return bind.Drivers(p.Drivers()) }

func (p *Provider) loginShell(defaultShell string) string {
	cli := p.o.CLIShell
	if cli == "" {
		cli = "/usr/local/bin/swmgr"
	}
	return accounts.LoginShell(defaultShell, cli)
}

// reconcileUsers makes the accounts those of the stored Users: a power loss
// can leave the account files behind the store (they are written beside it,
// not before it), a crash can leave a host's accounts ahead of it (their
// tools run before the store's write), and files edited by hand can differ.
func (p *Provider) reconcileUsers(ctx context.Context, stored []model.Object) ([]string, error) {
	want := make([]accounts.Account, len(stored))
	for i, u := range stored {
		want[i] = accounts.Account{Name: u.Str("Name"), Group: u.Str("Group"), Shell: p.loginShell(u.Str("DefaultShell"))}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	did, err := p.o.Accounts.(accounts.Reconciler).Reconcile(ctx, want)
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
func (p *Provider) prepareUser(ctx context.Context, ed *model.Edit) (any, error) {
	h, ok := p.o.Accounts.(accounts.HashCreator)
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
func (p *Provider) applyUser(ctx context.Context, c backend.Change) (model.Object, error) {
	if p.o.Fault != nil {
		if err := p.o.Fault(c); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return nil, p.applyAccount(ctx, c)
}

func (p *Provider) applyAccount(ctx context.Context, c backend.Change) error {
	acc := p.o.Accounts
	if acc == nil {
		return nil
	}
	now := time.Now()
	for name, r := range p.removed {
		if now.Sub(r.at) > removedKept {
			delete(p.removed, name)
		}
	}
	switch c.Op {
	case backend.Create:
		o := c.After
		name, password := o.Str("Name"), o.Str("Password")
		if password == "" {
			r, ok := p.removed[name]
			if !ok {
				return refused(http.StatusBadRequest, "Password", "Password is required to create the account of %s", name)
			}
			if err := acc.Restore(ctx, r.r); err != nil {
				return accountError(name, err)
			}
			delete(p.removed, name)
			return nil
		}
		create := func() error {
			if hash, ok := c.Prepared.(preparedHash); ok {
				return acc.(accounts.HashCreator).CreateHashed(ctx, name, o.Str("Group"), p.loginShell(o.Str("DefaultShell")), string(hash))
			}
			return acc.Create(ctx, name, o.Str("Group"), p.loginShell(o.Str("DefaultShell")), password)
		}
		err := create()
		if errors.Is(err, accounts.ErrExists) && p.o.Own {
			if _, derr := acc.Delete(ctx, name); derr == nil {
				err = create()
			}
		}
		if err != nil {
			return accountError(name, err)
		}
		delete(p.removed, name)
	case backend.Update:
		if c.Before.Str("DefaultShell") != c.After.Str("DefaultShell") {
			name := c.After.Str("Name")
			if err := acc.SetShell(ctx, name, p.loginShell(c.After.Str("DefaultShell"))); err != nil {
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
		p.removed[name] = removedAccount{r: r, at: now}
	}
	return nil
}

func refused(status int, field, format string, args ...any) error {
	return apierr.New(status, apierr.CodeBackend, UserKind, field, "the switch refused: "+format, args...)
}

// accountError reports a failure of the accounts as the switch refusing.
func accountError(name string, err error) error {
	switch {
	case errors.Is(err, accounts.ErrExists):
		return refused(http.StatusConflict, "Name", "an account named %s already exists on the switch", name)
	case errors.Is(err, accounts.ErrNotFound):
		return refused(http.StatusNotFound, "Name", "the switch has no account named %s", name)
	case errors.Is(err, accounts.ErrInvalid):
		return refused(http.StatusBadRequest, "", "%v", err)
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, UserKind, "", "the switch's accounts failed: %v", err)
}
