package linux

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

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
	if c.Passive && !c.Static && !k.feat.BondPassive {
		return refuse("LacpMode", "%s: LacpMode 1 (PASSIVE): this kernel's bond always sends LACP frames (lacp_active needs Linux 5.15); use 0 (ACTIVE)", c.Name)
	}
	return nil
}

// checkMemberSpeeds refuses a LAG whose members' speeds (as ethtool
// reports them: a device that does not say is not compared) differ: the
// bond aggregates only ports of one speed (802.3ad leaves the others out
// of the aggregator; balance-xor would give a slow one its share of the
// flows). port names a member netdev's port.
func (k *Kernel) checkMemberSpeeds(c LAGConfig, port func(netdev string) string) error {
	if !k.feat.EthtoolNetlink {
		return nil
	}
	var first string
	var speed int64
	for _, m := range c.Members {
		caps, err := k.Caps(m)
		if err != nil {
			return err
		}
		switch {
		case caps.Speed <= 0:
		case first == "":
			first, speed = m, caps.Speed
		case caps.Speed != speed:
			return refuse("IntfRefList", "%s: member %s runs at %d Mb/s and %s at %d Mb/s; a LAG's members run at one speed", c.Name, port(first), speed, port(m), caps.Speed)
		}
	}
	return nil
}

// bondAttr is one IFLA_BOND_* attribute of a bond's options.
type bondAttr struct {
	typ  int
	data []byte
	what string // as iproute2 spells it, for the Tx's record
}

// bondChanges lists the options of c that differ from old's: those a made
// bond takes without being made again (its mode is LagType, create-only).
// The 802.3ad options go only to an 802.3ad bond (balance-xor refuses them).
func bondChanges(c, old LAGConfig) []bondAttr {
	var out []bondAttr
	if c.MinLinks != old.MinLinks {
		out = append(out, bondAttr{nl.IFLA_BOND_MIN_LINKS, nl.Uint32Attr(uint32(c.MinLinks)), fmt.Sprint("min_links ", c.MinLinks)})
	}
	if c.Hash != old.Hash {
		out = append(out, bondAttr{nl.IFLA_BOND_XMIT_HASH_POLICY, nl.Uint8Attr(uint8(c.Hash)), "xmit_hash_policy " + c.Hash.String()})
	}
	if c.Static {
		return out
	}
	if c.FastRate != old.FastRate {
		rate := netlink.BOND_LACP_RATE_SLOW
		if c.FastRate {
			rate = netlink.BOND_LACP_RATE_FAST
		}
		out = append(out, bondAttr{nl.IFLA_BOND_AD_LACP_RATE, nl.Uint8Attr(uint8(rate)), "lacp_rate " + rate.String()})
	}
	if c.Passive != old.Passive {
		out = append(out, lacpActive(!c.Passive))
	}
	if c.SysPrio != old.SysPrio {
		out = append(out, bondAttr{nl.IFLA_BOND_AD_ACTOR_SYS_PRIO, nl.Uint16Attr(uint16(c.SysPrio)), fmt.Sprint("ad_actor_sys_prio ", c.SysPrio)})
	}
	if c.SysMAC.String() != old.SysMAC.String() {
		mac := c.SysMAC
		if mac == nil {
			mac = make(net.HardwareAddr, 6) // all zero: the bond's own MAC again
		}
		out = append(out, bondAttr{nl.IFLA_BOND_AD_ACTOR_SYSTEM, []byte(mac), "ad_actor_system " + mac.String()})
	}
	return out
}

// bondNeedsDown says whether the bonding driver takes the options of c
// that differ from old's only while the bond is down: lacp_rate and
// lacp_active (min_links, xmit_hash_policy and the actor's system and
// priority change on a bond that is up).
func bondNeedsDown(c, old LAGConfig) bool {
	return !c.Static && (c.FastRate != old.FastRate || c.Passive != old.Passive)
}

// lacpActive is the bond option of an active (on) or passive LACP actor.
func lacpActive(on bool) bondAttr {
	what := "lacp_active off"
	if on {
		what = "lacp_active on"
	}
	return bondAttr{unix.IFLA_BOND_AD_LACP_ACTIVE, nl.Uint8Attr(uint8(boolInt(on))), what}
}

// setBond sets options of the bond with index ifindex in one RTM_NEWLINK
// in the switch's namespace. (netlink.Handle.LinkModify would send the
// link's base attributes with them, and it has no lacp_active.)
func (k *Kernel) setBond(ifindex int, attrs []bondAttr) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(ifindex)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bond"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	for _, a := range attrs {
		data.AddRtAttr(a.typ, a.data)
	}
	req.AddData(info)
	s, err := nl.GetNetlinkSocketAt(k.ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer s.Close()
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: s}}
	_, err = req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// changeBond gives the made bond l the options of c in place of old's, as
// one change of the Tx whose inverse sets old's back. Options the driver
// takes only on a bond that is down are set with the bond down: EnsureLAG
// brings it back to its AdminState after.
func (tx *Tx) changeBond(l netlink.Link, c, old LAGConfig) error {
	set, back := bondChanges(c, old), bondChanges(old, c)
	if len(set) == 0 {
		return nil
	}
	if bondNeedsDown(c, old) {
		if err := tx.setUp(tx.k.h, l, false); err != nil {
			return err
		}
	}
	var what []string
	for _, a := range set {
		what = append(what, a.what)
	}
	idx := l.Attrs().Index
	return tx.change(fmt.Sprintf("set bond %s %s", c.Name, strings.Join(what, " ")),
		func() error { return tx.k.setBond(idx, set) },
		func() error { return tx.k.setBond(idx, back) })
}

// makeBond creates the bond of c, down; a passive one is told so before
// it has a slave or goes up (the driver takes lacp_active only then).
func (k *Kernel) makeBond(c LAGConfig) error {
	if err := k.h.LinkAdd(c.bond()); err != nil {
		return err
	}
	if c.Static || !c.Passive {
		return nil
	}
	l, err := k.h.LinkByName(c.Name)
	if err == nil {
		err = k.setBond(l.Attrs().Index, []bondAttr{lacpActive(false)})
	}
	if err != nil {
		if l != nil {
			k.h.LinkDel(l)
		}
		return fmt.Errorf("lacp_active off: %w", err)
	}
	return nil
}

// EnsureLAG makes the bond match c; old, if set, is the configuration it
// replaces (members no longer listed are released, options changed in
// place). The kernel takes a slave only while it is down, and changes a
// bond's LACP rate and activity only while the bond is down: both are
// taken down first and brought to their admin state after.
func (tx *Tx) EnsureLAG(c LAGConfig, old *LAGConfig, upAfterRelease func(netdev string) bool) error {
	k := tx.k
	l, err := k.h.LinkByName(c.Name)
	if err != nil {
		err := tx.change("create bond "+c.Name, func() error { return k.makeBond(c) }, func() error {
			cur, err := k.h.LinkByName(c.Name)
			if err != nil {
				return err
			}
			return k.h.LinkDel(cur)
		})
		if err != nil {
			return err
		}
		if l, err = k.h.LinkByName(c.Name); err != nil {
			return err
		}
	}
	if old != nil {
		if err := tx.changeBond(l, c, *old); err != nil {
			return err
		}
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
// member that leaves its LAG goes back to its Port's AdminState: the one
// the commit being applied gives it, else the applied one. Its callers
// are the LAG driver's ensure and remove, which apply and reconcile run
// holding b.mu: it must not take b.mu itself.
func (b *Backend) portAdminUp(netdev string) bool {
	port := b.ports.Port(netdev)
	p, ok := b.applyingPorts[port]
	if !ok {
		p = b.applied["Port"][port]
	}
	return p != nil && p.Str("AdminState") == "UP"
}

// lagDriver is the LaPortChannel kind on the Linux backend: a bond.
var lagDriver = &driver{
	check: func(b *Backend, c changeView) error {
		l, err := b.lagConfig(c.after())
		if err != nil {
			return err
		}
		if err := b.k.checkMemberSpeeds(l, b.ports.Port); err != nil {
			return err
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
		var partners map[string]LACPPartner
		if !static {
			if partners, err = b.k.LACPPartners(name); err != nil {
				return nil, err
			}
		}
		byDev := map[string]LAGMember{}
		for _, m := range st.Members {
			byDev[m.Netdev] = m
		}
		for _, p := range o.List("IntfRefList") {
			dev := b.ports.Netdev(p)
			m := byDev[dev]
			in := m.inBundle(static)
			// A member whose link is down keeps the driver's last LACP
			// state: it is neither in sync, collecting nor distributing,
			// nor selected, and has no partner.
			actor := m.Actor
			if !m.MiiUp {
				actor &^= lacpSync | lacpCollecting | lacpDistributing
			}
			obj := model.Object{"IntfRef": p, "LagIntfRef": name, "OperState": "DOWN", "IfIndex": int64(m.IfIndex),
				"SystemId": st.SystemMAC, "OperKey": int64(st.ActorKey), "Selected": m.MiiUp && m.Aggregate}
			putLACPBits(obj, "", actor)
			if static {
				obj["Collecting"], obj["Distributing"] = in, in
			}
			if in {
				obj["OperState"] = "UP IN BUNDLE"
			}
			// The partner as the member last heard it; a member that
			// never heard one (defaulted) has the driver's defaults,
			// which are no partner.
			pt, heard := partners[dev]
			heard = heard && m.MiiUp && m.Actor&lacpDefaulted == 0 && pt.SystemMAC != "00:00:00:00:00:00"
			obj["PartnerId"], obj["PartnerKey"], obj["PartnerSystemPriority"], obj["PartnerPortNum"], obj["PartnerPortPriority"] = "", int64(0), int64(0), int64(0), int64(0)
			putLACPBits(obj, "Partner", 0)
			if k := partners[dev].ActorKey; k != 0 {
				obj["OperKey"] = int64(k)
			}
			if heard {
				obj["PartnerId"], obj["PartnerKey"], obj["PartnerSystemPriority"] = pt.SystemMAC, int64(pt.Key), int64(pt.SystemPriority)
				obj["PartnerPortNum"], obj["PartnerPortPriority"] = int64(pt.PortNumber), int64(pt.PortPriority)
				putLACPBits(obj, "Partner", pt.State)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// putLACPBits sets the fields of 802.3ad port state bits, each named
// prefix+FlexSwitch's name (Activity ... Defaulted): the actor's with
// prefix "", the partner's with "Partner".
func putLACPBits(obj model.Object, prefix string, bits uint8) {
	obj[prefix+"Activity"] = boolInt(bits&lacpActivity == 0)
	obj[prefix+"Timeout"] = boolInt(bits&lacpTimeoutShort != 0)
	obj[prefix+"Synchronization"] = boolInt(bits&lacpSync == 0)
	obj[prefix+"Aggregatable"] = bits&lacpAggregation != 0
	obj[prefix+"Collecting"] = bits&lacpCollecting != 0
	obj[prefix+"Distributing"] = bits&lacpDistributing != 0
	obj[prefix+"Defaulted"] = bits&lacpDefaulted != 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
