package sim

import (
	"context"
	"net/netip"
)

// SourceAddr is the IPv4 address configured on interface intf (its
// IPv4Intf, as the simulated switch applied it): the source address of
// connections that name the interface (a Tacacs server's SourceIntf). The
// zero Addr when it has none.
func (s *Sim) SourceAddr(ctx context.Context, intf string) (netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.applied["IPv4Intf"] {
		if o.Str("IntfRef") != intf {
			continue
		}
		p, err := netip.ParsePrefix(o.Str("IpAddr"))
		if err != nil {
			return netip.Addr{}, nil
		}
		return p.Addr(), nil
	}
	return netip.Addr{}, nil
}
