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
	if a := s.addressOf(o.Str("Interface")); a != "" {
		st["IpAddr"] = a
	}
	return st, nil
}

// addressOf is the IpAddr of intf's IPv4Intf as applied, else of the
// loopback it borrows from (an IPv4Unnumbered's), else "". Callers hold
// s.mu.
func (s *Sim) addressOf(intf string) string {
	for _, o := range s.applied["IPv4Intf"] {
		if o.Str("IntfRef") == intf {
			return o.Str("IpAddr")
		}
	}
	for _, u := range s.applied["IPv4Unnumbered"] {
		if u.Str("IntfRef") == intf {
			return s.addressOf(u.Str("Interface"))
		}
	}
	return ""
}
