package aaa

import (
	"fmt"
	"net/netip"
	"sync"
)

// loginSlots bounds the remote login checks under way: max in all, and
// perClient of one client, so that one client's storm of logins leaves
// the others their share. A client is an IPv4 address or an IPv6 /64 (what
// one host is usually given).
type loginSlots struct {
	max, perClient int

	mu       sync.Mutex
	total    int
	byClient map[netip.Prefix]int
}

func newLoginSlots(max, perClient int) *loginSlots {
	return &loginSlots{max: max, perClient: perClient, byClient: map[netip.Prefix]int{}}
}

// ClientBusyError refuses a login of a client that has MaxLoginsPerClient
// checks under way: it is ErrBusy for that client only.
type ClientBusyError struct {
	Client string // the address, or the IPv6 /64
	Max    int
}

func (e *ClientBusyError) Error() string {
	return fmt.Sprintf("too many logins from %s are being checked by the servers (%d at once); try again in a second", e.Client, e.Max)
}

// Unwrap makes it ErrBusy.
func (e *ClientBusyError) Unwrap() error { return ErrBusy }

// clientOf is the client an address belongs to; "" or anything that is
// not an address is one client (the zero prefix).
func clientOf(addr string) netip.Prefix {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// take takes a slot for a check of addr's client, or refuses it: a
// *ClientBusyError when that client has perClient under way, ErrBusy when
// max are.
func (l *loginSlots) take(addr string) (release func(), err error) {
	c := clientOf(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byClient[c] >= l.perClient {
		name := "unknown addresses"
		if c.IsValid() {
			name = c.Addr().String()
			if c.Addr().Is6() {
				name = c.String()
			}
		}
		return nil, &ClientBusyError{Client: name, Max: l.perClient}
	}
	if l.total >= l.max {
		return nil, ErrBusy
	}
	l.total++
	l.byClient[c]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.byClient[c]--; l.byClient[c] == 0 {
			delete(l.byClient, c)
		}
	}, nil
}
