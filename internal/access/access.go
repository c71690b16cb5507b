// Package access builds the front doors' half of swmgr: who a request or an
// RPC comes from and what it may do. Open makes the credential check (the
// Verifier: central AAA first, then the switch's accounts, which a User
// object must back), the local peers (auth.Peers), the login throttle, the
// sessions that end a stream when its user's access ends, and the set-once
// slot through which the verifier reaches central AAA; then it opens the
// service (package service) with them. Handler puts a listener's handler
// behind authentication, Login is the same check for a door that is not
// HTTP (gNMI), and FirstAdmin makes the first admin. `swmgr serve` and
// package testserver both call it, so a test server authenticates exactly
// as serve does.
//
// It is a package of its own, above package service rather than in it,
// because it is built around the service, not inside it: the verifier, the
// peers and the sessions exist before the service (the accounts the service
// binds tell them of every change), and the handlers after it (they ask the
// REST server what a request needs). The composition root binds kinds to
// providers and knows nothing of listeners, throttles or HTTP handlers;
// this package knows of the root only the hooks service.Options has for it.
package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/intent"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/service"
	"github.com/swmgr/swmgr/internal/store"
)

// RefusalDelay is how long a login refused by the throttle (429) or the
// bound on password checks (503) waits before it is answered, on every
// door (auth.Options.RefusalDelay).
const RefusalDelay = time.Second

// FirstAdminName is the User the first start makes.
const FirstAdminName = "admin"

// Options say how the front doors check who calls.
type Options struct {
	// RefuseOthers refuses requests without credentials from local OS
	// users who are not swmgr Users (else they may read).
	RefuseOthers bool
	// ReauthInterval is how often the user of an open stream is
	// authorised again (0: auth.DefaultReauthInterval).
	ReauthInterval time.Duration
	// Throttle tunes the login throttle shared by every listener and door.
	Throttle auth.ThrottleOptions
	// BodyTimeout is how long a request body may take to arrive (0: no
	// limit).
	BodyTimeout time.Duration
}

// Access is the front doors' half of a running service.
type Access struct {
	Verifier *auth.Verifier
	Throttle *auth.Throttle
	// Peers attributes requests without credentials on a local listener;
	// such a listener's http.Server takes Peers.ConnContext.
	Peers *auth.Peers
	// Sessions ends the streams (change feed, gNMI subscriptions) of a
	// user whose access ended.
	Sessions *auth.Sessions
	// Web is the web page's sessions (internal/webui): a credential every
	// listener's Handler takes beside Basic, held in Sessions.
	Web *auth.WebSessions

	svc         *service.Service
	log         *slog.Logger
	bodyTimeout time.Duration
	// webhook is the intent's push webhook, in front of authentication:
	// its signature is its credential.
	webhook http.Handler
}

// Open builds the front doors' half, then the service on so with it: the
// service's accounts (so.Accounts) tell the verifier, the peers and the
// sessions of each change; a change of the central AAA configuration makes
// every login and stream be checked again; the verifier asks central AAA
// once the service has started it (a login before is refused, naming it).
// so.AAAChanged, so.Sessions and so.CentralAAA are set here.
func Open(ctx context.Context, o Options, so service.Options) (*Access, *service.Service, error) {
	st, acc, log := so.Store, so.Accounts, so.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	central := &bind.Once[aaa.Service]{What: "central AAA"}
	a := &Access{log: log, bodyTimeout: o.BodyTimeout}
	a.Verifier = auth.NewVerifier(auth.AccountsCheck(acc, func(ctx context.Context, name string) (bool, error) {
		return users.Exists(ctx, st, name)
	}), auth.VerifierOptions{Remote: func(ctx context.Context, name, password string) (auth.RemoteResult, error) {
		return remoteLogin(ctx, central, name, password)
	}})
	a.Peers = auth.NewPeers(auth.PeerOptions{
		UserGroup:    func(ctx context.Context, name string) (string, bool, error) { return userGroup(ctx, st, acc, name) },
		RefuseOthers: o.RefuseOthers,
	})
	a.Sessions = auth.NewSessions(auth.SessionOptions{Verifier: a.Verifier, Interval: o.ReauthInterval, Log: log})
	a.Throttle = auth.NewThrottle(o.Throttle)
	a.Web = auth.NewWebSessions(auth.WebOptions{Verifier: a.Verifier, Throttle: a.Throttle, Sessions: a.Sessions, RefusalDelay: RefusalDelay, Log: log})
	so.Accounts = accounts.Observe(acc, func(name string) {
		a.Verifier.Forget(name)
		a.Peers.Forget(name)
		a.Sessions.Changed(name)
	})
	so.AAAChanged = func() {
		a.Verifier.ForgetAll()
		a.Sessions.ChangedAll()
	}
	so.Sessions, so.CentralAAA = a.Sessions, central
	svc, err := service.Open(ctx, so)
	if err != nil {
		return nil, nil, err
	}
	a.svc = svc
	a.webhook = svc.Intent.WebhookHandler(intent.WebhookOptions{Throttle: a.Throttle, RefusalDelay: RefusalDelay, BodyTimeout: o.BodyTimeout})
	return a, svc, nil
}

// remoteLogin asks central AAA (once started) to check a login.
func remoteLogin(ctx context.Context, central *bind.Once[aaa.Service], name, password string) (auth.RemoteResult, error) {
	svc, err := central.Get()
	if err != nil {
		return auth.RemoteResult{}, err
	}
	var client string
	if a := auth.ClientAddr(ctx); a.IsValid() {
		client = a.String()
	}
	r, err := svc.Login(ctx, name, password, client)
	if errors.Is(err, aaa.ErrBusy) {
		err = auth.Busy(err)
	}
	return auth.RemoteResult{Answered: r.Answered, OK: r.OK, Group: r.Group, TTL: r.TTL}, err
}

// userGroup is the group of the User name (its account's primary group),
// and whether there is such a User.
func userGroup(ctx context.Context, st store.Config, acc accounts.Accounts, name string) (string, bool, error) {
	ok, err := users.Exists(ctx, st, name)
	if err != nil || !ok {
		return "", false, err
	}
	a, ok, err := acc.Lookup(ctx, name)
	if err != nil || !ok {
		return "", false, err
	}
	return a.Group, true, nil
}

// Handler puts h (the REST server, or what wraps it) behind authentication
// for one listener. local says only this host can reach the listener (plain
// HTTP on a loopback address, the Unix socket): requests without
// credentials are then its peer's, and its http.Server's ConnContext must
// be Peers.ConnContext. The intent's push webhook (model.IntentWebhookPath)
// goes around authentication: a git server has no login, its signature is
// checked instead, failures counted by the same throttle.
func (a *Access) Handler(h http.Handler, local bool) http.Handler {
	rest := a.svc.Handler
	o := auth.Options{Verifier: a.Verifier, Throttle: a.Throttle, BodyTimeout: a.bodyTimeout, Log: a.log,
		Access: rest.Access, Refused: rest.LogRefused, RefusalDelay: RefusalDelay, Web: a.Web}
	if local {
		o.Peers = a.Peers
	}
	authed := auth.Handler(h, o)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == model.IntentWebhookPath {
			a.webhook.ServeHTTP(w, r)
			return
		}
		authed.ServeHTTP(w, r)
	})
}

// Login checks a login on a door that is not HTTP (what: "gNMI"), as
// Handler does one with credentials.
func (a *Access) Login(what string) func(ctx context.Context, name, password string, addr netip.Addr) (auth.Identity, *auth.Refusal) {
	return func(ctx context.Context, name, password string, addr netip.Addr) (auth.Identity, *auth.Refusal) {
		return auth.Login(ctx, a.Verifier, a.Throttle, a.log, name, password, addr, what)
	}
}

// FirstAdmin makes the User FirstAdminName (group admin) when no User of
// group admin exists: on the first start, or after a store was removed.
// password is asked only then, and says where the password came from (for
// the messages; never the password itself).
func (a *Access) FirstAdmin(ctx context.Context, password func() (password, from string, err error)) error {
	eng := a.svc.Engine
	all, err := users.List(ctx, eng)
	if err != nil {
		return fmt.Errorf("read users: %w", err)
	}
	for _, u := range all {
		if u.Str("Group") == model.AdminGroup {
			return nil
		}
	}
	pw, from, err := password()
	if err != nil {
		return err
	}
	k := eng.Registry().AccountKind()
	fields := model.Object{"Name": FirstAdminName, "Group": model.AdminGroup, "Password": pw}
	_, err = eng.Apply(ctx, []engine.Edit{{Kind: k, Op: backend.Create, Fields: fields}}, engine.Meta{Source: "system", Comment: "the first admin"}, nil)
	if err != nil {
		return fmt.Errorf("make the first admin %q (password from %s): %w", FirstAdminName, from, err)
	}
	a.log.Info("made the first admin", "user", FirstAdminName, "group", model.AdminGroup, "password_from", from)
	return nil
}
