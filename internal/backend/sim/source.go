package sim

import (
	"context"
	"net/netip"
)

// SourceAddr is the IPv4 address configured on interface intf (its
// IPv4Intf, or the loopback's it borrows, as the simulated switch applied
// them): the source address of connections that name the interface (a
// Tacacs server's SourceIntf). The zero Addr when it has none.
func (s *Sim) SourceAddr(ctx context.Context, intf string) (netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := netip.ParsePrefix(s.addressOf(intf))
	if err != nil {
		return netip.Addr{}, nil
	}
	return p.Addr(), nil
}
