package testport

import (
	"net"
	"strconv"
	"testing"
)

// A port given is one a server can listen on, for each network; another
// network is an error.
func TestFreePortsCanBeListenedOn(t *testing.T) {
	tcp := TCP(t)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp)))
	if err != nil {
		t.Fatalf("listen on the TCP port given (%d): %v", tcp, err)
	}
	l.Close()
	udp := UDP(t)
	p, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(udp)))
	if err != nil {
		t.Fatalf("listen on the UDP port given (%d): %v", udp, err)
	}
	p.Close()
	if _, err := Free("unix"); err == nil {
		t.Error("network unix: no error")
	}
}
