package sim

import (
	"context"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// unnumberedDrivers: an unnumbered IPv4 interface (IPv4Unnumbered) is kept
// and its state says the address it borrows (its loopback's IPv4Intf, as
// the simulated switch applied it), up as its interface is.
func (s *Sim) unnumberedDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"IPv4Unnumbered": {Apply: s.record, State: s.unnumberedState, Replay: true},
	}
}

func (s *Sim) unnumberedState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.intf(o.Str("IntfRef"))
	st := model.Object{"OperState": upDown(in.up)}
	if in.ifIndex != 0 {
		st["IfIndex"] = in.ifIndex
	}
	for _, lent := range s.applied["IPv4Intf"] {
		if lent.Str("IntfRef") == o.Str("Interface") {
			st["IpAddr"] = lent.Str("IpAddr")
		}
	}
	return st, nil
}
