package model

import (
	"regexp"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// reservedIntfNameRE are names a loopback cannot take: the kernel's own
// loopback and the SVIs the Vlan kind will make (vlan<N>).
var reservedIntfNameRE = regexp.MustCompile(`(?i)^(lo|vlan[0-9]+)$`)

// logicalIntf is FlexSwitch's LogicalIntf: a loopback interface, which an
// IPv4Intf then gives an address (and a VRF).
var logicalIntf = &Kind{
	Name: "LogicalIntf", Class: Config,
	Doc: "A loopback interface. Its address and VRF are an IPv4Intf whose IntfRef is the loopback's Name.",
	Fields: []*Field{
		{Name: "Name", Type: String, Key: true, Format: FormatIntfName, Doc: "the loopback's name, like Loopback1 (at most 15 characters: it names the Linux device)"},
		{Name: "Type", Type: String, Default: "Loopback", Enum: []string{"Loopback"}},
	},
	Check: func(o Object) error {
		name := o.Str("Name")
		if _, _, isPort := ParsePortName(name); isPort || strings.HasPrefix(strings.ToLower(name), "fpport") {
			return apierr.BadRequest(apierr.CodeInvalidValue, "LogicalIntf", "Name", "Name: %s is a front-panel port's name; a loopback needs another (like Loopback1)", name)
		}
		if reservedIntfNameRE.MatchString(name) {
			return apierr.BadRequest(apierr.CodeInvalidValue, "LogicalIntf", "Name", "Name: %s is reserved (the kernel's loopback, or a VLAN's interface); choose another, like Loopback1", name)
		}
		return nil
	},
	StateOnly: []*Field{
		{Name: "OperState", Type: String, Enum: adminStates},
		{Name: "IfIndex", Type: Int},
	},
}
