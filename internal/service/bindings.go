package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// The roles a provider takes for a kind.
const (
	RoleConfig   = "config"   // applies the kind's changes (exactly one per config kind)
	RoleDiscover = "discover" // says what the switch has by itself (at most one)
	RoleState    = "state"    // a share of the kind's state (any number)
	RoleList     = "list"     // lists a state-only kind's objects (exactly one)
	RoleSource   = "source"   // the service's own source of a state-only kind (exactly one)
	RoleLog      = "log"      // the config log (exactly one, for the config log's kind)
	RoleAction   = "action"   // runs an action (exactly one per action)
)

// Binding says that a provider takes one role for one kind.
type Binding struct {
	Kind, Provider, Role string
}

// Table is every binding of the service, in the order they were made.
type Table struct {
	rows []Binding
}

func (t *Table) add(kind, provider, role string) {
	t.rows = append(t.rows, Binding{Kind: kind, Provider: provider, Role: role})
}

// Bindings returns the table's rows sorted by kind, role and provider.
func (t *Table) Bindings() []Binding {
	out := slices.Clone(t.rows)
	slices.SortStableFunc(out, func(a, b Binding) int {
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
	by := map[string]map[string][]string{}
	for _, b := range t.rows {
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

// provider is one provider's drivers, by kind name.
type provider struct {
	name    string
	drivers map[string]*backend.Driver
}

// compose binds every driver of ps in t and returns one driver per kind:
// the config fields of the provider that applies it, the discovery of the
// one that discovers it, and every provider's state merged in the order of
// ps.
func compose(t *Table, ps []provider) map[string]*backend.Driver {
	out := map[string]*backend.Driver{}
	states := map[string][]func(context.Context, model.Object) (model.Object, error){}
	for _, p := range ps {
		for _, kind := range sortedKinds(p.drivers) {
			d := p.drivers[kind]
			m := out[kind]
			if m == nil {
				m = &backend.Driver{}
				out[kind] = m
			}
			if d.Apply != nil {
				t.add(kind, p.name, RoleConfig)
				m.Check, m.Prepare, m.Apply, m.Revert, m.Replay = d.Check, d.Prepare, d.Apply, d.Revert, d.Replay
				m.Reconcile, m.Settle, m.Sync = d.Reconcile, d.Settle, d.Sync
			}
			if d.Discover != nil {
				t.add(kind, p.name, RoleDiscover)
				m.Discover = d.Discover
			}
			if d.List != nil {
				t.add(kind, p.name, RoleList)
				m.List = d.List
			}
			if d.State != nil {
				t.add(kind, p.name, RoleState)
				states[kind] = append(states[kind], d.State)
			}
		}
	}
	for kind, parts := range states {
		if len(parts) == 1 {
			out[kind].State = parts[0]
			continue
		}
		out[kind].State = func(ctx context.Context, o model.Object) (model.Object, error) {
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
	return out
}

func sortedKinds(ds map[string]*backend.Driver) []string {
	out := make([]string, 0, len(ds))
	for k := range ds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// plane is what the engine applies configuration to: the composed drivers
// of every provider, applied through the Linux dataplane's batch when it
// is the dataplane (its companions included), else commit by commit.
type plane struct {
	name    string
	drivers map[string]*backend.Driver
	batch   backend.Batcher // nil: commit by commit
	close   func() error
}

func (p *plane) Name() string                        { return p.name }
func (p *plane) Drivers() map[string]*backend.Driver { return p.drivers }
func (p *plane) Close() error                        { return p.close() }

// ApplyBatch implements backend.Batcher.
func (p *plane) ApplyBatch(ctx context.Context, commits []*backend.Commit) (int, error) {
	if p.batch != nil {
		return p.batch.ApplyBatch(ctx, commits)
	}
	for i, c := range commits {
		if err := backend.ApplyCommit(ctx, p.drivers, c); err != nil {
			return i, err
		}
	}
	return len(commits), nil
}
