package sim

import (
	"context"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// ndpDrivers keep NDPGlobal, a setting of the dataplane's neighbour tables
// (and of the routing daemon's router advertisements), and say the timers
// a Linux switch would have: its kernel's own at the factory values, else
// the configured ones.
func (s *Sim) ndpDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"NDPGlobal": {Apply: s.record, State: func(_ context.Context, o model.Object) (model.Object, error) {
			return model.NDPInEffect(o, 0, 0), nil
		}},
	}
}
