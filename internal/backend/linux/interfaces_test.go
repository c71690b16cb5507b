package linux

import (
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// Every interface kind of the model has its netdev on the Linux dataplane:
// a VLAN's SVI, a LogicalIntf's loopback.
func TestEveryInterfaceKindHasANetdev(t *testing.T) {
	b := &Backend{}
	in := backend.Interfaces[netdev]{Model: model.Builtin(), ByKind: b.interfaceNetdevs()}
	if missing := in.Missing(); len(missing) != 0 {
		t.Errorf("interface kinds without a netdev: %v", missing)
	}
	for name, want := range map[string]netdev{"vlan10": {name: SVIName(10)}, "Loopback1": {name: "Loopback1", loopback: true}} {
		if got, err := in.Resolve(name); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
}
