// Package testport picks loopback ports for tests and tools: a port of
// 127.0.0.1 that no socket holds at the time of the call, TCP or UDP, for
// a server about to be started there or for an address where nothing must
// answer. The port is picked by the kernel (a random one of its ephemeral
// range), so tests running side by side do not pick the same one; another
// process may still take it before it is used.
package testport

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// Free returns a port of 127.0.0.1 free at the time of the call, for
// network "tcp" or "udp".
func Free(network string) (int, error) {
	var (
		c    interface{ Close() error }
		addr net.Addr
		err  error
	)
	switch network {
	case "tcp":
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
			c, addr = l, l.Addr()
		}
	case "udp":
		var p net.PacketConn
		if p, err = net.ListenPacket("udp", "127.0.0.1:0"); err == nil {
			c, addr = p, p.LocalAddr()
		}
	default:
		return 0, fmt.Errorf("pick a free port: network %q is neither tcp nor udp", network)
	}
	if err != nil {
		return 0, fmt.Errorf("pick a free %s port: %w", network, err)
	}
	defer c.Close()
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return 0, fmt.Errorf("pick a free %s port: %w", network, err)
	}
	return int(ap.Port()), nil
}

// TCP returns a TCP port of 127.0.0.1 free at the time of the call.
func TCP(t testing.TB) int {
	t.Helper()
	return must(t, "tcp")
}

// UDP returns a UDP port of 127.0.0.1 free at the time of the call.
func UDP(t testing.TB) int {
	t.Helper()
	return must(t, "udp")
}

func must(t testing.TB, network string) int {
	t.Helper()
	p, err := Free(network)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
