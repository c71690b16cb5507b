package linux

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// PortConfig is what swmgr sets on a front-panel port's netdev.
type PortConfig struct {
	Port        string // fpPort<N>[s<M>]
	Netdev      string
	AdminUp     bool
	MTU         int
	Description string // the netdev's ifalias
	Speed       int64  // Mb/s
	FullDuplex  bool
	Autoneg     bool
	FEC         bool
	Lanes       int // of BreakOutMode: 1, 2 or 4
}

// Refusal is a change the switch cannot make: the check phase returns it
// before any kernel change, naming the device and the capability.
type Refusal struct {
	Field string // the object's field that asks for it
	Msg   string
}

func (r *Refusal) Error() string { return r.Msg }

func refuse(field, format string, args ...any) *Refusal {
	return &Refusal{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// CheckPort is the pure capability check of a port change: every field
// the change sets to a new value must be something the device can do.
// before is nil when the port is first seen (then nothing is refused: the
// stored values were read from the device).
// split is what devlink says about the port's netdev.
func CheckPort(before *PortConfig, after PortConfig, caps LinkCaps, split SplitCaps) error {
	if before == nil {
		return nil
	}
	dev := fmt.Sprintf("%s (netdev %s)", after.Port, after.Netdev)
	if before.Lanes != after.Lanes {
		if err := checkBreakout(dev, after.Lanes, split); err != nil {
			return err
		}
	}
	if after.Lanes > 1 || split.Split() > 0 {
		return nil // a broken-out port's own netdev is gone: its sub-ports carry the link settings
	}
	linkChanged := after.Speed != before.Speed || after.FullDuplex != before.FullDuplex || after.Autoneg != before.Autoneg
	if linkChanged && !caps.Settable {
		what := []string{}
		if after.Speed != before.Speed {
			what = append(what, fmt.Sprintf("Speed %d", after.Speed))
		}
		if after.FullDuplex != before.FullDuplex {
			what = append(what, "Duplex")
		}
		if after.Autoneg != before.Autoneg {
			what = append(what, "Autoneg")
		}
		field := "Speed"
		if after.Speed == before.Speed {
			field = map[bool]string{true: "Duplex", false: "Autoneg"}[after.FullDuplex != before.FullDuplex]
		}
		return refuse(field, "%s cannot change %s: the device reports no settable link modes through ethtool (runs at %s)", dev, strings.Join(what, ", "), speedText(caps))
	}
	if after.Speed != before.Speed && !caps.Speeds[after.Speed] {
		return refuse("Speed", "%s cannot run at Speed %d: its link modes support %s", dev, after.Speed, speedList(caps.Speeds))
	}
	if after.FEC != before.FEC && !caps.FEC {
		return refuse("EnableFEC", "%s has no forward error correction to turn %s (ethtool reports no FEC modes)", dev, map[bool]string{true: "on", false: "off"}[after.FEC])
	}
	return nil
}

func speedText(c LinkCaps) string {
	if c.Speed == 0 {
		return "an unknown speed"
	}
	return fmt.Sprintf("%d Mb/s", c.Speed)
}

func speedList(s map[int64]bool) string {
	var l []int64
	for v := range s {
		l = append(l, v)
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, ", ")
}

// EnsurePort makes the netdev match c. Link settings the device cannot
// change are left as they are (CheckPort refused any change of them).
func (tx *Tx) EnsurePort(c PortConfig) error {
	h, l, err := tx.k.findLink(c.Netdev)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Port, err)
	}
	if err := tx.setMTU(h, l, c.MTU); err != nil {
		return err
	}
	if err := tx.setAlias(h, l, c.Description); err != nil {
		return err
	}
	if h == tx.k.h && tx.k.feat.EthtoolNetlink {
		caps, err := tx.k.Caps(c.Netdev)
		if err != nil {
			return err
		}
		if caps.Settable && c.Speed != 0 && (caps.Speed != c.Speed || caps.FullDuplex != c.FullDuplex || caps.Autoneg != c.Autoneg) && caps.Speeds[c.Speed] {
			old := caps
			err := tx.change(fmt.Sprintf("set %s speed %d", c.Netdev, c.Speed),
				func() error { return tx.k.setLinkModes(c.Netdev, c.Speed, c.FullDuplex, c.Autoneg) },
				func() error { return tx.k.setLinkModes(c.Netdev, old.Speed, old.FullDuplex, old.Autoneg) })
			if err != nil {
				return err
			}
		}
		if caps.FEC && caps.FECEnabled != c.FEC {
			old := caps.FECEnabled
			err := tx.change(fmt.Sprintf("set %s fec %v", c.Netdev, c.FEC),
				func() error { return tx.k.setFEC(c.Netdev, c.FEC) },
				func() error { return tx.k.setFEC(c.Netdev, old) })
			if err != nil {
				return err
			}
		}
	}
	return tx.setUp(h, l, c.AdminUp)
}

// PortState is a port's operational state, from the kernel.
type PortState struct {
	Port      string
	Netdev    string
	IfIndex   int
	MAC       string
	MTU       int
	AdminUp   bool
	OperUp    bool
	Alias     string
	InOctets  uint64
	InPkts    uint64
	InDrops   uint64
	InErrors  uint64
	OutOctets uint64
	OutPkts   uint64
	OutDrops  uint64
	OutErrors uint64
	Present   bool // the netdev exists
}

// PortStates reads every mapped port's state with one link dump per
// namespace (one in all when VRFs are devices).
func (k *Kernel) PortStates(m *PortMap) (map[string]PortState, error) {
	byPort := m.netdevs()
	out := make(map[string]PortState, len(byPort))
	k.linkDumps.Add(1)
	for _, n := range k.namespaces() {
		links, err := n.h.LinkList()
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		for _, l := range links {
			a := l.Attrs()
			port := m.Port(a.Name)
			if port == "" {
				continue
			}
			out[port] = linkState(port, l)
		}
	}
	for port, dev := range byPort {
		if _, ok := out[port]; !ok {
			out[port] = PortState{Port: port, Netdev: dev}
		}
	}
	return out, nil
}

func linkState(port string, l netlink.Link) PortState {
	a := l.Attrs()
	s := PortState{Port: port, Netdev: a.Name, IfIndex: a.Index, MTU: a.MTU, Alias: a.Alias, Present: true,
		AdminUp: a.Flags&net.FlagUp != 0,
		OperUp:  operUp(l)}
	if a.HardwareAddr != nil {
		s.MAC = a.HardwareAddr.String()
	}
	if st := a.Statistics; st != nil {
		s.InOctets, s.InPkts, s.InDrops, s.InErrors = st.RxBytes, st.RxPackets, st.RxDropped, st.RxErrors
		s.OutOctets, s.OutPkts, s.OutDrops, s.OutErrors = st.TxBytes, st.TxPackets, st.TxDropped, st.TxErrors
	}
	return s
}

// Netdevs lists the names of the links of the switch namespace and of the
// VRF namespaces (ports that moved into a VRF are still ports).
func (k *Kernel) Netdevs() ([]string, error) {
	var names []string
	for _, n := range k.namespaces() {
		links, err := n.h.LinkList()
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		for _, l := range links {
			names = append(names, l.Attrs().Name)
		}
	}
	return names, nil
}

// portDriver is the Port kind on the Linux backend.
var portDriver = &driver{
	state: func(b *Backend, o model.Object) (model.Object, error) { return b.portState(o) },
	check: func(b *Backend, c changeView) error {
		after, err := b.portConfig(c.after())
		if err != nil {
			if parent := b.subportParent(c.after()); parent != "" {
				// A sub-port's netdev appears with the split: the
				// parent's breakout is what can or cannot be done.
				split, serr := b.k.SplitCaps(parent)
				if serr != nil {
					return serr
				}
				name := c.after().Str("IntfRef")
				return checkBreakout(fmt.Sprintf("%s (netdev %s)", name[:strings.LastIndexByte(name, 's')], parent), breakoutLanes(c.after()), split)
			}
			return err
		}
		if c.before() == nil {
			return nil
		}
		before, err := b.portConfig(c.before())
		if err != nil {
			return err
		}
		var split SplitCaps
		if before.Lanes != after.Lanes {
			if split, err = b.k.SplitCaps(after.Netdev); err != nil {
				return err
			}
		}
		caps, err := b.k.Caps(after.Netdev)
		if err != nil && b.k.feat.EthtoolNetlink {
			return err
		}
		return CheckPort(&before, after, caps, split)
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		if _, sub, _ := model.ParsePortName(after.Str("IntfRef")); sub == 0 {
			lanes := breakoutLanes(after)
			// Only a breakout, or a change or replay of one, asks devlink.
			if dev := b.ports.Netdev(after.Str("IntfRef")); dev != "" && (lanes > 1 || before == nil || breakoutLanes(before) > 1) {
				if err := tx.EnsureBreakout(b.ports, after.Str("IntfRef"), dev, lanes); err != nil {
					return err
				}
				if lanes > 1 {
					return nil // its netdev is gone; the sub-ports are set up as their own changes
				}
			}
		}
		c, err := b.portConfig(after)
		if err != nil && before == nil {
			// A stored port whose netdev is gone (the port map
			// changed): it stays in the store, absent from the
			// kernel; its state says PresentInHW NO.
			b.log.Warn("port has no netdev; left alone", "port", after.Str("IntfRef"))
			return nil
		}
		if err != nil {
			return err
		}
		return tx.EnsurePort(c)
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		return nil // ports are hardware: a removed sub-port's netdev stays as it is
	},
}

func (b *Backend) portConfig(o model.Object) (PortConfig, error) {
	name := o.Str("IntfRef")
	dev := b.ports.Netdev(name)
	if dev == "" {
		return PortConfig{}, &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("%s has no netdev on this switch (see the port map)", name)}
	}
	lanes := 1 // a sub-port is one lane of its parent's breakout
	if _, sub, _ := model.ParsePortName(name); sub == 0 {
		lanes = breakoutLanes(o)
	}
	return PortConfig{Port: name, Netdev: dev, AdminUp: o.Str("AdminState") == "UP", MTU: int(o.Int("Mtu")),
		Description: o.Str("Description"), Speed: o.Int("Speed"), FullDuplex: o.Str("Duplex") != "Half_Duplex",
		Autoneg: o.Str("Autoneg") == "ON", FEC: o.Bool("EnableFEC"), Lanes: lanes}, nil
}

// operUp says whether a link carries traffic: operstate up, or (for
// devices that report no operstate) up with a carrier.
func operUp(l netlink.Link) bool {
	a := l.Attrs()
	const lowerUp = 0x10000 // IFF_LOWER_UP
	return a.OperState == netlink.OperUp || (a.OperState == netlink.OperUnknown && a.Flags&net.FlagUp != 0 && a.RawFlags&lowerUp != 0)
}

// breakoutLanes is the sub-port count of a port's BreakOutMode ("4x10": 4).
func breakoutLanes(o model.Object) int {
	lanes, _ := strconv.Atoi(strings.SplitN(o.Str("BreakOutMode"), "x", 2)[0])
	return max(lanes, 1)
}

// subportParent is the netdev of the port a sub-port without a netdev
// belongs to ("" for a front-panel port, or a parent without a netdev).
func (b *Backend) subportParent(o model.Object) string {
	n, sub, ok := model.ParsePortName(o.Str("IntfRef"))
	if !ok || sub == 0 {
		return ""
	}
	return b.ports.Netdev(fmt.Sprintf("fpPort%d", n))
}
