package model

import (
	"net/netip"

	"github.com/swmgr/swmgr/internal/apierr"
)

// The groups of swmgr's roles: a User of AdminGroup may do everything, of
// OperatorGroup change the configuration, of any other group (DefaultGroup,
// the default) read.
const (
	AdminGroup    = "admin"
	OperatorGroup = "operator"
	DefaultGroup  = "users"
)

// RoleGroups are the groups of swmgr's roles: where Users made as accounts
// of the host (--accounts host) may be, and nowhere else.
func RoleGroups() []string { return []string{AdminGroup, OperatorGroup, DefaultGroup} }

// vlan is FlexSwitch's Vlan: an 802.1Q VLAN with tagged (IntfList) and
// untagged (UntagIntfList) member ports.
func vlan() *Kind {
	return &Kind{
		Name: "Vlan", Class: Config,
		Interface: &Interface{Prefix: "vlan", Noun: "a VLAN interface", Like: "a VLAN interface like vlan10", Form: "vlan<VlanId>", Key: vlanIntfKey},
		Doc:       "An 802.1Q VLAN. IntfList are its tagged member ports, UntagIntfList its untagged ones; a port is the untagged member of at most one VLAN.",
		Fields: []*Field{
			{Name: "VlanId", Type: Int, Key: true, Range: rng(1, 4094), Doc: "802.1Q VLAN id"},
			{Name: "IntfList", Type: StringList, Format: FormatSwitchPort, Ref: "Port", Doc: "tagged members: ports and LAGs"},
			{Name: "UntagIntfList", Type: StringList, Format: FormatSwitchPort, Ref: "Port", Doc: "untagged members: ports and LAGs"},
			{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates},
			{Name: "AutoState", Type: String, Default: "UP", Enum: adminStates, Doc: "UP: the VLAN interface is up only while one of its member ports is; DOWN: it stays up without members"},
			{Name: "Description", Type: String, MaxLen: 64},
		},
		Check: func(o Object) error {
			tagged := map[string]bool{}
			for _, p := range o.List("IntfList") {
				tagged[p] = true
			}
			for _, p := range o.List("UntagIntfList") {
				if tagged[p] {
					return apierr.BadRequest(apierr.CodeInvalidValue, "Vlan", "UntagIntfList", "UntagIntfList: %s is also in IntfList; a port is a tagged or an untagged member of a VLAN, not both", p)
				}
			}
			return nil
		},
		Constraints: []Constraint{oneUntaggedVlan, routedOrSwitched},
		StateDoc:    "The VLAN interface vlan<VlanId> (its SVI, which an IPv4Intf can name): OperState follows AdminState and, with AutoState UP, its member ports.",
		StateOnly: []*Field{
			{Name: "VlanName", Type: String, Doc: "the VLAN interface's name, vlan<VlanId>"},
			{Name: "OperState", Type: String, Enum: adminStates},
			{Name: "IfIndex", Type: Int},
			{Name: "SysInternalDescription", Type: String, Doc: "why OperState is what it is"},
		},
	}
}

// oneUntaggedVlan: a port carries untagged frames of at most one VLAN.
var oneUntaggedVlan = Constraint{
	Name:  "a port is the untagged member of at most one VLAN",
	Kinds: []string{"Vlan"},
	Check: func(cfg View, changes []Change) error {
		owner := map[string]int64{}
		var clash error
		err := cfg.Each("Vlan", func(_ string, o Object) bool {
			for _, p := range o.List("UntagIntfList") {
				if other, taken := owner[p]; taken {
					a, b := min(other, o.Int("VlanId")), max(other, o.Int("VlanId"))
					clash = apierr.Conflict(apierr.CodeConflict, "Vlan", "UntagIntfList: port %s would be the untagged member of VLAN %d and VLAN %d; a port is the untagged member of at most one VLAN", p, a, b)
					return false
				}
				owner[p] = o.Int("VlanId")
			}
			return true
		})
		if err != nil {
			return err
		}
		return clash
	},
}

// routedOrSwitched: a port that carries an address (a routed port) is not a
// VLAN member, tagged or untagged: its frames would go to the VLAN, not to
// its address (on Linux, a bridge port's own address receives nothing).
var routedOrSwitched = Constraint{
	Name:  "a port is routed (an IPv4Intf on it) or a VLAN member, not both",
	Kinds: []string{"Vlan", "IPv4Intf"},
	Check: func(cfg View, changes []Change) error {
		ports := map[string]bool{}
		for _, c := range changes {
			switch {
			case c.After == nil:
			case c.Kind.Name == "IPv4Intf":
				ports[c.After.Str("IntfRef")] = true
			case c.Kind.Name == "Vlan":
				for _, p := range append(append([]string(nil), c.After.List("IntfList")...), c.After.List("UntagIntfList")...) {
					ports[p] = true
				}
			}
		}
		routed := map[string]Object{}
		for p := range ports {
			if in := cfg.Get("IPv4Intf", p); in != nil {
				routed[p] = in
			}
		}
		if len(routed) == 0 {
			return nil
		}
		var clash error
		err := cfg.Each("Vlan", func(_ string, v Object) bool {
			for _, p := range append(append([]string(nil), v.List("IntfList")...), v.List("UntagIntfList")...) {
				if in := routed[p]; in != nil {
					clash = apierr.Conflict(apierr.CodeConflict, "Vlan", "port %s would be a member of VLAN %d and carry the address %s (IPv4Intf): a port is routed or a VLAN member, not both; give the address to vlan%d instead", p, v.Int("VlanId"), in.Str("IpAddr"), v.Int("VlanId"))
					return false
				}
			}
			return true
		})
		if err != nil {
			return err
		}
		return clash
	},
}

// lastAdmin: a commit may not leave no User in group admin, since nobody
// could manage users any more.
var lastAdmin = Constraint{
	Name:  "at least one User of group admin",
	Kinds: []string{"User"},
	Check: func(cfg View, changes []Change) error {
		deleted := ""
		for _, c := range changes {
			if c.Kind.Name == "User" && c.Op == Delete && c.Before.Str("Group") == AdminGroup {
				deleted = c.Key
			}
		}
		if deleted == "" {
			return nil
		}
		found := false
		err := cfg.Each("User", func(_ string, o Object) bool {
			found = o.Str("Group") == AdminGroup
			return !found
		})
		if err != nil || found {
			return err
		}
		return apierr.Conflict(apierr.CodeConflict, "User", "%s is the last user of group %s: create another admin before deleting it", deleted, AdminGroup)
	},
}

// mirrorLoop: a mirror destination is not a source of any session, as it
// is not one of its own (Span's Check). Across two sessions the copies
// would go round (a port's mirrored traffic copied back to it).
var mirrorLoop = Constraint{
	Name:  "a mirror destination port is not a mirror source",
	Kinds: []string{"Span"},
	Check: func(cfg View, changes []Change) error {
		dst := map[string]string{} // port -> session mirroring to it
		err := cfg.Each("Span", func(_ string, o Object) bool {
			dst[o.Str("DstIntfRef")] = o.Str("SpanSessionName")
			return true
		})
		if err != nil {
			return err
		}
		var clash error
		err = cfg.Each("Span", func(_ string, o Object) bool {
			for _, p := range o.List("SrcIntfRefList") {
				if other, ok := dst[p]; ok {
					clash = apierr.Conflict(apierr.CodeConflict, "Span", "SrcIntfRefList: port %s would be a source of session %s and the destination of session %s; a mirror destination is not a source (the copies would loop)", p, o.Str("SpanSessionName"), other)
					return false
				}
			}
			return true
		})
		if err != nil {
			return err
		}
		return clash
	},
}

// noOverlap: the subnets of two IPv4Intfs in one VRF do not overlap
// (10.0.0.1/31 and 10.0.0.0/31 on two ports): traffic to the shared
// addresses would leave by either interface, as EOS and IOS refuse. An
// interface with AllowOverlap may overlap others, for an operator who
// means it; the same address twice is refused apart (UniqueWithin).
var noOverlap = Constraint{
	Name:  "the subnets of IPv4Intfs in one VRF do not overlap (unless one of the two has AllowOverlap)",
	Kinds: []string{"IPv4Intf"},
	Check: func(cfg View, changes []Change) error {
		type intf struct {
			ref, vrf string
			p        netip.Prefix
			allow    bool
			o        Object
		}
		parse := func(o Object) (intf, bool) {
			p, err := netip.ParsePrefix(o.Str("IpAddr"))
			if err != nil {
				return intf{}, false
			}
			return intf{ref: o.Str("IntfRef"), vrf: o.Str("Vrf"), p: p, allow: o.Bool("AllowOverlap"), o: o}, true
		}
		var changed []intf
		for _, c := range changes {
			if c.Kind.Name == "IPv4Intf" && c.After != nil {
				if in, ok := parse(c.After); ok {
					changed = append(changed, in)
				}
			}
		}
		if len(changed) == 0 {
			return nil
		}
		var all []intf
		if err := cfg.Each("IPv4Intf", func(_ string, o Object) bool {
			if in, ok := parse(o); ok {
				all = append(all, in)
			}
			return true
		}); err != nil {
			return err
		}
		for _, a := range changed {
			for _, b := range all {
				if a.ref == b.ref || a.vrf != b.vrf || a.allow || b.allow || a.p.Addr() == b.p.Addr() || !a.p.Overlaps(b.p) {
					continue
				}
				return apierr.Conflict(apierr.CodeConflict, "IPv4Intf", "IpAddr: %s on %s overlaps %s on %s in VRF %s; subnets of one VRF may not overlap (set AllowOverlap true on one of them to allow it)",
					a.p, a.ref, b.p, b.ref, a.vrf)
			}
		}
		return nil
	},
}
