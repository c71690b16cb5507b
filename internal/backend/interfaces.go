package backend

import (
	"fmt"

	"github.com/swmgr/swmgr/internal/model"
)

// Interfaces resolves the name of an interface of the switch (a name of
// one of the model's interface kinds, model.Interface: fpPort1, vlan10,
// Loopback1) to what one dataplane makes of it, its device D: the Linux
// backend's netdev, the simulated switch's port or VLAN. The model says
// which kind and object a name names; the dataplane declares, per
// interface kind, how such an interface becomes its device. A new
// interface kind (a LAG) is its declaration in the model and one entry
// here in each dataplane; Missing names a kind a dataplane forgot.
type Interfaces[D any] struct {
	Model *model.Registry
	// ByKind resolves an interface of a kind, given its name and the
	// store key of the object that declares it.
	ByKind map[string]func(name, key string) (D, error)
}

// Resolve returns the device of the interface named name.
func (in Interfaces[D]) Resolve(name string) (D, error) {
	var none D
	k, key, ok := in.Model.InterfaceOf(name)
	if !ok {
		return none, fmt.Errorf("%q is not an interface of the switch", name)
	}
	resolve := in.ByKind[k.Name]
	if resolve == nil {
		return none, fmt.Errorf("interface %s: this dataplane has no %s interfaces", name, k.Name)
	}
	return resolve(name, key)
}

// Missing returns the model's interface kinds the dataplane cannot resolve.
func (in Interfaces[D]) Missing() []string {
	var out []string
	for _, k := range in.Model.Interfaces() {
		if in.ByKind[k.Name] == nil {
			out = append(out, k.Name)
		}
	}
	return out
}
