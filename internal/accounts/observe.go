package accounts

import (
	"context"
	"errors"
)

// Observe returns a that also calls changed with the account's name after
// every call that changes (or tries to change) an account: Create,
// SetShell, SetPassword, Delete and Restore. The authentication layer uses
// it to drop what it has cached about the account at once.
func Observe(a Accounts, changed func(name string)) Accounts {
	return observed{Accounts: a, changed: changed}
}

type observed struct {
	Accounts
	changed func(name string)
}

func (o observed) Create(ctx context.Context, name, group, shell, password string) error {
	defer o.changed(name)
	return o.Accounts.Create(ctx, name, group, shell, password)
}

func (o observed) SetShell(ctx context.Context, name, shell string) error {
	defer o.changed(name)
	return o.Accounts.SetShell(ctx, name, shell)
}

func (o observed) SetPassword(ctx context.Context, name, password string) error {
	defer o.changed(name)
	return o.Accounts.SetPassword(ctx, name, password)
}

func (o observed) Delete(ctx context.Context, name string) (*Removed, error) {
	defer o.changed(name)
	return o.Accounts.Delete(ctx, name)
}

func (o observed) Restore(ctx context.Context, r *Removed) error {
	if r != nil {
		defer o.changed(r.Name)
	}
	return o.Accounts.Restore(ctx, r)
}

// HashPassword implements HashCreator when the observed accounts do.
func (o observed) HashPassword(password string) (string, error) {
	h, ok := o.Accounts.(HashCreator)
	if !ok {
		return "", errors.ErrUnsupported
	}
	return h.HashPassword(password)
}

// CreateHashed implements HashCreator when the observed accounts do.
func (o observed) CreateHashed(ctx context.Context, name, group, shell, hash string) error {
	h, ok := o.Accounts.(HashCreator)
	if !ok {
		return errors.ErrUnsupported
	}
	defer o.changed(name)
	return h.CreateHashed(ctx, name, group, shell, hash)
}

// Settle implements Syncer: the observed accounts' Settle, if they have
// one.
func (o observed) Settle(committed bool) {
	if s, ok := o.Accounts.(Syncer); ok {
		s.Settle(committed)
	}
}

// Sync implements Syncer: the observed accounts' Sync, if they have one.
func (o observed) Sync(ctx context.Context) error {
	if s, ok := o.Accounts.(Syncer); ok {
		return s.Sync(ctx)
	}
	return nil
}

// Reconcile implements Reconciler when the observed accounts do; every
// account it changed is reported to changed.
func (o observed) Reconcile(ctx context.Context, want []Account) ([]Repair, error) {
	r, ok := o.Accounts.(Reconciler)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	did, err := r.Reconcile(ctx, want)
	for _, d := range did {
		o.changed(d.Account)
	}
	return did, err
}
