package aaa

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
)

// SourceAddrFunc returns the IPv4 address an interface has as the backend
// knows it (the kernel's on the Linux backend, the configured IPv4Intf's
// on the simulated switch); the zero Addr when it has none.
type SourceAddrFunc func(ctx context.Context, intf string) (netip.Addr, error)

// sourceIntf is a server's SourceIntf: connections to the server take the
// interface's address as their source, read at each connection (the
// address may change without a commit of the AAA kinds). When the
// interface has no address, or the address cannot be sent from, they take
// the routing table's source, and the log says so (once each time the
// reason changes).
type sourceIntf struct {
	intf, server string
	lookup       SourceAddrFunc
	notes        *sourceNotes
}

// addr is the local address to dial from; nil: the routing table's.
func (s *sourceIntf) addr(ctx context.Context) *net.TCPAddr {
	if s == nil {
		return nil
	}
	a, err := s.lookup(ctx, s.intf)
	switch {
	case err != nil:
		s.notes.set(s.server, fmt.Sprintf("the address of SourceIntf %s cannot be read: %v", s.intf, err))
		return nil
	case !a.IsValid():
		s.notes.set(s.server, fmt.Sprintf("SourceIntf %s has no IPv4 address", s.intf))
		return nil
	}
	return &net.TCPAddr{IP: a.AsSlice()}
}

// used notes that a connection was made from the interface's address.
func (s *sourceIntf) used() { s.notes.set(s.server, "") }

// unusable notes that the interface's address could not be sent from.
func (s *sourceIntf) unusable(a *net.TCPAddr, err error) {
	s.notes.set(s.server, fmt.Sprintf("the address %s of SourceIntf %s cannot be sent from here: %v", a.IP, s.intf, err))
}

// sourceNotes are the reasons the servers' connections take the routing
// table's source, by server, logged as they change.
type sourceNotes struct {
	log *slog.Logger
	mu  sync.Mutex
	why map[string]string
}

func (n *sourceNotes) set(server, why string) {
	n.mu.Lock()
	old, known := n.why[server]
	n.why[server] = why
	n.mu.Unlock()
	if old == why && known {
		return
	}
	switch {
	case why != "":
		n.log.Warn("connections to the TACACS+ server take the routing table's source address", "server", server, "why", why)
	case known:
		n.log.Info("connections to the TACACS+ server take their source address from SourceIntf again", "server", server)
	}
}
