package model

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Builtin returns the registry of every kind swmgr serves. Each call builds a
// fresh registry, so nothing here is shared mutable state.
func Builtin() *Registry {
	// Declaration order is apply order: one family a line, each after
	// the families it refers to.
	r, err := NewRegistry(slices.Concat(
		builtinKinds(), systemKinds(), lldpKinds(),
		routeKinds(), ipv6Kinds(), unnumberedKinds(), evpnKinds(),
		aaaKinds(), ztpKinds(), intentKinds(),
		aclKinds(), policyKinds(), bfdKinds(), dhcpRelayKinds(),
	)...)
	if err != nil {
		panic(err) // a mistake in the declarations below; caught by every test
	}
	return r
}

var (
	adminStates = []string{"UP", "DOWN"}
	shells      = []string{"Bash", "CLI"}
	timestamps  = []string{"append", "prepend", "disabled"}
	// breakoutModes maps each BreakOutMode to its sub-port count and lane speed (Mb/s).
	breakoutModes = map[string]struct {
		Lanes int
		Speed int64
	}{"1x100": {1, 100000}, "1x40": {1, 40000}, "2x50": {2, 50000}, "4x25": {4, 25000}, "4x10": {4, 10000}}
)

// reservedAccounts are the system accounts of a Debian-like switch: a User
// of that name would take over (or collide with) the account.
var reservedAccounts = setOf("root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp",
	"proxy", "www-data", "backup", "list", "irc", "gnats", "nobody", "_apt", "messagebus", "sshd", "_chrony",
	"chrony", "ntp", "syslog", "polkitd", "tss", "uuidd", "tcpdump", "_rpc", "statd", "avahi", "dnsmasq")

// reservedGroups are system groups that carry privileges of their own
// (sudo, reading logs or disks); admin, operator and users are the roles.
var reservedGroups = setOf("root", "sudo", "wheel", "adm", "shadow", "disk", "kmem", "tty", "dialout", "staff",
	"systemd-journal", "docker", "lxd", "libvirt", "kvm", "netdev", "utmp", "src", "crontab", "ssh", "nogroup")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func rng(min, max int64) *Range { return &Range{Min: min, Max: max} }

func builtinKinds() []*Kind {
	port := &Kind{
		Name: "Port", Class: Config, Discovered: true,
		Interface: &Interface{Prefix: "fpPort", Noun: "a port", Like: "a port like fpPort1 or fpPort1s2", Form: "fpPort<N>, fpPort<N>s<M>", Member: true,
			Key: func(name string) (string, bool, string) { return name, portNameRE.MatchString(name), "" }},
		CLI: &CLICommand{Words: []string{"interface", "fpPort"}, Prompt: []string{"if", "fpPort"}, Join: true,
			Brief: portBrief,
			Shows: []CLIShow{
				{Words: []string{"interfaces"}, Doc: "Every port: state, speed, MTU, VLAN or address, description"},
				{Words: []string{"interfaces", "brief"}, Doc: "Every port: state, speed, MTU, VLAN or address, description"},
				// FlexSwitch's show interface status: Port, Description, Status, Mtu, Duplex, Speed, AutoNeg, Type.
				{Words: []string{"interface", "status"}, Columns: []string{"IntfRef:Port", "Description", "OperState:Status", "Mtu", "Duplex", "Speed", "Autoneg:AutoNeg", "MediaType:Type"}, Doc: "Every port's status (FlexSwitch's columns)"},
				{Words: []string{"interfaces", "status"}, Columns: []string{"IntfRef:Port", "Description:Name", "OperState:Status", "Vlan.VlanId:Vlan", "Duplex", "Speed", "MediaType:Type"}, Doc: "Every port's link status (EOS's columns)"},
				{Words: []string{"interfaces", "counters"}, Columns: []string{"IntfRef:Port", "IfInOctets:InOctets", "IfInUcastPkts:InUcastPkts", "IfInErrors:InErrors", "IfOutOctets:OutOctets", "IfOutUcastPkts:OutUcastPkts", "IfOutErrors:OutErrors"}, Doc: "Every port's traffic counters"},
			}},
		Metrics: &Metrics{Subsystem: "port", Labels: []MetricLabel{{Field: "IntfRef", Label: "port"}}, Doc: "Front-panel port"},
		Doc:     "A front-panel port (fpPort<N>) or a breakout sub-port (fpPort<N>s<M>). Ports are discovered from the switch; they are changed with PATCH and cannot be created or deleted. BreakOutMode 4x10, 4x25 or 2x50 on a front-panel port creates its sub-ports; 1x40 or 1x100 removes them. A broken-out port itself cannot be used by other objects (use its sub-ports), and a port in use cannot be broken out.",
		Fields: []*Field{
			{Name: "IntfRef", Type: String, Key: true, Format: FormatPortName, Doc: "port name"},
			{Name: "IfIndex", Type: Int, ReadOnly: true, Doc: "interface index"},
			{Name: "Description", Type: String, Default: "FP Port", MaxLen: 64},
			{Name: "PhyIntfType", Type: String, Default: "CR4", Enum: []string{"GMII", "SGMII", "QSMII", "SFI", "XFI", "XAUI", "XLAUI", "RXAUI", "CR", "CR2", "CR4", "KR", "KR2", "KR4", "SR", "SR2", "SR4", "SR10", "LR", "LR4"}},
			{Name: "AdminState", Type: String, Default: "DOWN", Enum: adminStates, CLI: "shutdown", CLISwitch: "DOWN"},
			{Name: "MacAddr", Type: String, Format: FormatMAC, ReadOnly: true},
			{Name: "Speed", Type: Int, Default: int64(40000), Range: rng(10, 100000), Aliases: []string{"speed"}, Doc: "Mb/s", CLI: "speed", Discovered: true, Metric: &Metric{Name: "speed_bytes", Scale: 125000}},
			{Name: "Duplex", Type: String, Default: "Full_Duplex", Enum: []string{"Half_Duplex", "Full_Duplex"}, CLI: "duplex", Discovered: true},
			{Name: "Autoneg", Type: String, Default: "OFF", Enum: []string{"ON", "OFF"}, CLI: "negotiate", CLISwitch: "ON", Discovered: true},
			{Name: "MediaType", Type: String, MaxLen: 64, Discovered: true},
			{Name: "Mtu", Type: Int, Default: int64(1500), Range: rng(68, 9216), Doc: "bytes", CLI: "mtu", Metric: &Metric{Name: "mtu_bytes"}},
			{Name: "BreakOutMode", Type: String, Default: "1x40", Enum: []string{"1x100", "1x40", "2x50", "4x25", "4x10"}},
			{Name: "LoopbackMode", Type: String, Default: "NONE", Enum: []string{"NONE", "MAC", "PHY", "RMT"}},
			{Name: "EnableFEC", Type: Bool},
			{Name: "PRBSTxEnable", Type: Bool},
			{Name: "PRBSRxEnable", Type: Bool},
			{Name: "PRBSPolynomial", Type: String, Default: "2^7", Enum: []string{"2^7", "2^23", "2^31"}},
			{Name: "DscpToCosProfileRef", Type: String, Format: FormatObjName},
			{Name: "PcpToCosProfileRef", Type: String, Format: FormatObjName},
			{Name: "SchedProfileRef", Type: String, Format: FormatObjName},
			{Name: "StormControlProfile", Type: String, Text: TextName, Default: "NONE", MaxLen: 64},
		},
		StateDoc: "Operational state of the port; OperState follows AdminState and the link.",
		StateOnly: []*Field{
			{Name: "Name", Type: String},
			{Name: "OperState", Type: String, Enum: adminStates, Doc: "1 while the link is up (OperState UP), else 0", Metric: &Metric{Name: "up", Is: "UP"}},
			{Name: "NumUpEvents", Type: Int, Doc: "times the link went up", Metric: &Metric{Name: "carrier_up_changes_total", Counter: true}},
			{Name: "NumDownEvents", Type: Int, Doc: "times the link went down", Metric: &Metric{Name: "carrier_down_changes_total", Counter: true}},
			{Name: "LastUpEventTime", Type: String},
			{Name: "LastDownEventTime", Type: String},
			{Name: "IfInOctets", Type: Int, Doc: "bytes received", Metric: &Metric{Name: "receive_bytes_total", Counter: true}},
			{Name: "IfInUcastPkts", Type: Int, Doc: "unicast packets received", Metric: &Metric{Name: "receive_unicast_packets_total", Counter: true}},
			{Name: "IfInDiscards", Type: Int, Doc: "received packets dropped without an error", Metric: &Metric{Name: "receive_drop_total", Counter: true}},
			{Name: "IfInErrors", Type: Int, Doc: "received packets with errors", Metric: &Metric{Name: "receive_errs_total", Counter: true}},
			{Name: "IfOutOctets", Type: Int, Doc: "bytes sent", Metric: &Metric{Name: "transmit_bytes_total", Counter: true}},
			{Name: "IfOutUcastPkts", Type: Int, Doc: "unicast packets sent", Metric: &Metric{Name: "transmit_unicast_packets_total", Counter: true}},
			{Name: "IfOutDiscards", Type: Int, Doc: "packets to send dropped without an error", Metric: &Metric{Name: "transmit_drop_total", Counter: true}},
			{Name: "IfOutErrors", Type: Int, Doc: "packets not sent because of errors", Metric: &Metric{Name: "transmit_errs_total", Counter: true}},
			{Name: "PresentInHW", Type: String},
		},
	}
	port.StateOnly = append(port.StateOnly, portStateExtra()...)
	port.StateDoc += " The RFC 1757 IfEther* counters, Pvid, ConfigMode, ErrDisableReason and PRBSRxErrCnt are FlexSwitch's; docs/objects.md says which each backend fills."
	port.Check = func(o Object) error {
		_, sub, _ := ParsePortName(o.Str("IntfRef"))
		if sub != 0 && breakoutModes[o.Str("BreakOutMode")].Lanes == 1 {
			return apierr.BadRequest(apierr.CodeInvalidValue, "Port", "BreakOutMode", "BreakOutMode: %s is a breakout sub-port and cannot be broken out again", o.Str("IntfRef"))
		}
		return nil
	}
	port.Referable = func(o Object) error {
		name, mode := o.Str("IntfRef"), o.Str("BreakOutMode")
		if _, sub, _ := ParsePortName(name); sub == 0 && breakoutModes[mode].Lanes > 1 {
			return apierr.BadRequest(apierr.CodeInvalidValue, "Port", "IntfRef", "%s is broken out (%s) into %ss1..%ss%d; use one of those", name, mode, name, name, breakoutModes[mode].Lanes)
		}
		return nil
	}
	port.Children = func(o Object) []Object {
		name := o.Str("IntfRef")
		if _, sub, _ := ParsePortName(name); sub != 0 {
			return nil
		}
		mode := breakoutModes[o.Str("BreakOutMode")]
		if mode.Lanes < 2 {
			return nil
		}
		children := make([]Object, mode.Lanes)
		for i := range children {
			c := port.Defaults()
			c["IntfRef"] = fmt.Sprintf("%ss%d", name, i+1)
			c["Speed"] = mode.Speed
			c["BreakOutMode"] = o.Str("BreakOutMode")
			c["PhyIntfType"] = o.Str("PhyIntfType")
			c["MediaType"] = o.Str("MediaType")
			children[i] = c
		}
		return children
	}

	vrfRef := func(f *Field) *Field {
		f.Ref, f.RefImplied, f.Format = "Vrf", "default", FormatObjName
		if f.Default == nil && !f.Key {
			f.Default = "default"
		}
		return f
	}

	// Declaration order is apply order: what others refer to comes first.
	return append([]*Kind{
		{
			Name: "SystemParam", Class: Config, Singleton: true,
			CLI: &CLICommand{Words: []string{"system"}, Prompt: []string{"system"}},
			Doc: "System-wide settings.",
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "MgmtIp", Type: String, Format: FormatIPv4Host},
				{Name: "Hostname", Type: String, Default: "switch", Format: FormatHostname, MaxLen: 64, Doc: "the kernel keeps at most 64 characters"},
				{Name: "SwitchMac", Type: String, Format: FormatMAC, ReadOnly: true},
				{Name: "SwVersion", Type: String, ReadOnly: true},
				{Name: "Description", Type: String, Default: "swmgr switch", MaxLen: 255},
				{Name: "Timezone", Type: String, Default: "UTC", MaxLen: 64},
			},
			Check: func(o Object) error {
				tz := o.Str("Timezone")
				if _, err := time.LoadLocation(tz); err != nil || tz == "" || tz == "Local" {
					return apierr.BadRequest(apierr.CodeInvalidValue, "SystemParam", "Timezone", "Timezone: %q is not an IANA time zone like UTC or America/New_York", tz)
				}
				return nil
			},
			StateOnly: []*Field{
				{Name: "Distro", Type: String},
				{Name: "Kernel", Type: String},
				{Name: "UpTime", Type: String},
				{Name: "RunningRevision", Type: Int, Doc: "the revision of the running configuration"},
				{Name: "SavedRevision", Type: Int, Doc: "the revision the last SaveConfig saved (0: never saved)"},
				{Name: "UnsavedChanges", Type: Bool, Doc: "the running configuration changed since the last SaveConfig"},
				{Name: "LastSaved", Type: String, Doc: "when and where the last SaveConfig wrote"},
			},
		},
		port,
		laPortChannel(),
		laPortChannelMembers(),
		macTableEntries(),
		clearMacTable(),
		vlan(),
		{
			Name: "Vrf", Class: Config,
			Doc: "A VRF. The VRF \"default\" always exists and is not an object.",
			CLI: &CLICommand{Words: []string{"vrf"}, Prompt: []string{"vrf"}},
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Format: FormatObjName, Doc: "VRF name"},
				{Name: "Name", Type: String, MaxLen: 64, Doc: "VRF name as FlexSwitch 2.x also carried it; free text"},
			},
			Check: func(o Object) error {
				if strings.EqualFold(o.Str("Vrf"), "default") {
					return apierr.Conflict(apierr.CodeDuplicate, "Vrf", "the VRF \"default\" always exists and cannot be created or deleted")
				}
				return nil
			},
		},
		logicalIntf(),
		{
			Name: "IPv4Intf", Class: Config,
			Doc: "An IPv4 address on an interface; one per interface.",
			CLI: &CLICommand{Words: []string{"ip", "address"}, Prompt: []string{"ip"}, Value: "IpAddr", Parents: []string{"Port", "LogicalIntf"}, Inherit: "IntfRef", Show: []string{"ip", "interface"},
				// FlexSwitch's show ip interface: Interface, IP Address, OperState, DownEvents, Last Flap.
				Brief: []string{"IntfRef:Interface", "IpAddr:IP Address", "Vrf:VRF", "AdminState:Admin", "OperState:Oper", "NumDownEvents:DownEvents", "LastDownEventTime:Last Flap"}},
			Fields: []*Field{
				{Name: "IntfRef", Type: String, Key: true, Format: FormatIntfRef, Ref: "Port", Doc: "the port, the VLAN interface (vlan10) or the LogicalIntf (Loopback1) that carries the address"},
				{Name: "IpAddr", Type: String, Required: true, Format: FormatIPv4CIDR, UniqueWithin: []string{"Vrf"}, Doc: "<ipv4>/<prefix length>"},
				{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates, CLI: "shutdown", CLISwitch: "DOWN"},
				vrfRef(&Field{Name: "Vrf", Type: String, Default: "default", Doc: "VRF of the interface", CLI: "vrf"}),
				{Name: "AllowOverlap", Type: Bool, Doc: "true lets the subnet overlap another interface's in the same VRF (refused otherwise, as EOS and IOS do)", CLI: "allow_overlap"},
			},
			Constraints: []Constraint{noOverlap},
			StateDoc:    "OperState is UP when the interface and its port are both up.",
			StateOnly: []*Field{
				{Name: "OperState", Type: String, Enum: adminStates},
				{Name: "IfIndex", Type: Int},
				{Name: "NumUpEvents", Type: Int},
				{Name: "NumDownEvents", Type: Int},
				{Name: "L2IntfType", Type: String},
				{Name: "L2IntfId", Type: Int},
				{Name: "LastUpEventTime", Type: String},
				{Name: "LastDownEventTime", Type: String},
			},
		},
		{
			Name: "BGPGlobal", Class: Config, Singleton: true,
			Doc: "The BGP speaker of the default VRF. ASNum \"\" leaves BGP unconfigured.",
			CLI: &CLICommand{Words: []string{"router", "bgp"}, Prompt: []string{"router", "bgp"}, Value: "ASNum", Show: []string{"ip", "bgp", "global"}},
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "ASNum", Type: String, Format: FormatASN, Doc: "local AS, asplain or asdot"},
				{Name: "RouterId", Type: String, Default: "0.0.0.0", Format: FormatIPv4, CLI: "router_id", InEffect: true, Doc: "0.0.0.0: the routing daemon chooses one, which the state shows (where one runs)"},
				{Name: "Disabled", Type: Bool, CLI: "shutdown"},
				{Name: "UseMultiplePaths", Type: Bool, CLI: "use_multiple_paths"},
				{Name: "EBGPMaxPaths", Type: Int, Default: int64(1), Range: rng(0, 64), Doc: "0 (FlexSwitch's default) is one path", CLI: "maximum_paths", InEffect: true},
				{Name: "EBGPAllowMultipleAS", Type: Bool, CLI: "bestpath_as_path_multipath_relax"},
				{Name: "IBGPMaxPaths", Type: Int, Default: int64(1), Range: rng(0, 64), Doc: "0 (FlexSwitch's default) is one path", CLI: "maximum_ibgp_paths", InEffect: true},
				redistribution("BGPGlobal"),
			},
			Check: checkRedistribution("BGPGlobal"),
			StateOnly: []*Field{
				{Name: "AS", Type: String},
				{Name: "TotalPaths", Type: Int},
				{Name: "Totalv4Prefixes", Type: Int},
				{Name: "Totalv6Prefixes", Type: Int},
				{Name: "DefaultMED", Type: Int, Doc: "the MED sent when a route has none"},
				{Name: "Defaultv4Route", Type: Bool, Doc: "a default IPv4 route is originated"},
				{Name: "Defaultv6Route", Type: Bool, Doc: "a default IPv6 route is originated"},
			},
		},
		{
			Name: "BGPVrf", Class: Config,
			Doc: "BGP settings of one VRF: its paths, and the routes redistributed into its BGP (a tenant VRF's connected subnets, which an EVPN L3 VNI advertises as type-5 routes).",
			CLI: &CLICommand{Words: []string{"vrf"}, Prompt: []string{"vrf"}, Parents: []string{"BGPGlobal"}, Show: []string{"ip", "bgp", "vrf"}},
			Fields: []*Field{
				vrfRef(&Field{Name: "Name", Type: String, Key: true, Doc: "VRF name"}),
				{Name: "UseMultiplePaths", Type: Bool, CLI: "use_multiple_paths"},
				{Name: "EBGPMaxPaths", Type: Int, Default: int64(1), Range: rng(1, 64), CLI: "maximum_paths"},
				{Name: "IBGPMaxPaths", Type: Int, Default: int64(1), Range: rng(1, 64), CLI: "maximum_ibgp_paths"},
				redistribution("BGPVrf"),
			},
			Check: checkRedistribution("BGPVrf"),
		},
		bgpPeerGroup(vrfRef),
		{
			Name: "BGPv4Neighbor", Class: Config,
			Doc: "A BGP peer over IPv4, keyed by VRF, address and FlexSwitch's IntfRef, which is \"\" (its default) for a neighbor by address.",
			CLI: &CLICommand{Words: []string{"neighbor", "ip"}, Value: "NeighborAddress", Prompt: []string{"neighbor"}, Parents: []string{"BGPGlobal", "BGPVrf"}, Inherit: "Vrf", Show: []string{"ip", "bgp", "neighbor"},
				// FlexSwitch's show ip bgp neighbor: Neighbor, LocalAS, PeerAS, State, RxMsg, TxMsg, Description, Prefixes_Rcvd, ElapsedTime.
				Brief: []string{"NeighborAddress:Neighbor", "Vrf:VRF", "LocalAS", "PeerAS", "SessionState:State", "Messages.Received.Update:RxMsg", "Messages.Sent.Update:TxMsg", "Description", "TotalPrefixes:Prefixes_Rcvd", "SessionStateDuration:ElapsedTime"},
				Shows: []CLIShow{{Words: []string{"ip", "bgp", "summary"}, Doc: "Every BGP session: AS, state, time in state, prefixes received",
					Columns: []string{"NeighborAddress:Neighbor", "Vrf:VRF", "PeerAS:AS", "Messages.Received.Update:UpdRcvd", "Messages.Sent.Update:UpdSent", "SessionStateDuration:Up/Down", "SessionState:State", "TotalPrefixes:PfxRcd"}}}},
			Metrics:   &Metrics{Subsystem: "bgp_peer", Doc: "BGP session", Labels: []MetricLabel{{Field: "Vrf", Label: "vrf"}, {Field: "NeighborAddress", Label: "peer"}, {Field: "PeerAS", Label: "peer_as"}}},
			Fields:    bgpNeighborFields(vrfRef),
			Check:     checkBGPNeighbor,
			StateOnly: append(bgpNeighborStateFields(), unnumberedIPv6CounterFields()...),
		},
		{
			Name: "Span", Class: Config,
			Doc: "A port-mirroring session: traffic of the source ports is copied to the destination port.",
			CLI: &CLICommand{Words: []string{"span", "session"}, Prompt: []string{"span", "session"}},
			Fields: []*Field{
				{Name: "SpanSessionName", Type: String, Key: true, Format: FormatObjName},
				{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates, CLI: "shutdown", CLISwitch: "DOWN"},
				{Name: "DstIntfRef", Type: String, Required: true, Format: FormatSwitchPort, Ref: "Port"},
				{Name: "MirrorDir", Type: String, Default: "BOTH", Enum: []string{"RX", "TX", "BOTH"}},
				{Name: "SrcIntfRefList", Type: StringList, Required: true, Format: FormatSwitchPort, Ref: "Port"},
			},
			Constraints: []Constraint{mirrorLoop},
			Check: func(o Object) error {
				src := o.List("SrcIntfRefList")
				if len(src) == 0 {
					return apierr.BadRequest(apierr.CodeInvalidValue, "Span", "SrcIntfRefList", "SrcIntfRefList: give at least one source port")
				}
				for _, s := range src {
					if s == o.Str("DstIntfRef") {
						return apierr.BadRequest(apierr.CodeInvalidValue, "Span", "SrcIntfRefList", "SrcIntfRefList: %s is also the destination port", s)
					}
				}
				return nil
			},
		},
		{
			Name: "User", Class: Config, Role: RoleAdmin,
			Constraints: []Constraint{lastAdmin},
			UpdateHint:  "only Access and DefaultShell can be updated (use the UserPassword action for a password; delete and re-create the user for anything else)",
			Account:     &Account{GroupField: "Group", ShellField: "Access", ShellValue: "Bash"},
			Doc:         "A user of the switch: an account of its operating system. Only Access and DefaultShell can be updated; to change anything else, delete the user and create it again.",
			CLI: &CLICommand{Words: []string{"user"}, Prompt: []string{"user"},
				Shows: []CLIShow{{Words: []string{"users"}, Doc: "The switch's users"}}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatUserName, Aliases: []string{"NAME"}, Doc: "not a system account (root, daemon, sshd, ...)"},
				{Name: "Access", Type: String, Default: "CLI", Enum: shells},
				{Name: "DefaultShell", Type: String, Default: "CLI", Enum: shells},
				{Name: "Password", Type: String, Required: true, Secret: Transient, Text: TextSecret, CreateOnly: true, MaxLen: 256, Doc: "at least 8 characters; kept by the OS, never by swmgr"},
				{Name: "Group", Type: String, Default: DefaultGroup, Format: FormatUserName, CreateOnly: true, Doc: "admin, operator, or another group (read-only role); privileged system groups (root, sudo, adm, shadow, ...) are refused; with the host's accounts (--accounts host) only admin, operator and users"},
			},
			Check: func(o Object) error {
				if reservedAccounts[o.Str("Name")] || strings.HasPrefix(o.Str("Name"), "systemd-") {
					return apierr.BadRequest(apierr.CodeInvalidValue, "User", "Name", "Name: %q is a system account of the switch and cannot be a User", o.Str("Name"))
				}
				if reservedGroups[o.Str("Group")] || reservedAccounts[o.Str("Group")] {
					return apierr.BadRequest(apierr.CodeInvalidValue, "User", "Group", "Group: %q is a system group and would give the user powers beyond swmgr's roles; use admin, operator, users or a group of your own", o.Str("Group"))
				}
				return checkPassword("User", o.Str("Password"))
			},
		},
		{
			Name: "ConfigArchiveServer", Class: Config,
			Doc: "A server that receives archives of the configuration.",
			CLI: &CLICommand{Words: []string{"archive", "server"}, Prompt: []string{"archive", "server"}},
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Key: true, Format: FormatIPOrFQDN},
				{Name: "Port", Type: Int, Default: int64(22), Range: rng(1, 65535), Doc: "SSH port (swmgr's addition; FlexSwitch always used 22)"},
				{Name: "Username", Type: String, MaxLen: 64, Aliases: []string{"UserName"}},
				{Name: "Password", Type: String, Secret: Sealed, Text: TextSecret, MaxLen: 256, Doc: "write-only; stored encrypted"},
				{Name: "DstFile", Type: String, Default: "/opt/swmgr/startup-config", Format: FormatAbsPath, MaxLen: 1024},
				{Name: "Interval", Type: Int, Default: int64(1440), Range: rng(0, 44640), Doc: "minutes; 0 archives only on change"},
				{Name: "Nonce", Type: String, MaxLen: 256, Doc: "salt of the archive encryption; only with Passphrase"},
				{Name: "Passphrase", Type: String, Secret: Sealed, Text: TextSecret, MaxLen: 256, Doc: "encrypts archives; only with Nonce; write-only"},
				{Name: "OnChange", Type: Bool},
				{Name: "RetryCount", Type: Int, Default: int64(3), Range: rng(0, 10)},
				{Name: "Timeout", Type: Int, Default: int64(30), Range: rng(1, 3600), Doc: "seconds"},
				{Name: "Timestamp", Type: String, Default: "disabled", Enum: timestamps, Aliases: []string{"TimeStamp"}},
			},
			Check: checkNoncePassphrase("ConfigArchiveServer", true),
			StateOnly: []*Field{
				{Name: "HostKey", Type: String, Doc: "SHA256 fingerprint of the server's pinned host key"},
				{Name: "LastAttempt", Type: String},
				{Name: "LastSuccess", Type: String},
				{Name: "LastError", Type: String},
				{Name: "LastFile", Type: String},
				{Name: "LastRevision", Type: Int, Doc: "the revision last archived"},
				{Name: "NextRun", Type: String, Doc: "empty: on the next change only"},
				{Name: "Uploads", Type: Int},
				{Name: "Failures", Type: Int},
			},
		},
		{
			Name: "NtpServer", Class: Config,
			Doc: "An NTP server the switch synchronises with.",
			CLI: &CLICommand{Words: []string{"ntp", "server"}, Prompt: []string{"ntp", "server"},
				Brief: []string{"IpAddr:Server", "Prefer", "Status", "Selected", "Stratum", "Reach", "OffsetUsec:Offset(us)", "DelayUsec:Delay(us)", "JitterUsec:Jitter(us)"},
				Shows: []CLIShow{
					{Words: []string{"ntp", "associations"}, Doc: "Every NTP server: stratum, reach, offset, selected"},
					{Words: []string{"ntp", "status"}, Only: "Selected", Detail: true, Doc: "The NTP source the clock follows"},
				}},
			Metrics: &Metrics{Subsystem: "ntp_source", Doc: "NTP server", Labels: []MetricLabel{{Field: "IpAddr", Label: "source"}}},
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Key: true, Format: FormatIPOrFQDN},
				{Name: "MinPoll", Type: Int, Default: int64(6), Range: rng(4, 17), Doc: "log2 seconds"},
				{Name: "MaxPoll", Type: Int, Default: int64(10), Range: rng(4, 17), Doc: "log2 seconds"},
				{Name: "SourceIntf", Type: String, Default: "ma1", Format: FormatIfName},
				{Name: "Prefer", Type: Bool},
			},
			Check: func(o Object) error {
				if o.Int("MinPoll") > o.Int("MaxPoll") {
					return apierr.BadRequest(apierr.CodeInvalidValue, "NtpServer", "MinPoll", "MinPoll %d is greater than MaxPoll %d", o.Int("MinPoll"), o.Int("MaxPoll"))
				}
				return nil
			},
			StateOnly: []*Field{
				{Name: "Status", Type: String},
				{Name: "Stratum", Type: Int, Doc: "the server's distance from a reference clock", Metric: &Metric{Name: "stratum"}},
				{Name: "Reach", Type: Int, Doc: "the reachability register: one bit per recent poll, 255 when the last eight answered", Metric: &Metric{Name: "reachability"}},
				{Name: "Selected", Type: Bool, Doc: "the source the clock follows", Metric: &Metric{Name: "selected"}},
				{Name: "OffsetUsec", Type: Int, Doc: "the last sample's offset, microseconds", Metric: &Metric{Name: "offset_seconds", Scale: 1e-6}},
				{Name: "DelayUsec", Type: Int, Doc: "round trip, microseconds", Metric: &Metric{Name: "delay_seconds", Scale: 1e-6}},
				{Name: "JitterUsec", Type: Int, Doc: "standard deviation of the samples, microseconds", Metric: &Metric{Name: "jitter_seconds", Scale: 1e-6}},
				{Name: "PollSec", Type: Int, Doc: "seconds between polls now: 2^MinPoll to 2^MaxPoll"},
				{Name: "RootDelayUsec", Type: Int, Doc: "the round trip to the reference clock through this server: its own root delay plus DelayUsec, microseconds"},
				{Name: "RootDispersionUsec", Type: Int, Doc: "the error bound to the reference clock through this server: its own root dispersion plus that of the samples, microseconds"},
			},
		},
		{
			Name: "ConfigLogState", Class: State, Source: SourceConfigLog,
			Doc: "One configuration operation: every create, update, delete and action, successful or not. The last 1000 are kept.",
			CLI: &CLICommand{Words: []string{"config", "log"}, Brief: []string{"SeqNum", "Time", "UserName:User", "UserAddr:From", "Operation", "API", "Result", "Data"}},
			Fields: []*Field{
				{Name: "SeqNum", Type: Int},
				{Name: "Time", Type: String},
				{Name: "API", Type: String},
				{Name: "Operation", Type: String},
				{Name: "Data", Type: String},
				{Name: "Result", Type: String},
				{Name: "UserAddr", Type: String},
				{Name: "UserName", Type: String},
			},
		},
		{
			Name: "UserPassword", Class: Action, Role: RoleAdmin, Self: "Name",
			Doc: "Sets a user's password. Admins may set anyone's; others only their own.",
			CLI: &CLICommand{Words: []string{"user"}, Value: "Name", Line: true},
			Fields: []*Field{
				{Name: "Name", Type: String, Required: true, Format: FormatUserName, Aliases: []string{"NAME"}},
				{Name: "Password", Type: String, Required: true, Secret: Transient, Text: TextSecret, MaxLen: 256, Doc: "at least 8 characters", CLI: "password"},
			},
			Check: func(o Object) error { return checkPassword("UserPassword", o.Str("Password")) },
		},
		{
			Name: "SaveConfig", Class: Action, Role: RoleOperator, DryRunnable: true, SavesConfig: true,
			Doc: "Saves the running configuration to a local file or an archive server.",
			CLI: &CLICommand{Words: []string{"save", "config"}, Prompt: []string{"save", "config"}, Line: true, Context: "toFile"},
			Fields: []*Field{
				{Name: "Nonce", Type: String, MaxLen: 256},
				{Name: "Passphrase", Type: String, Secret: Transient, Text: TextSecret, MaxLen: 256},
				{Name: "DstFileURI", Type: String, Format: FormatFileURI, MaxLen: 2048, Doc: "default: the data directory's startup-config"},
				{Name: "FileName", Type: String, MaxLen: 2048, Doc: "FlexSwitch 1.x: a file name in the data directory, or an absolute path (then the local file DstFileURI ///path names, under its rules); not with DstFileURI"},
				{Name: "Timeout", Type: Int, Default: int64(30), Range: rng(1, 3600)},
				{Name: "RetryCount", Type: Int, Default: int64(3), Range: rng(0, 10)},
				{Name: "Timestamp", Type: String, Default: "disabled", Enum: timestamps, Aliases: []string{"TimeStamp"}},
			},
			Check: checkNoncePassphrase("SaveConfig", false),
		},
		{
			Name: "ResetConfig", Class: Action, DryRunnable: true,
			Doc: "Returns the switch to factory defaults, in one transaction.",
			CLI: &CLICommand{Words: []string{"reset", "config", "default"}, Line: true},
		},
		{
			Name: "ResetConfigToFile", Class: Action, DryRunnable: true,
			Doc: "Replaces the configuration with one saved to a file, in one transaction.",
			CLI: &CLICommand{Words: []string{"reset", "config", "toFile"}, Prompt: []string{"reset", "config"}},
			Fields: []*Field{
				{Name: "SrcFileURI", Type: String, Format: FormatFileURI, MaxLen: 2048, Doc: "default: the data directory's startup-config"},
				{Name: "Nonce", Type: String, MaxLen: 256},
				{Name: "Passphrase", Type: String, Secret: Transient, Text: TextSecret, MaxLen: 256},
				{Name: "RetryCount", Type: Int, Default: int64(3), Range: rng(0, 10)},
				{Name: "Timeout", Type: Int, Default: int64(30), Range: rng(1, 3600)},
			},
			Check: checkNoncePassphrase("ResetConfigToFile", false),
		},
		configAction("ApplyConfig", "Merges the configuration document given into the running configuration, in one commit: each object given is created, or set as given (fields left out take their defaults, as in a saved file); objects not given are left as they are. Refused as a whole, changing nothing, if any object is bad.", false),
		configAction("ForceApplyConfig", "Replaces the running configuration with the configuration document given, in one commit (as ResetConfigToFile does with a file).", false),
		configAction("ApplyConfigByFile", "ApplyConfig with the document read from a file (the URIs, encryption and defaults of ResetConfigToFile).", true),
		configAction("ForceApplyConfigByFile", "ForceApplyConfig with the document read from a file: the same as ResetConfigToFile.", true),
		{
			Name: "Rollback", Class: Action, Role: RoleOperator, DryRunnable: true,
			Doc: "Makes a new commit that restores the configuration as it was after a revision, atomically.",
			Fields: []*Field{
				{Name: "Revision", Type: Int, Required: true, Range: rng(1, 1<<53), Doc: "the revision whose configuration to restore"},
			},
		},
		{
			Name: "ClearConfigLog", Class: Action,
			Doc: "Clears the config log; the clear becomes the first entry of the new log.",
		},
	}, bgp6Kinds(vrfRef)...)
}

// configAction declares one of FlexSwitch 1.x's configuration actions, which
// its config monitor runs: the document in the body's ConfigData (the
// "ConfigData" member of a saved file), or, byFile, in a file named as
// ResetConfigToFile names it.
func configAction(name, doc string, byFile bool) *Kind {
	k := &Kind{Name: name, Class: Action, DryRunnable: true, Doc: doc}
	if !byFile {
		k.Fields = []*Field{
			{Name: "ConfigData", Type: Document, Required: true, Secret: Transient, Doc: "kind name to a list of objects, as in a saved file's ConfigData; may hold secrets in clear, so it is never logged; at most the 1 MiB of a body (larger: the ByFile form)"},
		}
		return k
	}
	k.Fields = []*Field{
		{Name: "SrcFileURI", Type: String, Format: FormatFileURI, MaxLen: 2048, Doc: "default: the data directory's startup-config"},
		{Name: "Nonce", Type: String, MaxLen: 256},
		{Name: "Passphrase", Type: String, Secret: Transient, Text: TextSecret, MaxLen: 256},
		{Name: "RetryCount", Type: Int, Default: int64(3), Range: rng(0, 10)},
		{Name: "Timeout", Type: Int, Default: int64(30), Range: rng(1, 3600)},
	}
	k.Check = checkNoncePassphrase(name, false)
	return k
}

// checkPassword checks a new password ("" is left to RequireFields): at
// least 8 characters, no control characters (the OS tools read one
// "name:password" per line).
func checkPassword(kind, p string) error {
	if p == "" {
		return nil
	}
	if len(p) < 8 {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "Password", "Password: must be at least 8 characters")
	}
	if strings.ContainsFunc(p, IsControl) {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "Password", "Password: must not contain control, format or unassigned characters (newlines, tabs, U+0085, U+200B, ...: Unicode category C)")
	}
	return nil
}

// checkNoncePassphrase: Nonce and Passphrase go together. stored: the kind
// keeps its Passphrase, which a PATCH sending "" does not clear, so a
// Nonce cleared beside one (or a Passphrase given alone) gets told the way
// to stop encrypting.
func checkNoncePassphrase(kind string, stored bool) func(Object) error {
	return func(o Object) error {
		nonce, pass := o.Str("Nonce") != "", o.Str("Passphrase") != ""
		switch {
		case nonce == pass:
			return nil
		case stored && pass:
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "Passphrase", "Nonce and Passphrase must be given together (or neither); a PATCH keeps a stored Passphrase even when it sends \"\", so to stop encrypting, delete and re-create the %s without them", kind)
		}
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "Passphrase", "Nonce and Passphrase must be given together (or neither)")
	}
}
