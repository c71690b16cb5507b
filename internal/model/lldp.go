package model

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// lldpIntfs is LLDP's state on every port as the configuration says:
// whether LLDP runs there (globally, on the port unless its LLDPIntf
// disables it, and not on a port broken out into sub-ports, which run it
// instead) and no neighbor or frames. Where an LLDP agent runs (the Linux
// backend's lldpd) the neighbors it heard are added to these.
func lldpIntfs(cfg map[string][]Object) []Object {
	enable := false
	for _, g := range cfg["LLDPGlobal"] {
		enable = g.Bool("Enable")
	}
	disabled := map[string]bool{}
	for _, i := range cfg["LLDPIntf"] {
		disabled[i.Str("IntfRef")] = !i.Bool("Enable")
	}
	out := make([]Object, len(cfg["Port"]))
	for i, p := range cfg["Port"] {
		out[i] = Object{"IntfRef": p.Str("IntfRef"), "IfIndex": p.Int("IfIndex"), "LocalPort": p.Str("IntfRef"),
			"Enable": enable && !disabled[p.Str("IntfRef")] && !BrokenOut(p)}
	}
	return out
}

// LLDPMode is what LLDP does on a port: its LLDPIntf's TxRxMode, else
// LLDPGlobal's; "" where it does not run (disabled globally or on the
// port).
func LLDPMode(global, intf Object) string {
	if global == nil || !global.Bool("Enable") {
		return ""
	}
	if intf == nil {
		return global.Str("TxRxMode")
	}
	if !intf.Bool("Enable") {
		return ""
	}
	return intf.Str("TxRxMode")
}

// lldpKinds and logicalIntf are kinds FlexSwitch's public labs configure:
// `PATCH LLDPGlobal {"Enable":true}` then `GET state/LLDPIntfs`, and
// `POST LogicalIntf {"Name":"Loopback1"}`.
func lldpKinds() []*Kind {
	return []*Kind{
		{
			Name: "LLDPGlobal", Class: Config, Singleton: true,
			CLI: &CLICommand{Words: []string{"lldp"}, Prompt: []string{"lldp"}},
			Doc: "LLDP on every front-panel port (802.1AB). On the Linux backend with --lldp lldpd, swmgr's lldpd sends and receives it; elsewhere the simulated switch keeps the settings and has no neighbors.",
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "Enable", Type: Bool, CLI: "enable"},
				{Name: "TranmitInterval", Type: Int, Default: int64(30), Range: rng(5, 3600), Doc: "seconds between LLDP frames (FlexSwitch's spelling)"},
				{Name: "TxRxMode", Type: String, Default: "TxRx", Enum: []string{"TxOnly", "RxOnly", "TxRx"}, Doc: "on the ports without an LLDPIntf of their own"},
				{Name: "SnoopAndDrop", Type: Bool, NotYet: "forwarding LLDP frames is platform-specific"},
			},
			StateOnly: []*Field{
				{Name: "Neighbors", Type: Int, Doc: "neighbors learned"},
				{Name: "TotalTxFrames", Type: Int},
				{Name: "TotalRxFrames", Type: Int},
			},
		},
		{
			Name: "LLDPIntf", Class: Config,
			Doc: "LLDP on one port, where it differs from LLDPGlobal: off, or only sending or only receiving. A port without one runs LLDPGlobal's TxRxMode.",
			Fields: []*Field{
				{Name: "IntfRef", Type: String, Key: true, Format: FormatPortName, Ref: "Port", Doc: "the port"},
				{Name: "Enable", Type: Bool, Default: true, Doc: "LLDP on this port (when LLDPGlobal Enable)"},
				{Name: "TxRxMode", Type: String, Default: "TxRx", Enum: []string{"TxOnly", "RxOnly", "TxRx"}},
			},
		},
		{
			Name: "LLDPIntfState", Class: State, Source: SourceService, FeedPolled: true,
			Metrics: &Metrics{Subsystem: "lldp", Doc: "LLDP on a port", Labels: []MetricLabel{{Field: "IntfRef", Label: "port"}}},
			Derived: &Derivation{From: []string{"LLDPGlobal", "LLDPIntf", "Port"}, Func: lldpIntfs},
			CLI: &CLICommand{Words: []string{"lldp", "neighbors"},
				Brief: []string{"IntfRef:Port", "PeerHostName:Neighbor", "PeerPort:Neighbor Port", "PeerMac:Neighbor MAC", "VlanId:VLAN", "HoldTime", "EnabledCapabilities:Capabilities"},
				Shows: []CLIShow{{Words: []string{"lldp", "neighbors", "brief"}, Only: "PeerMac", Doc: "The ports with an LLDP neighbor"}}},
			Doc: "LLDP on one port: whether it runs there and what the neighbor announced. Listed for every port the switch has.",
			Fields: []*Field{
				{Name: "IntfRef", Type: String},
				{Name: "IfIndex", Type: Int},
				{Name: "SendFrames", Type: Int, Doc: "LLDP frames sent", Metric: &Metric{Name: "frames_sent_total", Counter: true}},
				{Name: "ReceivedFrames", Type: Int, Doc: "LLDP frames received", Metric: &Metric{Name: "frames_received_total", Counter: true}},
				{Name: "Enable", Type: Bool, Doc: "LLDPGlobal Enable, and the port's LLDPIntf Enable", Metric: &Metric{Name: "enabled"}},
				{Name: "LocalPort", Type: String},
				{Name: "PeerMac", Type: String, Doc: "the neighbor's MAC address; empty without a neighbor", Metric: &Metric{Name: "neighbor", Present: true}},
				{Name: "PeerPort", Type: String},
				{Name: "PortDescription", Type: String, Doc: "the neighbor's description of its port"},
				{Name: "VlanId", Type: Int, Doc: "the VLAN the neighbor announced (802.1 port VLAN id); 0 without a neighbor"},
				{Name: "PeerHostName", Type: String},
				{Name: "HoldTime", Type: String},
				{Name: "SystemDescription", Type: String},
				{Name: "SystemCapabilities", Type: String},
				{Name: "EnabledCapabilities", Type: String},
				{Name: "PeerChassisId", Type: String, Doc: "the neighbor's chassis id (its MAC address, most often)"},
				{Name: "PeerMgmtAddr", Type: String, Doc: "the neighbor's management addresses, comma-separated"},
			},
		},
	}
}

// logicalIntfNameRE: a name that can be a Linux device (at most 15
// characters) and that no port or VLAN interface has.
var logicalIntfNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,14}$`)

func logicalIntf() *Kind {
	intf := &Interface{Noun: "a LogicalIntf", Like: "a LogicalIntf like Loopback1", Form: "a LogicalIntf name",
		Key: func(name string) (string, bool, string) {
			return name, logicalIntfNameRE.MatchString(name) && !strings.EqualFold(name, kernelLoopback), ""
		}}
	return &Kind{
		Name: "LogicalIntf", Class: Config,
		// FlexSwitch's prompt is (config-if)#: the name is not shown.
		CLI:       &CLICommand{Words: []string{"interface", "logical"}, Prompt: []string{"if", ""}},
		Doc:       "A logical interface: a loopback (Loopback1) that carries an address of the switch itself, up whatever the ports do.",
		Interface: intf,
		Fields: []*Field{
			{Name: "Name", Type: String, Text: TextName, Key: true, MaxLen: 15, Doc: "like Loopback1; not a port (fpPort...) or VLAN (vlan...) name, not lo"},
			{Name: "Type", Type: String, Default: "Loopback", Enum: []string{"Loopback"}},
		},
		Check: func(o Object) error {
			name := o.Str("Name")
			if !logicalIntfNameRE.MatchString(name) {
				return apierr.BadRequest(apierr.CodeInvalidValue, "LogicalIntf", "Name", "Name: %q is not an interface name: 1..15 letters, digits, '_', '.' or '-', starting with a letter", name)
			}
			if by, others := intf.OthersTaken(name); by != "" || strings.EqualFold(name, kernelLoopback) {
				return apierr.BadRequest(apierr.CodeInvalidValue, "LogicalIntf", "Name", "Name: %q is the name of %s; choose another, like Loopback1", name, joinWords(append(others, "the kernel's loopback"), " or "))
			}
			return nil
		},
		StateDoc: "A loopback is always up. The RFC 2233 counters are FlexSwitch's; docs/flexswitch-compat.md says which each backend fills.",
		StateOnly: append([]*Field{
			{Name: "OperState", Type: String, Enum: adminStates},
			{Name: "IfIndex", Type: Int},
			{Name: "SrcMac", Type: String, Doc: "the MAC address of the interface (\"\" for a loopback, which sends no frames)"},
		}, counterFields("IfInOctets", "IfInUcastPkts", "IfInDiscards", "IfInErrors", "IfInUnknownProtos", "IfOutOctets", "IfOutUcastPkts", "IfOutDiscards", "IfOutErrors")...),
	}
}

// kernelLoopback is the kernel's own loopback device, which no LogicalIntf
// may be named (in any case).
const kernelLoopback = "lo"

// vlanIntfRE is a VLAN's interface (its SVI): vlan<VlanId>, as FlexSwitch
// and the Linux backend name it.
var vlanIntfRE = regexp.MustCompile(`^vlan([1-9][0-9]{0,3})$`)

// vlanIntfKey is the Vlan a VLAN interface's name vlan<VlanId> names.
func vlanIntfKey(name string) (key string, ok bool, why string) {
	m := vlanIntfRE.FindStringSubmatch(name)
	if m == nil {
		return "", false, ""
	}
	if n, _ := strconv.Atoi(m[1]); n > 4094 {
		return "", false, "a VLAN interface is vlan<VlanId> with VlanId 1..4094"
	}
	return m[1], true, ""
}

// counterFields declares integer state counters.
func counterFields(names ...string) []*Field {
	out := make([]*Field, len(names))
	for i, n := range names {
		out[i] = &Field{Name: n, Type: Int}
	}
	return out
}
