package linux

import (
	"fmt"
	"sync"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// genlFamily is a generic netlink family of the switch's namespace (ethtool,
// devlink): its id and a socket of its own, opened on first use. mu
// serialises a request with its answer on that socket.
type genlFamily struct {
	mu     sync.Mutex
	absent bool // the kernel has no such family (devlink: not an error)
	id     uint16
	sock   *nl.NetlinkSocket
	sh     *nl.SocketHandle
}

// openGenl resolves the generic netlink family name and opens a socket for
// it in the switch's namespace, into g. An error wraps the kernel's: a
// family the kernel lacks is unix.ENOENT.
func (k *Kernel) openGenl(name string, g *genlFamily) error {
	fam, err := k.h.GenlFamilyGet(name)
	if err != nil {
		return fmt.Errorf("%s netlink family: %w", name, err)
	}
	s, err := nl.GetNetlinkSocketAt(k.ns, netns.None(), unix.NETLINK_GENERIC)
	if err != nil {
		return fmt.Errorf("%s netlink socket: %w", name, err)
	}
	g.id, g.sock, g.sh = fam.ID, s, &nl.SocketHandle{Socket: s}
	return nil
}

// close closes the family's socket, after any request in flight.
func (g *genlFamily) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sock != nil {
		g.sock.Close()
		g.sock = nil
	}
}
