// Package bind is swmgr's switchboard: the one table that says which
// provider answers for each declared kind and action, and the contracts
// through which every front door (REST, gNMI, and any later one) reaches
// them.
//
// It sits below every provider and every front door and imports only the
// object model, the driver contract (package backend) and the error types.
// A provider (the dataplane, the daemons, the accounts, the lifecycle,
// central AAA, the history and config log, the service's own states)
// implements Provider: it declares its own rows, each a kind with what the
// provider does for it (a config Driver, a state Source, an Action). The
// composition root (package service) builds one Table from the providers
// it constructs (Build), which checks the rows against the declarations
// and refuses to start naming the kind that is wrong; the engine applies
// through the table's composed drivers, and the front doors run actions
// (Table.Run) and read state-only kinds (Table.StateObjects) through it.
//
// Authorization of actions is declared and enforced here, once: the role
// an action's declaration names (model.Kind.WriteRole), its Self field (a
// user may run it for itself), and what a provider declares a call needs
// beyond that given its fields (Action.Needs). A front door only says who
// is calling (Call.Caller); no front door and no provider checks roles of
// actions itself.
package bind

import (
	"context"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// Meta says who made a request and why: it is recorded with every commit
// and config log entry.
type Meta struct {
	User    string // "" for unauthenticated local HTTP
	Addr    string // ip:port of the caller
	Source  string // rest, cli, gnmi, rollback, confirm-timeout, system, reset, restore, startup
	Comment string
}

// LogInfo is what the config log records about a request besides its
// result.
type LogInfo struct {
	API       string // lower-case kind name
	Operation string // POST, PATCH or DELETE
	Data      string // the request, compact JSON, secrets redacted
	// Named says the request named its object by ObjectId or query
	// string: the entry's Data then also gives the object's key fields and
	// ObjectId, so that it says which object was changed.
	Named bool
}

// Caller is who runs an action, as the front door authenticated it.
type Caller struct {
	Name string // "" for the unauthenticated local admin
	Role model.Role
}

// Call is one run of an action.
type Call struct {
	Kind *model.Kind
	// Fields are parsed, defaulted and validated by the model.
	Fields model.Object
	// DryRun: report what the action would do, doing nothing.
	DryRun bool
	Caller Caller
	Meta   Meta
	// Log is where the action records its result in the config log (a
	// commit's, or the engine's Log/LogSuccess); nil on a dry run.
	Log *LogInfo
}

// Result is an action's answer.
type Result struct {
	// Revision is the commit the action made, 0 for none.
	Revision uint64
	// Changes are the objects it changed, or would change on a dry run,
	// secrets masked.
	Changes []model.Diff
	// DryRun says the action changed nothing and only reports.
	DryRun bool
	// Value is the answer as the action gives it: a struct or a map that
	// each front door encodes (REST as the response's JSON body). Nil is
	// a plain success.
	Value any
}

// Action is a provider's action: Run does it; Needs, if set, is what a
// call needs beyond the role the action's declaration names, given its
// fields (a file path outside the data directory, say).
type Action struct {
	Run   func(ctx context.Context, c Call) (Result, error)
	Needs func(c Call) Need
}

// Need is the role a call needs, the field that makes it so and why, in
// words for the refusal. The zero Need asks nothing more.
type Need struct {
	Role  model.Role
	Field string
	Why   string
}

// Source lists the objects of a state-only kind, in a stable order.
type Source func(ctx context.Context) ([]model.Object, error)

// Binding is one row a provider declares: what it does for one kind. Only
// the parts it takes are set.
type Binding struct {
	Kind string
	// Driver applies a config kind's changes (Apply), discovers what the
	// switch has by itself (Discover), gives a share of a kind's state
	// (State) or lists a state-only kind (List).
	Driver *backend.Driver
	// Source lists a state-only kind the service fills itself.
	Source Source
	// Log says the provider keeps the entries of a config log kind.
	Log bool
	// Action runs an action.
	Action *Action
}

// Provider is one part of the service that answers for kinds.
type Provider interface {
	// Name names the provider in the table and in messages.
	Name() string
	// Bindings are its rows.
	Bindings() []Binding
}

// Rows is a Provider made of a name and its rows.
type Rows struct {
	Of   string
	Rows []Binding
}

// Name implements Provider.
func (r Rows) Name() string { return r.Of }

// Bindings implements Provider.
func (r Rows) Bindings() []Binding { return r.Rows }

// Drivers is a provider's rows made of config drivers, by kind name.
func Drivers(ds map[string]*backend.Driver) []Binding {
	return rows(ds, func(kind string, d *backend.Driver) Binding { return Binding{Kind: kind, Driver: d} })
}

// Actions are the rows of a provider's actions, by action name, in a
// stable order.
func Actions(as map[string]*Action) []Binding {
	return rows(as, func(kind string, a *Action) Binding { return Binding{Kind: kind, Action: a} })
}

func rows[V any](m map[string]V, row func(string, V) Binding) []Binding {
	out := make([]Binding, 0, len(m))
	for _, kind := range sortedKeys(m) {
		out = append(out, row(kind, m[kind]))
	}
	return out
}

// MayChange is the one rule for the changes a commit makes that its
// caller did not name one by one (a rollback's, a candidate's, a gNMI
// Set's once resolved, a breakout's sub-ports), and for deciding the fate
// of a commit awaiting confirmation (confirming it, cancelling it, moving
// its deadline), whatever the front door: a change of an object of kind k
// needs the role k declares for writing it, so an operator may not touch
// a User. It is the engine's Request.Allow for the caller; what names the
// request in the refusal (the kind's name when ""). It is nil for an
// admin, who may make every change (the unauthenticated local admin
// included).
func (c Caller) MayChange(what string) func(k *model.Kind, op backend.Op, key string) error {
	if c.Role >= model.RoleAdmin {
		return nil
	}
	return func(k *model.Kind, op backend.Op, key string) error {
		need := k.AccessFor(http.MethodPost)
		if c.Role >= need.Role {
			return nil
		}
		kind := what
		if kind == "" {
			kind = k.Name
		}
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, kind, "", "this would %s %s %s; only %s may change %s objects (user %s is %s)", op, k.Name, key, need.Who(), k.Name, c.Name, c.Role)
	}
}
