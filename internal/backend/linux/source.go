package linux

import (
	"context"
	"errors"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// SourceAddr is the IPv4 address the kernel has on interface intf in the
// switch's namespace (a port by its name, through the port map; anything
// else by its netdev's name: ma1, eth0, vlan10, a loopback): the source
// address of connections that name the interface (a Tacacs server's
// SourceIntf). Its primary address when it has several; the zero Addr
// when it has none or does not exist. An interface moved into a VRF's
// namespace is not found.
func (b *Backend) SourceAddr(ctx context.Context, intf string) (netip.Addr, error) {
	dev := b.ports.Netdev(intf)
	if dev == "" {
		dev = intf
	}
	l, err := b.k.h.LinkByName(dev)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return netip.Addr{}, nil
		}
		return netip.Addr{}, err
	}
	addrs, err := b.k.h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if a.Flags&unix.IFA_F_SECONDARY != 0 {
			continue
		}
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			return ip, nil
		}
	}
	return netip.Addr{}, nil
}
