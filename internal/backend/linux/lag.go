package linux

import (
	"cmp"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// LAGConfig is a link aggregation group: a bond netdev named as the LAG
// (PortChannel<N>) whose slaves are its member ports' netdevs.
type LAGConfig struct {
	Name     string
	Members  []string // netdevs
	Static   bool     // balance-xor, else 802.3ad (LACP)
	Passive  bool
	FastRate bool
	MinLinks int
	Hash     netlink.BondXmitHashPolicy
	SysPrio  int
	SysMAC   net.HardwareAddr // nil: the bond's own MAC
	AdminUp  bool
}

// miimon is how often (ms) the bond looks at its slaves' carrier.
const miimon = 100

// bond is the netlink link LinkAdd makes of c.
func (c LAGConfig) bond() *netlink.Bond {
	b := netlink.NewLinkBond(netlink.LinkAttrs{Name: c.Name})
	b.Mode, b.Miimon, b.MinLinks, b.XmitHashPolicy = netlink.BOND_MODE_BALANCE_XOR, miimon, c.MinLinks, c.Hash
	if !c.Static {
		b.Mode, b.LacpRate, b.AdActorSysPrio, b.AdActorSystem = netlink.BOND_MODE_802_3AD, netlink.BOND_LACP_RATE_SLOW, c.SysPrio, c.SysMAC
		if c.FastRate {
			b.LacpRate = netlink.BOND_LACP_RATE_FAST
		}
	}
	return b
}

// CheckLAG is the pure capability check of a LAG.
func (k *Kernel) CheckLAG(c LAGConfig) error {
	if !k.feat.Bond {
		return refuse("IntfRef", "%s: this kernel has no bonding driver (CONFIG_BONDING)", c.Name)
	}
	if c.Passive && !c.Static {
		return refuse("LacpMode", "%s: LacpMode 1 (PASSIVE): the Linux bond always sends LACP frames; use 0 (ACTIVE)", c.Name)
	}
	return nil
}

// EnsureLAG makes the bond match c; old, if set, is the configuration it
// replaces (members no longer listed are released). The kernel takes a
// slave only while it is down, and changes a bond's LACP rate only while
// the bond is down: both are taken down first and up again after.
func (tx *Tx) EnsureLAG(c LAGConfig, old *LAGConfig, upAfterRelease func(netdev string) bool) error {
	k := tx.k
	l, err := k.h.LinkByName(c.Name)
	if err != nil {
		if err := tx.addLink(k.h, c.bond(), "bond"); err != nil {
			return err
		}
		if l, err = k.h.LinkByName(c.Name); err != nil {
			return err
		}
	}
	if old != nil {
		for _, m := range old.Members {
			if !slices.Contains(c.Members, m) {
				if err := tx.release(l, m, upAfterRelease(m)); err != nil {
					return err
				}
			}
		}
	}
	for _, m := range c.Members {
		s, err := k.h.LinkByName(m)
		if err != nil {
			return fmt.Errorf("%s member %s: %w", c.Name, m, err)
		}
		if s.Attrs().MasterIndex == l.Attrs().Index {
			continue
		}
		if err := tx.setUp(k.h, s, false); err != nil {
			return err
		}
		if err := tx.setMaster(k.h, s, l.Attrs().Index); err != nil {
			return fmt.Errorf("%s member %s: %w", c.Name, m, err)
		}
	}
	if l, err = k.h.LinkByName(c.Name); err != nil {
		return err
	}
	return tx.setUp(k.h, l, c.AdminUp)
}

// sameBond says whether two configurations give the bond the same options.
func sameBond(a, b LAGConfig) bool {
	return a.Static == b.Static && a.FastRate == b.FastRate && a.MinLinks == b.MinLinks && a.Hash == b.Hash && a.SysPrio == b.SysPrio && a.SysMAC.String() == b.SysMAC.String()
}

// release takes member m out of bond l, and brings it up when its Port
// says so (leaving a bond takes a link down).
func (tx *Tx) release(l netlink.Link, m string, up bool) error {
	k := tx.k
	s, err := k.h.LinkByName(m)
	if err != nil || s.Attrs().MasterIndex != l.Attrs().Index {
		return nil
	}
	if err := tx.setMaster(k.h, s, 0); err != nil {
		return err
	}
	if s, err = k.h.LinkByName(m); err != nil {
		return err
	}
	return tx.setUp(k.h, s, up)
}

// RemoveLAG releases the members and deletes the bond.
func (tx *Tx) RemoveLAG(c LAGConfig, upAfterRelease func(netdev string) bool) error {
	k := tx.k
	l, err := k.h.LinkByName(c.Name)
	if err != nil {
		return nil
	}
	for _, m := range c.Members {
		if err := tx.release(l, m, upAfterRelease(m)); err != nil {
			return err
		}
	}
	return tx.delLink(k.h, l, "bond")
}

// LAGMember is what the kernel says of one slave of a bond.
type LAGMember struct {
	Netdev    string
	IfIndex   int
	MiiUp     bool
	Actor     uint8 // 802.3ad actor state bits (LACP_Activity 0x1 ... Expired 0x80)
	Partner   uint8
	Aggregate bool // in the bond's active aggregator
}

// LAGState is what the kernel has of a bond.
type LAGState struct {
	IfIndex    int
	Up         bool
	SystemMAC  string
	ActorKey   int
	PartnerKey int
	PartnerMAC string
	Members    []LAGMember
}

// 802.3ad port state bits (IEEE 802.1AX).
const (
	lacpActivity     = 0x01
	lacpTimeoutShort = 0x02
	lacpAggregation  = 0x04
	lacpSync         = 0x08
	lacpCollecting   = 0x10
	lacpDistributing = 0x20
	lacpDefaulted    = 0x40
)

// LAGStateOf reads a bond and its slaves.
func (k *Kernel) LAGStateOf(name string) (LAGState, error) {
	var st LAGState
	l, err := k.h.LinkByName(name)
	if err != nil {
		return st, nil
	}
	st.IfIndex, st.Up, st.SystemMAC = l.Attrs().Index, operUp(l), l.Attrs().HardwareAddr.String()
	aggregator := -1
	if b, ok := l.(*netlink.Bond); ok {
		if len(b.AdActorSystem) == 6 && b.AdActorSystem.String() != "00:00:00:00:00:00" {
			st.SystemMAC = b.AdActorSystem.String()
		}
		if b.AdInfo != nil {
			aggregator, st.ActorKey, st.PartnerKey, st.PartnerMAC = b.AdInfo.AggregatorId, b.AdInfo.ActorKey, b.AdInfo.PartnerKey, b.AdInfo.PartnerMac.String()
		}
	}
	links, err := k.h.LinkList()
	if err != nil {
		return st, fmt.Errorf("list links: %w", err)
	}
	for _, s := range links {
		if s.Attrs().MasterIndex != st.IfIndex {
			continue
		}
		m := LAGMember{Netdev: s.Attrs().Name, IfIndex: s.Attrs().Index}
		if bs, ok := s.Attrs().Slave.(*netlink.BondSlave); ok {
			m.MiiUp = bs.MiiStatus == netlink.BondLinkUp
			m.Actor, m.Partner = bs.AdActorOperPortState, uint8(bs.AdPartnerOperPortState)
			// Without the bond's 802.3ad info (netlink gives it only
			// once an aggregator is active) any slave may be in it.
			m.Aggregate = aggregator < 0 || int(bs.AggregatorId) == aggregator
		}
		st.Members = append(st.Members, m)
	}
	return st, nil
}

// inBundle says whether a member carries the LAG's traffic: collecting and
// distributing in the active aggregator (LACP), or its link up (static).
func (m LAGMember) inBundle(static bool) bool {
	if static {
		return m.MiiUp
	}
	return m.MiiUp && m.Aggregate && m.Actor&(lacpCollecting|lacpDistributing) == lacpCollecting|lacpDistributing
}

// lagConfig maps a LaPortChannel object onto the kernel layer.
func (b *Backend) lagConfig(o model.Object) (LAGConfig, error) {
	c := LAGConfig{Name: o.Str("IntfRef"), Static: o.Int("LagType") == model.LagTypeStatic, Passive: o.Int("LacpMode") == model.LacpPassive,
		FastRate: o.Int("Interval") == model.IntervalFast, MinLinks: int(o.Int("MinLinks")), SysPrio: int(o.Int("SystemPriority")),
		AdminUp: o.Str("AdminState") == "UP"}
	c.Hash = map[int64]netlink.BondXmitHashPolicy{model.LagHashL2: netlink.BOND_XMIT_HASH_POLICY_LAYER2,
		model.LagHashL23: netlink.BOND_XMIT_HASH_POLICY_LAYER2_3, model.LagHashL34: netlink.BOND_XMIT_HASH_POLICY_LAYER3_4}[o.Int("LagHash")]
	if m := model.SystemIdMAC(o); m != "" {
		mac, err := net.ParseMAC(m)
		if err != nil {
			return c, &Refusal{Field: "SystemIdMac", Msg: err.Error()}
		}
		c.SysMAC = mac
	}
	for _, p := range o.List("IntfRefList") {
		dev := b.ports.Netdev(p)
		if dev == "" {
			return c, &Refusal{Field: "IntfRefList", Msg: fmt.Sprintf("%s has no netdev on this switch (see the port map)", p)}
		}
		c.Members = append(c.Members, dev)
	}
	return c, nil
}

// portAdminUp says whether the port of a netdev is configured up: a
// member that leaves its LAG goes back to its Port's AdminState. Its
// callers are the LAG driver's ensure and remove, which apply and
// reconcile run holding b.mu: it must not take b.mu itself.
func (b *Backend) portAdminUp(netdev string) bool {
	p := b.applied["Port"][b.ports.Port(netdev)]
	return p != nil && p.Str("AdminState") == "UP"
}

// lagDriver is the LaPortChannel kind on the Linux backend: a bond.
var lagDriver = &driver{
	check: func(b *Backend, c changeView) error {
		l, err := b.lagConfig(c.after())
		if err != nil {
			return err
		}
		if c.before() != nil {
			if old, err := b.lagConfig(c.before()); err == nil && !sameBond(old, l) {
				return refuse("MinLinks", "%s: on Linux a LAG's MinLinks, Interval, LagHash, SystemPriority and SystemIdMac are set when it is made; delete the LAG and create it again", l.Name)
			}
		}
		return b.k.CheckLAG(l)
	},
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		c, err := b.lagConfig(after)
		if err != nil {
			return err
		}
		var old *LAGConfig
		if before != nil {
			if o, err := b.lagConfig(before); err == nil {
				old = &o
			}
		}
		return tx.EnsureLAG(c, old, b.portAdminUp)
	},
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		c, err := b.lagConfig(before)
		if err != nil {
			return err
		}
		return tx.RemoveLAG(c, b.portAdminUp)
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		st, err := b.k.LAGStateOf(o.Str("IntfRef"))
		if err != nil {
			return nil, err
		}
		static := o.Int("LagType") == model.LagTypeStatic
		in := []string{}
		for _, m := range st.Members {
			if m.inBundle(static) {
				in = append(in, b.ports.Port(m.Netdev))
			}
		}
		return model.Object{"IfIndex": int64(st.IfIndex), "OperState": upDownState(st.Up && o.Str("AdminState") == "UP"), "IntfRefListUpInBundle": in}, nil
	},
}

// lagMembers lists LaPortChannelIntfRefListState: every member of every
// LAG swmgr applied, as the bond reports it.
func (b *Backend) lagMembers() ([]model.Object, error) {
	lags := b.appliedOf("LaPortChannel")
	slices.SortFunc(lags, func(x, y model.Object) int { return cmp.Compare(x.Str("IntfRef"), y.Str("IntfRef")) })
	var out []model.Object
	for _, o := range lags {
		name := o.Str("IntfRef")
		st, err := b.k.LAGStateOf(name)
		if err != nil {
			return nil, err
		}
		static := o.Int("LagType") == model.LagTypeStatic
		byDev := map[string]LAGMember{}
		for _, m := range st.Members {
			byDev[m.Netdev] = m
		}
		for _, p := range o.List("IntfRefList") {
			m := byDev[b.ports.Netdev(p)]
			in := m.inBundle(static)
			obj := model.Object{"IntfRef": p, "LagIntfRef": name, "OperState": "DOWN", "IfIndex": int64(m.IfIndex),
				"Activity": boolInt(m.Actor&lacpActivity == 0), "Timeout": boolInt(m.Actor&lacpTimeoutShort != 0),
				"Synchronization": boolInt(m.Actor&lacpSync == 0), "Aggregatable": m.Actor&lacpAggregation != 0,
				"Collecting": m.Actor&lacpCollecting != 0, "Distributing": m.Actor&lacpDistributing != 0, "Defaulted": m.Actor&lacpDefaulted != 0,
				"SystemId": st.SystemMAC, "OperKey": int64(st.ActorKey), "PartnerId": "", "PartnerKey": int64(0)}
			if static {
				obj["Collecting"], obj["Distributing"] = in, in
			}
			if in {
				obj["OperState"] = "UP IN BUNDLE"
				if !static {
					obj["PartnerId"], obj["PartnerKey"] = st.PartnerMAC, int64(st.PartnerKey)
				}
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
