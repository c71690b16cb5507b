package aaa

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strings"
)

// nas is how this switch names itself to the servers, so that the records
// of a fleet's switches can be told apart and none is taken for another's
// duplicate: its host name (SystemParam Hostname, or the OS's), and the
// instance, an id of its data directory that makes every session and task
// id its own even where two switches have the same revision numbers.
type nas struct {
	name     string
	instance string
}

// nasName is the name a switch goes by: SystemParam's Hostname, else the
// OS's host name, else "swmgr".
func nasName(hostname string) string {
	if hostname != "" {
		return hostname
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return strings.ToLower(h)
	}
	return "swmgr"
}

// randomInstance is an instance id for a Service given none (tests).
func randomInstance() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// sessionID is a record's id at the servers: the instance, then the
// record's own (a commit's revision, a CLI command's session and number).
func (n nas) sessionID(r Record) string { return n.instance + "-" + r.taskID() }

// localAddrToward is the address this host sends from to reach host, as
// the routing table chooses it (a UDP socket connected, no packet sent):
// the switch's management address as the server sees it. The zero Addr if
// there is no route.
func localAddrToward(host string) netip.Addr {
	c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
	if err != nil {
		return netip.Addr{}
	}
	defer c.Close()
	ap, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
