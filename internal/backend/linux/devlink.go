package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// devlink's generic netlink interface (linux/devlink.h): which netdevs are
// ports of a switch ASIC, how many lanes they have and whether they can be
// split into breakout sub-ports. vishvananda/netlink knows the family but
// has no port split, so the requests are built here.
const (
	devlinkCmdPortGet     = 5
	devlinkCmdPortSplit   = 9
	devlinkCmdPortUnsplit = 10

	devlinkAttrBusName             = 1
	devlinkAttrDevName             = 2
	devlinkAttrPortIndex           = 3
	devlinkAttrPortNetdevIfindex   = 6
	devlinkAttrPortNetdevName      = 7
	devlinkAttrPortSplitCount      = 9
	devlinkAttrPortSplitGroup      = 10
	devlinkAttrPortFlavour         = 77
	devlinkAttrPortNumber          = 78
	devlinkAttrPortSplitSubportNum = 79
	devlinkAttrPortLanes           = 147
	devlinkAttrPortSplittable      = 148

	devlinkPortFlavourPhysical = 0
)

// DevlinkPort is one port of a devlink device as the kernel reports it.
type DevlinkPort struct {
	Bus, Dev string // the devlink device, e.g. "pci" "0000:03:00.0"
	Index    uint32 // the port's index on its device
	IfIndex  int    // its netdev (0 if none)
	Netdev   string
	Flavour  uint16 // DEVLINK_PORT_FLAVOUR_*; 0 is a physical port
	Number   uint32 // the front-panel number of a physical port
	// Lanes is how many lanes the port has (0: the driver does not say).
	Lanes      uint32
	Splittable bool
	// Split is set on the sub-ports of a split port: SplitGroup is the
	// front-panel number of the port they were split from, Subport their
	// number within it.
	Split      bool
	SplitGroup uint32
	Subport    uint32
}

func (p DevlinkPort) String() string {
	return fmt.Sprintf("%s/%s/%d", p.Bus, p.Dev, p.Index)
}

type devlinkFamily struct{ genlFamily }

// devlinkFam resolves the devlink family once, in the switch's namespace.
// A kernel without it is remembered as such (absent), not an error.
func (k *Kernel) devlinkFam() (*devlinkFamily, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.devlink != nil {
		return k.devlink, nil
	}
	f := &devlinkFamily{}
	if err := k.openGenl("devlink", &f.genlFamily); err != nil {
		if !errors.Is(err, unix.ENOENT) {
			return nil, err
		}
		f.absent = true
	}
	k.devlink = f
	return f, nil
}

// devlinkMessage is a devlink request of family id: the netlink header,
// the generic netlink header with cmd, then attrs.
func devlinkMessage(id uint16, cmd uint8, flags int, attrs []*nl.RtAttr) *nl.NetlinkRequest {
	req := &nl.NetlinkRequest{
		NlMsghdr: unix.NlMsghdr{Len: uint32(unix.SizeofNlMsghdr), Type: id, Flags: unix.NLM_F_REQUEST | uint16(flags)},
	}
	req.AddData(&nl.Genlmsg{Command: cmd, Version: nl.GENL_DEVLINK_VERSION})
	for _, a := range attrs {
		req.AddData(a)
	}
	return req
}

func (f *devlinkFamily) request(cmd uint8, flags int, attrs []*nl.RtAttr) ([][]byte, error) {
	req := devlinkMessage(f.id, cmd, flags, attrs)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_GENERIC: f.sh}
	return req.Execute(unix.NETLINK_GENERIC, 0)
}

// DevlinkAvailable says whether the kernel has the devlink interface.
func (k *Kernel) DevlinkAvailable() (bool, error) {
	f, err := k.devlinkFam()
	if err != nil {
		return false, err
	}
	return !f.absent, nil
}

// DevlinkPorts dumps the devlink ports of the switch's namespace. A kernel
// without devlink, or without devices that have ports, answers none.
func (k *Kernel) DevlinkPorts() ([]DevlinkPort, error) {
	f, err := k.devlinkFam()
	if err != nil || f.absent {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	msgs, err := f.request(devlinkCmdPortGet, unix.NLM_F_DUMP, nil)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV) {
			return nil, nil
		}
		return nil, fmt.Errorf("devlink port dump: %w", err)
	}
	ports := make([]DevlinkPort, 0, len(msgs))
	for _, m := range msgs {
		if len(m) < nl.SizeofGenlmsg {
			return nil, fmt.Errorf("devlink port dump: short message (%d bytes)", len(m))
		}
		p, err := parseDevlinkPort(m[nl.SizeofGenlmsg:])
		if err != nil {
			return nil, fmt.Errorf("devlink port dump: %w", err)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// parseDevlinkPort decodes the attributes of one DEVLINK_CMD_PORT_GET
// answer (without its generic netlink header).
func parseDevlinkPort(b []byte) (DevlinkPort, error) {
	var p DevlinkPort
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return p, err
	}
	u32 := func(v []byte) (uint32, error) {
		if len(v) < 4 {
			return 0, fmt.Errorf("attribute of %d bytes where a u32 belongs", len(v))
		}
		return binary.LittleEndian.Uint32(v), nil
	}
	seen := 0
	for _, a := range attrs {
		v := a.Value
		var err error
		switch a.Attr.Type &^ unix.NLA_F_NESTED {
		case devlinkAttrBusName:
			p.Bus, seen = strings.TrimRight(string(v), "\x00"), seen|1
		case devlinkAttrDevName:
			p.Dev, seen = strings.TrimRight(string(v), "\x00"), seen|2
		case devlinkAttrPortIndex:
			p.Index, err = u32(v)
			seen |= 4
		case devlinkAttrPortNetdevIfindex:
			var i uint32
			i, err = u32(v)
			p.IfIndex = int(i)
		case devlinkAttrPortNetdevName:
			p.Netdev = strings.TrimRight(string(v), "\x00")
		case devlinkAttrPortFlavour:
			if len(v) < 2 {
				err = fmt.Errorf("flavour of %d bytes", len(v))
			} else {
				p.Flavour = binary.LittleEndian.Uint16(v)
			}
		case devlinkAttrPortNumber:
			p.Number, err = u32(v)
		case devlinkAttrPortLanes:
			p.Lanes, err = u32(v)
		case devlinkAttrPortSplittable:
			p.Splittable = len(v) > 0 && v[0] != 0
		case devlinkAttrPortSplitGroup:
			p.Split = true
			p.SplitGroup, err = u32(v)
		case devlinkAttrPortSplitSubportNum:
			p.Subport, err = u32(v)
		}
		if err != nil {
			return p, fmt.Errorf("devlink port attribute %d: %w", a.Attr.Type, err)
		}
	}
	if seen != 7 {
		return p, errors.New("devlink port without bus name, device name or port index")
	}
	return p, nil
}

// devlinkPortAttrs are the attributes that name a devlink port in a request.
func devlinkPortAttrs(p DevlinkPort) []*nl.RtAttr {
	return []*nl.RtAttr{
		nl.NewRtAttr(devlinkAttrBusName, nl.ZeroTerminated(p.Bus)),
		nl.NewRtAttr(devlinkAttrDevName, nl.ZeroTerminated(p.Dev)),
		nl.NewRtAttr(devlinkAttrPortIndex, nl.Uint32Attr(p.Index)),
	}
}

// splitRequest is DEVLINK_CMD_PORT_SPLIT's attributes: the port and the
// number of sub-ports.
func splitRequest(p DevlinkPort, count int) []*nl.RtAttr {
	return append(devlinkPortAttrs(p), nl.NewRtAttr(devlinkAttrPortSplitCount, nl.Uint32Attr(uint32(count))))
}

// SplitCaps is what devlink says about a port's netdev, for the check phase.
type SplitCaps struct {
	Devlink bool         // the kernel has the devlink interface
	Port    *DevlinkPort // the netdev's devlink port; nil: none
	// Subports are the sub-ports the port is split into now (sorted by
	// sub-port number), found from its netdev's name: a split port's own
	// netdev is gone.
	Subports []DevlinkPort
}

// Split is how many sub-ports the port is split into now (0 if not split).
func (s SplitCaps) Split() int { return len(s.Subports) }

// splitCaps finds netdev's devlink port, or the sub-ports it was split into
// (named <netdev>s<N> by switchdev drivers, as mlxsw's swp1s0..swp1s3).
func splitCaps(netdev string, ports []DevlinkPort, devlink bool) SplitCaps {
	c := SplitCaps{Devlink: devlink}
	for i, p := range ports {
		if p.Netdev == netdev {
			c.Port = &ports[i]
		}
	}
	if c.Port != nil {
		return c
	}
	for _, p := range ports {
		if p.Split && strings.HasPrefix(p.Netdev, netdev+"s") && allDigits(p.Netdev[len(netdev)+1:]) {
			c.Subports = append(c.Subports, p)
		}
	}
	sort.Slice(c.Subports, func(i, j int) bool { return c.Subports[i].Subport < c.Subports[j].Subport })
	return c
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SplitCaps reads what devlink says about netdev (one dump).
func (k *Kernel) SplitCaps(netdev string) (SplitCaps, error) {
	ok, err := k.DevlinkAvailable()
	if err != nil {
		return SplitCaps{}, err
	}
	ports, err := k.DevlinkPorts()
	if err != nil {
		return SplitCaps{}, err
	}
	return splitCaps(netdev, ports, ok), nil
}

// checkBreakout refuses a breakout the device cannot do. lanes is the
// sub-port count asked (1: not broken out).
func checkBreakout(dev string, lanes int, s SplitCaps) error {
	if lanes <= 1 || s.Split() == lanes {
		return nil // unsplitting a port that is not split changes nothing
	}
	switch {
	case s.Split() > 0:
		return refuse("BreakOutMode", "%s is split into %d ports; break it out into %d only after BreakOutMode 1x (devlink cannot re-split a split port)", dev, s.Split(), lanes)
	case s.Port == nil && !s.Devlink:
		return refuse("BreakOutMode", "%s cannot be broken out into %d ports: it has no devlink port to split (the kernel has no devlink interface)", dev, lanes)
	case s.Port == nil:
		return refuse("BreakOutMode", "%s cannot be broken out into %d ports: it has no devlink port to split", dev, lanes)
	case !s.Port.Splittable:
		return refuse("BreakOutMode", "%s cannot be broken out into %d ports: its devlink port %s is not splittable", dev, lanes, s.Port)
	case s.Port.Lanes != 0 && int(s.Port.Lanes) < lanes:
		return refuse("BreakOutMode", "%s cannot be broken out into %d ports: its devlink port %s has %d lanes", dev, lanes, s.Port, s.Port.Lanes)
	}
	return nil
}

// splitPort splits a devlink port into count sub-ports.
func (k *Kernel) splitPort(p DevlinkPort, count int) error {
	if err := k.devlinkChange(devlinkCmdPortSplit, splitRequest(p, count)); err != nil {
		return fmt.Errorf("devlink split %s into %d: %w", p, count, err)
	}
	return nil
}

// unsplitPort joins the sub-ports of a split port again; p is any of them.
func (k *Kernel) unsplitPort(p DevlinkPort) error {
	if err := k.devlinkChange(devlinkCmdPortUnsplit, devlinkPortAttrs(p)); err != nil {
		return fmt.Errorf("devlink unsplit %s: %w", p, err)
	}
	return nil
}

// devlinkChange sends one acknowledged devlink request that changes ports.
func (k *Kernel) devlinkChange(cmd uint8, attrs []*nl.RtAttr) error {
	f, err := k.devlinkFam()
	if err != nil {
		return err
	}
	if f.absent {
		return errors.New("the kernel has no devlink interface")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err = f.request(cmd, unix.NLM_F_ACK, attrs)
	return err
}

// EnsureBreakout makes port (whose unsplit netdev is netdev) split into
// lanes sub-ports (1: not split), recording the inverse, and maps the
// sub-ports' netdevs as <port>s1..s<lanes> in m. It changes nothing when
// the port already is as asked.
func (tx *Tx) EnsureBreakout(m *PortMap, port, netdev string, lanes int) error {
	s, err := tx.k.SplitCaps(netdev)
	if err != nil {
		return err
	}
	if lanes <= 1 && s.Split() == 0 || lanes > 1 && s.Split() == lanes {
		if lanes > 1 {
			m.setSubports(port, s.Subports)
		}
		return nil
	}
	dev := fmt.Sprintf("%s (netdev %s)", port, netdev)
	if err := checkBreakout(dev, lanes, s); err != nil {
		return err
	}
	relearn := func() error {
		now, err := tx.k.SplitCaps(netdev)
		if err != nil {
			return err
		}
		m.setSubports(port, now.Subports)
		return nil
	}
	if lanes <= 1 {
		group, old := s.Subports[0], s.Split()
		return tx.change(fmt.Sprintf("unsplit %s (%s)", netdev, port),
			func() error {
				if err := tx.k.unsplitPort(group); err != nil {
					return err
				}
				return relearn()
			},
			func() error {
				now, err := tx.k.SplitCaps(netdev)
				if err != nil {
					return err
				}
				if now.Port == nil {
					return fmt.Errorf("%s has no devlink port after unsplit", netdev)
				}
				if err := tx.k.splitPort(*now.Port, old); err != nil {
					return err
				}
				return relearn()
			})
	}
	whole := *s.Port
	return tx.change(fmt.Sprintf("split %s (%s) into %d", netdev, port, lanes),
		func() error {
			if err := tx.k.splitPort(whole, lanes); err != nil {
				return err
			}
			return relearn()
		},
		func() error {
			now, err := tx.k.SplitCaps(netdev)
			if err != nil {
				return err
			}
			if now.Split() == 0 {
				return nil
			}
			if err := tx.k.unsplitPort(now.Subports[0]); err != nil {
				return err
			}
			return relearn()
		})
}

// splitParents finds the ports that are split now: the netdevs their
// sub-ports are named after (<parent>s<N>) that are not netdevs any more.
// A switch split before swmgr starts keeps its parent ports in the port
// map this way.
func splitParents(netdevs []string, ports []DevlinkPort) map[string][]DevlinkPort {
	have := map[string]bool{}
	for _, d := range netdevs {
		have[d] = true
	}
	out := map[string][]DevlinkPort{}
	for _, p := range ports {
		i := strings.LastIndexByte(p.Netdev, 's')
		if !p.Split || i <= 0 || !allDigits(p.Netdev[i+1:]) || have[p.Netdev[:i]] {
			continue
		}
		out[p.Netdev[:i]] = append(out[p.Netdev[:i]], p)
	}
	for parent, subs := range out {
		sort.Slice(subs, func(i, j int) bool { return subs[i].Subport < subs[j].Subport })
		out[parent] = subs
	}
	return out
}
