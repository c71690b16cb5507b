package cli

import (
	"strings"

	"github.com/swmgr/swmgr/internal/model"
)

// catalog is everything the CLI takes from the object model, looked up in
// this one place: which kinds (config and actions) have commands, which
// contexts hold which, which kinds have state shows, and the few roles the
// CLI needs (the host name for the prompt, the save action for `write
// memory`). When actions and roles come from a declared registry, only
// newCatalog changes.
type catalog struct {
	reg      *model.Registry
	top      []*model.Kind            // commands of (config)#, in model order
	children map[string][]*model.Kind // commands of a kind's context
	shows    []*model.Kind            // kinds with a state show
	config   []*model.Kind            // config kinds with commands, in `show run` order

	hostKind  *model.Kind // the singleton that holds the host name
	hostField string
	saveKind  *model.Kind // the action `write memory` runs
	logKind   *model.Kind // the config log (confirmations)
	// userKind is the kind of the switch's login accounts (model.Account,
	// keyed by a user name), accessField its field that says whether a
	// user may have a shell.
	userKind    *model.Kind
	accessField *model.Field
	shellAccess string // accessField's value that allows a shell
}

// Kinds named in absent (the server does not serve them) get no command.
func newCatalog(reg *model.Registry, absent map[string]bool) *catalog {
	c := &catalog{reg: reg, children: map[string][]*model.Kind{}}
	stateShows := map[string]bool{}
	for _, k := range reg.Kinds() {
		if absent[k.Name] {
			k.CLI = nil
			continue
		}
		if k.Class == model.Config && k.CLI == nil {
			k.CLI = derivedCommand(k)
		}
		if k.Class == model.State && k.CLI != nil {
			stateShows[strings.Join(k.CLIShow(), " ")] = true
		}
	}
	for _, k := range reg.Kinds() {
		if k.Singleton && c.hostKind == nil {
			for _, f := range k.Fields {
				if f.Format == model.FormatHostname {
					c.hostKind, c.hostField = k, f.Name
				}
			}
		}
		if k.Source == model.SourceConfigLog {
			c.logKind = k
		}
		if k.Account != nil && len(k.Keys()) == 1 {
			if f := k.Field(k.Account.ShellField); f != nil {
				c.userKind, c.accessField, c.shellAccess = k, f, k.Account.ShellValue
			}
		}
		if k.CLI == nil {
			continue
		}
		// A state kind's show wins over a config kind's with the same
		// words (`show ip route` is the routing table, not IPv4Route).
		if k.Class == model.State || (k.Class == model.Config && !stateShows[strings.Join(k.CLIShow(), " ")]) {
			c.shows = append(c.shows, k)
		}
		if k.Class == model.State {
			continue
		}
		if len(k.CLI.Parents) == 0 {
			c.top = append(c.top, k)
		}
		for _, p := range k.CLI.Parents {
			c.children[p] = append(c.children[p], k)
		}
		if k.Class == model.Action && k.SavesConfig {
			c.saveKind = k
		}
	}
	c.config = c.runOrder()
	return c
}

// derivedCommand is the command of a config kind the model gives no CLI
// declaration: FlexSwitch 2.x's way for objects without a curated model.
// The kind's name in lower case is the word and the prompt segment (`vlan
// 10` -> (config-vlan)#), its keys are the values, and its fields' REST
// names are the words inside the context.
func derivedCommand(k *model.Kind) *model.CLICommand {
	w := strings.ToLower(k.Name)
	return &model.CLICommand{Words: []string{w}, Prompt: []string{w}}
}

// leadKeys are the key fields typed before the value field when a kind's
// key has several parts (`ip route <DestinationNw> <NetworkMask>`).
func (c *catalog) leadKeys(k *model.Kind) []*model.Field {
	if k.CLI.Value != "" || k.CLI.Join || k.Singleton {
		return nil
	}
	vf := c.valueField(k)
	var out []*model.Field
	for _, f := range k.Keys() {
		if f != vf && f.Name != k.CLI.Inherit {
			out = append(out, f)
		}
	}
	return out
}

// isAction reports whether k's command queues an action rather than an
// object change.
func (c *catalog) isAction(k *model.Kind) bool { return k.Class == model.Action }

// valueField is the field the token after k's command words sets.
// Singletons have none unless they declare one (`router bgp <ASNum>`).
func (c *catalog) valueField(k *model.Kind) *model.Field {
	if k.Singleton && k.CLI.Value == "" {
		return nil
	}
	return k.CLIValueField()
}

// inherited is the value a child context takes from its parent's object:
// the parent's last key (a port's IntfRef, a BGP VRF's Name).
func (c *catalog) inherited(parent *model.Kind, key model.Object) any {
	keys := parent.Keys()
	if len(keys) == 0 {
		return nil
	}
	return key[keys[len(keys)-1].Name]
}

// descendants are k's child kinds, recursively.
func (c *catalog) descendants(k *model.Kind) []*model.Kind {
	var out []*model.Kind
	for _, ch := range c.children[k.Name] {
		if ch == k {
			continue
		}
		out = append(out, ch)
		out = append(out, c.descendants(ch)...)
	}
	return out
}

// runOrder orders the top-level config kinds so that a kind comes after
// every kind it or its children refer to: pasting `show run` then creates
// a VRF before the interface address that uses it.
func (c *catalog) runOrder() []*model.Kind {
	var tops []*model.Kind
	for _, k := range c.top {
		if k.Class == model.Config {
			tops = append(tops, k)
		}
	}
	owner := map[string]*model.Kind{}
	for _, k := range tops {
		owner[k.Name] = k
		for _, d := range c.descendants(k) {
			owner[d.Name] = k
		}
	}
	needs := map[*model.Kind][]*model.Kind{}
	for _, k := range tops {
		for _, m := range append([]*model.Kind{k}, c.descendants(k)...) {
			for _, f := range m.Fields {
				if o := owner[f.Ref]; o != nil && o != k {
					needs[k] = append(needs[k], o)
				}
			}
		}
	}
	var out []*model.Kind
	placed := map[*model.Kind]bool{}
	var place func(k *model.Kind, seen map[*model.Kind]bool)
	place = func(k *model.Kind, seen map[*model.Kind]bool) {
		if placed[k] || seen[k] {
			return
		}
		seen[k] = true
		for _, n := range needs[k] {
			place(n, seen)
		}
		placed[k] = true
		out = append(out, k)
	}
	for _, k := range tops {
		place(k, map[*model.Kind]bool{})
	}
	return out
}
