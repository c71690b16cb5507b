package bind

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// The roles a provider takes for a kind, as the table lists them.
const (
	RoleConfig   = "config"   // applies the kind's changes (exactly one per config kind)
	RoleDiscover = "discover" // says what the switch has by itself (at most one)
	RoleState    = "state"    // a share of the kind's state (any number)
	RoleList     = "list"     // lists a state-only kind's objects (exactly one)
	RoleSource   = "source"   // the service's own source of a state-only kind (exactly one)
	RoleLog      = "log"      // the config log (exactly one, for the config log's kind)
	RoleAction   = "action"   // runs an action (exactly one per action)
)

// Row says that a provider takes one role for one kind. Package is the Go
// package that declares the provider's type: where the code that answers
// for the kind lives (the architecture tests hold kind names to it).
type Row struct {
	Kind, Provider, Role string
	Package              string
}

// Table is every binding of the service: the composed drivers the engine
// applies through, and the actions and state sources every front door
// reaches. The root makes it (NewTable), binds its providers (Bind) in two
// steps, those the engine applies through and then those that use the
// engine, and seals it (Seal), which checks it; it is read-only after.
type Table struct {
	reg     *model.Registry
	rows    []Row
	drivers map[string]*backend.Driver
	states  map[string][]func(context.Context, model.Object) (model.Object, error)
	actions map[string]*Action
	sources map[string]Source
	// handedOut: Drivers was called, so no driver may be bound any more
	// (the engine holds them); sealed: checked, nothing may be bound.
	handedOut, sealed bool
}

// NewTable is an empty table for the kinds reg declares.
func NewTable(reg *model.Registry) *Table {
	return &Table{reg: reg, drivers: map[string]*backend.Driver{}, states: map[string][]func(context.Context, model.Object) (model.Object, error){},
		actions: map[string]*Action{}, sources: map[string]Source{}}
}

// Build makes and seals the table of the providers' bindings.
func Build(reg *model.Registry, providers ...Provider) (*Table, error) {
	t := NewTable(reg)
	if err := t.Bind(providers...); err != nil {
		return nil, err
	}
	if err := t.Seal(); err != nil {
		return nil, err
	}
	return t, nil
}

// Bind adds the providers' bindings, in the order given (the order their
// state shares are merged in). Once Drivers handed the drivers out it
// takes only shares of state (read through the same drivers, before the
// engine starts), and once the table is sealed nothing: a binding made
// after it could be used is a bug, said at start.
func (t *Table) Bind(providers ...Provider) error {
	if t.sealed {
		return errors.New("bind: the table is sealed: bind every provider before Seal")
	}
	for _, p := range providers {
		name, pkg := p.Name(), packageOf(p)
		for _, b := range p.Bindings() {
			if b.Action != nil {
				t.add(b.Kind, name, pkg, RoleAction)
				t.actions[b.Kind] = b.Action
			}
			if b.Source != nil {
				t.add(b.Kind, name, pkg, RoleSource)
				t.sources[b.Kind] = b.Source
			}
			if b.Log {
				t.add(b.Kind, name, pkg, RoleLog)
			}
			d := b.Driver
			if d == nil {
				continue
			}
			if t.handedOut && (d.Apply != nil || d.Discover != nil || d.List != nil) {
				// A share of state is read through the driver the engine
				// holds; what it applies, discovers or lists it took already.
				return fmt.Errorf("bind: %s binds a driver of %s after the engine took the drivers: bind the providers the engine applies through first", name, b.Kind)
			}
			m := t.drivers[b.Kind]
			if m == nil {
				m = &backend.Driver{}
				t.drivers[b.Kind] = m
			}
			if d.Apply != nil {
				t.add(b.Kind, name, pkg, RoleConfig)
				m.Check, m.Prepare, m.Apply, m.Revert, m.Replay = d.Check, d.Prepare, d.Apply, d.Revert, d.Replay
				m.Reconcile, m.Settle, m.Sync = d.Reconcile, d.Settle, d.Sync
			}
			if d.Discover != nil {
				t.add(b.Kind, name, pkg, RoleDiscover)
				m.Discover = d.Discover
			}
			if d.List != nil {
				t.add(b.Kind, name, pkg, RoleList)
				m.List = d.List
			}
			if d.State != nil {
				t.add(b.Kind, name, pkg, RoleState)
				t.states[b.Kind] = append(t.states[b.Kind], d.State)
				m.State = mergeStates(t.states[b.Kind])
			}
		}
	}
	return nil
}

// Seal checks the table against its declarations (Check) and closes it to
// bindings.
func (t *Table) Seal() error {
	if err := t.Check(t.reg); err != nil {
		return err
	}
	t.sealed = true
	return nil
}

// Partial makes and seals a table of some of the providers a service has:
// the kinds it binds are checked as Check does, the kinds it leaves out
// are answered "not provided" (501). Tests that serve part of the service
// use it; the service's own table is complete (Build).
func Partial(reg *model.Registry, providers ...Provider) (*Table, error) {
	t := NewTable(reg)
	if err := t.Bind(providers...); err != nil {
		return nil, err
	}
	if err := t.SealPartial(); err != nil {
		return nil, err
	}
	return t, nil
}

// SealPartial is Seal for a table of part of a service (Partial).
func (t *Table) SealPartial() error {
	if err := checkRows(t.reg, t.rows, false); err != nil {
		return err
	}
	t.sealed = true
	return nil
}

func (t *Table) add(kind, provider, pkg, role string) {
	t.rows = append(t.rows, Row{Kind: kind, Provider: provider, Role: role, Package: pkg})
}

// packageOf is the package that declares p's type.
func packageOf(p Provider) string {
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath()
}

// Registry is the declarations the table was checked against.
func (t *Table) Registry() *model.Registry { return t.reg }

// Drivers are the composed drivers, one per kind: the config fields of
// the provider that applies it, the discovery of the one that discovers
// it, and every provider's state merged. Once they are handed out, no
// driver can be bound.
func (t *Table) Drivers() map[string]*backend.Driver {
	t.handedOut = true
	return t.drivers
}

// Compose is the drivers the providers bound in that order compose
// (Drivers), unchecked: a provider made of parts (the Linux dataplane's
// kernel and daemons) says its own drivers with the table's one rule.
func Compose(providers ...Provider) map[string]*backend.Driver {
	t := NewTable(nil)
	_ = t.Bind(providers...) // a new table takes every binding
	return t.Drivers()
}

// Rows returns the table's rows sorted by kind, role and provider.
func (t *Table) Rows() []Row {
	out := slices.Clone(t.rows)
	slices.SortStableFunc(out, func(a, b Row) int {
		return strings.Compare(a.Kind+"\x00"+a.Role+"\x00"+a.Provider, b.Kind+"\x00"+b.Role+"\x00"+b.Provider)
	})
	return out
}

// Providers returns, per provider, the kinds it is bound to.
func (t *Table) Providers() map[string][]string {
	out := map[string][]string{}
	for _, b := range t.rows {
		if !slices.Contains(out[b.Provider], b.Kind) {
			out[b.Provider] = append(out[b.Provider], b.Kind)
		}
	}
	for _, ks := range out {
		slices.Sort(ks)
	}
	return out
}

// Check reports the first kind of reg whose bindings are not those its
// declaration asks for, naming it and its providers: a config kind has
// exactly one config driver and at most one discovery; a state-only kind
// has exactly one source of the kind its declaration names; an action has
// exactly one handler; and nothing is bound to a kind reg does not declare.
func (t *Table) Check(reg *model.Registry) error {
	return CheckRows(reg, t.rows)
}

// CheckRows is Check of rows.
func CheckRows(reg *model.Registry, rows []Row) error { return checkRows(reg, rows, true) }

// checkRows checks rows against reg's declarations; complete: every
// declared kind, else only those the rows bind.
func checkRows(reg *model.Registry, rows []Row, complete bool) error {
	by := map[string]map[string][]string{}
	for _, b := range rows {
		if reg.Named(b.Kind) == nil {
			return fmt.Errorf("%s binds %s as %s, which is not a declared kind", b.Provider, b.Kind, b.Role)
		}
		if by[b.Kind] == nil {
			by[b.Kind] = map[string][]string{}
		}
		by[b.Kind][b.Role] = append(by[b.Kind][b.Role], b.Provider)
	}
	for _, k := range reg.Kinds() {
		roles := by[k.Name]
		if !complete && (roles == nil || k.Class == model.Config) {
			// A part of a service: its config kinds may be applied
			// through an engine of their own.
			continue
		}
		exactly := func(role string) error {
			if n := len(roles[role]); n != 1 {
				return fmt.Errorf("kind %s: %d providers take the role %s (%s); its declaration asks for one", k.Name, n, role, strings.Join(roles[role], ", "))
			}
			return nil
		}
		allowed := map[string]bool{}
		switch k.Class {
		case model.Config:
			if err := exactly(RoleConfig); err != nil {
				return err
			}
			if n := len(roles[RoleDiscover]); n > 1 {
				return fmt.Errorf("kind %s: %d providers discover it (%s); at most one may", k.Name, n, strings.Join(roles[RoleDiscover], ", "))
			}
			if k.Discovered && len(roles[RoleDiscover]) == 0 {
				return fmt.Errorf("kind %s is declared discovered, and no provider discovers it", k.Name)
			}
			allowed = map[string]bool{RoleConfig: true, RoleDiscover: true, RoleState: true}
		case model.State:
			role := map[string]string{model.SourceBackend: RoleList, model.SourceService: RoleSource, model.SourceConfigLog: RoleLog}[k.Source]
			if role == "" {
				return fmt.Errorf("state kind %s comes from source %q, which no provider is", k.Name, k.Source)
			}
			if err := exactly(role); err != nil {
				return err
			}
			allowed[role] = true
		case model.Action:
			if err := exactly(RoleAction); err != nil {
				return err
			}
			allowed[RoleAction] = true
		}
		for role, ps := range roles {
			if !allowed[role] {
				return fmt.Errorf("kind %s (%s): %s takes the role %s, which its declaration does not have", k.Name, k.Class, strings.Join(ps, ", "), role)
			}
		}
	}
	return nil
}

// NotRun is an action call the table refused before running it (the
// caller may not); the front door records it in the config log, since no
// action did.
type NotRun struct{ Err error }

func (e *NotRun) Error() string { return e.Err.Error() }
func (e *NotRun) Unwrap() error { return e.Err }

// Authorize says whether c.Caller may run the action c names with its
// fields: the role its declaration asks (or, for an action declared with a
// Self field, the user that field names), then what the provider declares
// the call needs (Action.Needs).
func (t *Table) Authorize(c Call) error {
	k := c.Kind
	a := k.AccessFor(http.MethodPost)
	if !a.Allows(c.Caller.Role, c.Caller.Name, c.Fields) {
		if a.Self != "" {
			return apierr.New(http.StatusForbidden, apierr.CodeForbidden, k.Name, a.Self,
				"user %s may run %s only for itself (%s %q is not its name); %s may run it for anyone", c.Caller.Name, k.Name, a.Self, c.Fields.Str(a.Self), model.Access{Role: a.Role}.Who())
		}
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, k.Name, "", "user %s (%s) may not run %s; that needs %s", c.Caller.Name, c.Caller.Role, k.Name, a.Who())
	}
	if act := t.actions[k.Name]; act != nil && act.Needs != nil {
		if need := act.Needs(c); c.Caller.Role < need.Role {
			return apierr.New(http.StatusForbidden, apierr.CodeForbidden, k.Name, need.Field, "%s (user %s is %s)", need.Why, c.Caller.Name, c.Caller.Role)
		}
	}
	return nil
}

// Run runs the action c names, once Authorize lets it: its refusal comes
// back as a *NotRun, not recorded anywhere; what the action does it records
// itself (Call.Log). A dry run of an action that cannot report one
// (model.Kind.DryRunnable false) is answered here, with nothing run: the
// checks that the front door made were all there is.
func (t *Table) Run(ctx context.Context, c Call) (Result, error) {
	if !t.sealed {
		return Result{}, &NotRun{Err: fmt.Errorf("bind: %s run before the table is sealed", c.Kind.Name)}
	}
	if err := t.Authorize(c); err != nil {
		return Result{}, &NotRun{Err: err}
	}
	if c.DryRun && !c.Kind.DryRunnable {
		return Result{DryRun: true, Changes: []model.Diff{}}, nil
	}
	act := t.actions[c.Kind.Name]
	if act == nil {
		return Result{}, &NotRun{Err: apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, c.Kind.Name, "", "the %s action is not available in this build of swmgr", c.Kind.Name)}
	}
	return act.Run(ctx, c)
}

// StateObjects lists the objects of the state-only kind k from the source
// its declaration names: the service's own (a Source) or its provider's
// list driver.
func (t *Table) StateObjects(ctx context.Context, k *model.Kind) ([]model.Object, error) {
	if !t.sealed {
		return nil, fmt.Errorf("bind: %s read before the table is sealed", k.Name)
	}
	switch k.Source {
	case model.SourceService:
		if src := t.sources[k.Name]; src != nil {
			return src(ctx)
		}
		return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "this swmgr does not provide %s", k.Name)
	case model.SourceBackend:
		d := t.drivers[k.Name]
		if d == nil || d.List == nil {
			return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "no provider of this swmgr lists %s", k.Name)
		}
		objs, err := d.List(ctx)
		if err != nil {
			var ae *apierr.Error
			if errors.As(err, &ae) {
				return nil, err
			}
			return nil, apierr.New(http.StatusInternalServerError, apierr.CodeBackend, k.Name, "", "the switch failed to list %s: %v", k.Name, err)
		}
		return objs, nil
	}
	return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "%s comes from source %q, which is read otherwise", k.Name, k.Source)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mergeStates is one state function of the shares of several providers:
// each share's fields, later providers' over earlier ones'.
func mergeStates(parts []func(context.Context, model.Object) (model.Object, error)) func(context.Context, model.Object) (model.Object, error) {
	if len(parts) == 1 {
		return parts[0]
	}
	parts = slices.Clone(parts)
	return func(ctx context.Context, o model.Object) (model.Object, error) {
		st := model.Object{}
		for _, part := range parts {
			got, err := part(ctx, o)
			if err != nil {
				return nil, err
			}
			for n, v := range got {
				st[n] = v
			}
		}
		return st, nil
	}
}

// Packages returns, per kind, the packages of the providers bound to it:
// where the code that answers for it lives.
func (t *Table) Packages() map[string][]string {
	out := map[string][]string{}
	for _, r := range t.rows {
		if !slices.Contains(out[r.Kind], r.Package) {
			out[r.Kind] = append(out[r.Kind], r.Package)
		}
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}
