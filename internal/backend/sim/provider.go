package sim

import (
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
)

// The simulated switch's providers, by name: its dataplane (ports,
// VLANs, routes and the rest of the kernel's kinds) and its daemons (BGP,
// NTP, the host settings), kept and not run.
const (
	DataplaneProvider = "simulated dataplane"
	DaemonsProvider   = "simulated daemons"
)

// Part is a part of the simulated switch as a provider of the binding table: its
// drivers, by kind name, and its actions.
type Part struct {
	Of      string
	Drivers map[string]*backend.Driver
	// Actions are the actions it runs, by name.
	Actions map[string]*bind.Action
}

// Name implements bind.Provider.
func (p Part) Name() string { return p.Of }

// Bindings implements bind.Provider.
func (p Part) Bindings() []bind.Binding {
	return append(bind.Drivers(p.Drivers), bind.Actions(p.Actions)...)
}
