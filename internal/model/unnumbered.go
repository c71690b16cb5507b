package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// unnumberedKinds are the unnumbered IPv4 interface: an interface with no
// address of its own that borrows a loopback's (EOS's `ip address
// unnumbered Loopback0`, IOS's `ip unnumbered`, Cumulus's loopback /32 on
// each swp). FlexSwitch has no object for it; the kind is named after
// OpenConfig's subinterface ipv4/unnumbered container, whose interface-ref
// names the interface lent from.
func unnumberedKinds() []*Kind {
	return []*Kind{{
		Name: "IPv4Unnumbered", Class: Config,
		Doc: "An unnumbered IPv4 interface: IntfRef has no IPv4 address of its own and borrows the address of the loopback Interface (OpenConfig's ipv4/unnumbered). The interface then sends and answers IPv4 with the loopback's address: a BGP unnumbered uplink that a DHCP relay's servers answer over, a router's ICMP errors. The loopback needs an IPv4 address (IPv4Intf) in the same VRF, which cannot be deleted while lent; the borrower has no IPv4Intf of its own.",
		CLI: &CLICommand{Words: []string{"ip", "unnumbered"}, Prompt: []string{"ip", "unnumbered"}, Value: "Interface", Parents: []string{"Port"}, Inherit: "IntfRef",
			Brief: []string{"IntfRef:Interface", "Interface:Borrows From", "IpAddr:IP Address", "Vrf:VRF", "OperState:Oper"}},
		Fields: []*Field{
			{Name: "IntfRef", Type: String, Key: true, Format: FormatIntfRef, Ref: "Port", Doc: "the borrowing interface: a port, a VLAN interface (vlan10) or a LAG; not a loopback"},
			{Name: "Interface", Type: String, Required: true, Ref: "LogicalIntf", Doc: "the loopback (LogicalIntf, Loopback1) whose IPv4 address the interface borrows (OpenConfig's interface-ref)"},
			{Name: "Vrf", Type: String, Default: "default", Ref: "Vrf", RefImplied: "default", Format: FormatObjName, Doc: "the VRF of the interface: the loopback's (its IPv4Intf's Vrf)"},
		},
		Constraints: []Constraint{borrowsALoopbackAddress, borrowerIsRouted},
		StateDoc:    "IpAddr is the address borrowed (the loopback's, with its prefix length); OperState is UP when the interface is up and carries it.",
		StateOnly: []*Field{
			{Name: "IpAddr", Type: String, Doc: "the borrowed address: the loopback's IPv4Intf IpAddr"},
			{Name: "OperState", Type: String, Enum: adminStates},
			{Name: "IfIndex", Type: Int},
		},
	}}
}

// borrowsALoopbackAddress: an IPv4Unnumbered's Interface is a loopback
// with an IPv4 address in the borrower's VRF; the borrower is not a
// loopback and has no IPv4Intf of its own. A change of the unnumbered
// interface is refused as bad input (400); a change of the addresses
// that would break a borrower is refused as a conflict (409) naming the
// borrowers, as is a change of a lent address unless every borrower is
// changed in the same commit (deleted and made again).
var borrowsALoopbackAddress = Constraint{
	Name:  "unnumbered-borrows-a-loopback-address",
	Kinds: []string{"IPv4Unnumbered", "IPv4Intf", "LogicalIntf"},
	Check: func(cfg View, changes []Change) error {
		changedBorrowers := map[string]bool{}
		readdressed := map[string]bool{} // loopbacks whose address or VRF this commit changes
		for _, c := range changes {
			switch c.Kind.Name {
			case "IPv4Unnumbered":
				changedBorrowers[c.Key] = true
			case "IPv4Intf":
				if c.Before != nil && c.After != nil && (c.Before.Str("IpAddr") != c.After.Str("IpAddr") || c.Before.Str("Vrf") != c.After.Str("Vrf")) {
					readdressed[c.Before.Str("IntfRef")] = true
				}
			}
		}
		borrowers := map[string][]string{} // loopback -> its borrowers
		vrfOf := map[string]string{}       // borrower -> its VRF
		var err error
		eachErr := cfg.Each("IPv4Unnumbered", func(key string, o Object) bool {
			intf, lb, vrf := o.Str("IntfRef"), o.Str("Interface"), o.Str("Vrf")
			borrowers[lb] = append(borrowers[lb], intf)
			vrfOf[intf] = vrf
			byBorrower := changedBorrowers[key]
			own := cfg.Get("IPv4Intf", intf)
			lent := cfg.Get("IPv4Intf", lb)
			switch {
			case cfg.Get("LogicalIntf", intf) != nil:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "IPv4Unnumbered", "IntfRef", "IntfRef: %s is a loopback: a loopback has an address of its own (IPv4Intf) and lends it", intf)
			case own != nil && byBorrower:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "IPv4Unnumbered", "IntfRef", "IntfRef: %s has an IPv4 address of its own (IPv4Intf %s): an interface either has one or borrows one; delete the IPv4Intf first", intf, own.Str("IpAddr"))
			case own != nil:
				err = apierr.Conflict(apierr.CodeInvalidValue, "IPv4Intf", "IPv4Intf %s: %s borrows %s's address (IPv4Unnumbered): an interface either has an address or borrows one; delete the IPv4Unnumbered first", intf, intf, lb)
			case lent == nil && byBorrower:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "IPv4Unnumbered", "Interface", "Interface: %s has no IPv4 address (IPv4Intf) to lend", lb)
			case lent != nil && lent.Str("Vrf") != vrf && byBorrower:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "IPv4Unnumbered", "Vrf", "Vrf: %s's address is in VRF %q, the unnumbered interface in %q: an interface borrows within its VRF", lb, lent.Str("Vrf"), vrf)
			}
			return err == nil
		})
		if eachErr != nil {
			return eachErr
		}
		if err != nil {
			return err
		}
		for _, lb := range slices.Sorted(maps.Keys(borrowers)) {
			names := borrowers[lb]
			slices.Sort(names)
			lent := cfg.Get("IPv4Intf", lb)
			if lent == nil {
				return apierr.Conflict(apierr.CodeReferenced, "IPv4Intf", "IPv4Intf %s: %s %s its address (IPv4Unnumbered); delete %s first", lb, strings.Join(names, ", "), borrowVerb(names), itOrThem(names))
			}
			elsewhere := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return vrfOf[n] == lent.Str("Vrf") })
			switch {
			case len(elsewhere) > 0:
				return apierr.Conflict(apierr.CodeInvalidValue, "IPv4Intf", "IPv4Intf %s: %s %s its address in VRF %q; move %s with it", lb, strings.Join(elsewhere, ", "), borrowVerb(elsewhere), vrfOf[elsewhere[0]], itOrThem(elsewhere))
			case readdressed[lb] && slices.ContainsFunc(names, func(n string) bool { return !changedBorrowers[n] }):
				return apierr.Conflict(apierr.CodeReferenced, "IPv4Intf", "IPv4Intf %s: %s %s its address (IPv4Unnumbered); delete %s and make %s again in the same commit to change it", lb, strings.Join(names, ", "), borrowVerb(names), itOrThem(names), itOrThem(names))
			}
		}
		return nil
	},
}

// borrowerIsRouted: an unnumbered interface is a routed one, not a port
// that is a VLAN's member or a LAG's (its frames are the VLAN's or the
// LAG's), as a port with an IPv4Intf is not. 400 when the IPv4Unnumbered
// is what changed, else 409 on the Vlan or LAG that would take it.
var borrowerIsRouted = Constraint{
	Name:  "an unnumbered interface is not a VLAN's or a LAG's member",
	Kinds: []string{"IPv4Unnumbered", "Vlan", "LaPortChannel"},
	Check: func(cfg View, changes []Change) error {
		borrowers := map[string]bool{}
		if err := cfg.Each("IPv4Unnumbered", func(_ string, o Object) bool { borrowers[o.Str("IntfRef")] = true; return true }); err != nil || len(borrowers) == 0 {
			return err
		}
		changed := map[string]bool{}
		for _, c := range changes {
			if c.Kind.Name == "IPv4Unnumbered" {
				changed[c.Key] = true
			}
		}
		refuse := func(port, kind, of string) error {
			if changed[port] {
				return apierr.BadRequest(apierr.CodeInvalidValue, "IPv4Unnumbered", "IntfRef", "IntfRef: %s is a member of %s: its frames are %s's, and a member borrows no address; make %s unnumbered instead", port, of, of, of)
			}
			return apierr.Conflict(apierr.CodeConflict, kind, "port %s borrows a loopback's address (IPv4Unnumbered) and would be a member of %s: a port is routed or a member, not both; delete its IPv4Unnumbered first", port, of)
		}
		owner, err := lagMembership(cfg)
		if err != nil {
			return err
		}
		for _, p := range slices.Sorted(maps.Keys(owner)) {
			if borrowers[p] {
				return refuse(p, "LaPortChannel", owner[p])
			}
		}
		var clash error
		err = cfg.Each("Vlan", func(_ string, v Object) bool {
			for _, p := range append(slices.Clone(v.List("IntfList")), v.List("UntagIntfList")...) {
				if borrowers[p] {
					clash = refuse(p, "Vlan", fmt.Sprintf("vlan%d", v.Int("VlanId")))
					return false
				}
			}
			return true
		})
		return cmpErr(err, clash)
	},
}

func borrowVerb(names []string) string {
	if len(names) == 1 {
		return "borrows"
	}
	return "borrow"
}

func itOrThem(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}

// ocUnnumberedPath is OpenConfig's unnumbered container of an interface's
// subinterface 0 (openconfig-if-ip), where swmgr's interfaces carry IPv4.
const ocUnnumberedPath = ocIfPath + "/subinterfaces/subinterface[index=0]/ipv4/unnumbered"

// unnumberedOpenConfigLeaves map IPv4Unnumbered: enabled is the object's
// existence (true), interface-ref the loopback lent from (its
// subinterface 0).
func unnumberedOpenConfigLeaves() []OpenConfigLeaf {
	return slices.Concat(
		ocConfigState(ocUnnumberedPath, "enabled", "IPv4Unnumbered", "IntfRef", "exists"),
		ocConfigState(ocUnnumberedPath+"/interface-ref", "interface", "IPv4Unnumbered", "Interface", ""),
		ocConfigState(ocUnnumberedPath+"/interface-ref", "subinterface", "IPv4Unnumbered", "Interface", "index0"),
	)
}
