package linux

import (
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
)

// The Linux dataplane's providers, by name: the kernel's kinds and
// the daemons and host settings it runs (FRR, chronyd, /etc).
const (
	DataplaneProvider = "linux dataplane"
	DaemonsProvider   = "linux daemons"
)

// Part is a part of the Linux dataplane as a provider of the binding table: its
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
