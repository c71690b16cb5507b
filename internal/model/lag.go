package model

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// LAGPrefix starts the name of every link aggregation group: PortChannel<N>.
const LAGPrefix = "PortChannel"

// maxLAG is the highest N of PortChannel<N>: the name stays a Linux device
// name (at most 15 characters) and the count is more than a leaf has ports.
const maxLAG = 9999

// lagKey is the store key of the LAG an interface name names (the name
// itself), as Interface.Key says.
func lagKey(name string) (string, bool, string) {
	digits := strings.TrimPrefix(name, LAGPrefix)
	n, err := strconv.Atoi(digits)
	switch {
	case !strings.HasPrefix(name, LAGPrefix) || err != nil || strconv.Itoa(n) != digits:
		return "", false, ""
	case n < 1 || n > maxLAG:
		return "", false, "a port channel is PortChannel<N> with N 1.." + strconv.Itoa(maxLAG)
	}
	return name, true, ""
}

// FormatLAGName is the name of a link aggregation group.
var FormatLAGName = &Format{
	Name: "lag-name", Doc: "PortChannel<N>, N 1..9999", Hint: "<PortChannelN>", Sample: "PortChannel1",
	Check: func(s string) string {
		if _, ok, _ := lagKey(s); !ok {
			return "a port channel like PortChannel1 (N 1..9999)"
		}
		return ""
	},
}

// The values of LaPortChannel's integer fields, FlexSwitch's numbering.
const (
	LagTypeLACP   = 0
	LagTypeStatic = 1
	IntervalFast  = 0
	IntervalSlow  = 1
	LacpActive    = 0
	LacpPassive   = 1
	LagHashL2     = 0
	LagHashL23    = 1
	LagHashL34    = 2
)

// systemIdMacRE is a MAC in FlexSwitch's spelling (00-11-22-33-44-55) or
// with colons.
var systemIdMacRE = regexp.MustCompile(`^[0-9a-fA-F]{2}([-:][0-9a-fA-F]{2}){5}$`)

// SystemIdMAC returns LaPortChannel's SystemIdMac with colons, "" for the
// all-zero default (the LAG's own MAC is the system id).
func SystemIdMAC(o Object) string {
	m := strings.ToLower(strings.ReplaceAll(o.Str("SystemIdMac"), "-", ":"))
	if m == "00:00:00:00:00:00" {
		return ""
	}
	return m
}

// laPortChannel is FlexSwitch's LaPortChannel: a link aggregation group of
// ports (IntfRefList), LACP (802.3ad) or static, named PortChannel<N>. It
// is an interface kind: an address, a VLAN membership or a mirror session
// may name it as they name a port.
func laPortChannel() *Kind {
	return &Kind{
		Name: "LaPortChannel", Class: Config,
		Interface: &Interface{Prefix: LAGPrefix, Noun: "a port channel", Like: "a port channel like PortChannel1", Form: "PortChannel<N>", Key: lagKey, Member: true},
		Doc: "A link aggregation group (LAG) of ports, PortChannel<N>: LACP (802.3ad, LagType 0) or static (LagType 1). " +
			"A member port carries no address and is in no VLAN: the LAG does; a port is in at most one LAG, and a port broken out into sub-ports is in none (its sub-ports may be).",
		CLI: &CLICommand{Words: []string{"interface", "port_channel"}, Prompt: []string{"if", "po"}},
		Fields: []*Field{
			{Name: "IntfRef", Type: String, Key: true, Format: FormatLAGName, Doc: "the LAG's name, PortChannel<N> with N 1..9999"},
			{Name: "IntfRefList", Type: StringList, Required: true, Format: FormatPortName, Ref: "Port", Doc: "the member ports"},
			{Name: "LagType", Type: Int, Default: int64(LagTypeLACP), Range: rng(0, 1), Names: []string{"LACP", "STATIC"}, CreateOnly: true, Doc: "0 LACP (802.3ad), 1 STATIC (no LACP; the peer must agree by configuration); to change it, delete the LAG and create it again"},
			{Name: "MinLinks", Type: Int, Default: int64(1), Range: rng(1, 64), Doc: "members that must be up (collecting and distributing) for the LAG to be up"},
			{Name: "Interval", Type: Int, Default: int64(IntervalSlow), Range: rng(0, 1), Names: []string{"FAST", "SLOW"}, Doc: "LACP rate: 0 FAST (a frame every second), 1 SLOW (every 30 s)"},
			{Name: "LacpMode", Type: Int, Default: int64(LacpActive), Range: rng(0, 1), Names: []string{"ACTIVE", "PASSIVE"}, Doc: "0 ACTIVE (sends LACP frames), 1 PASSIVE (answers them); on Linux PASSIVE needs a kernel of 5.15 or later (lacp_active), an older one refuses it"},
			{Name: "SystemIdMac", Type: String, Default: "00-00-00-00-00-00", MaxLen: 17, Doc: "the MAC of the LACP system id; all zero: the LAG's own MAC"},
			{Name: "SystemPriority", Type: Int, Default: int64(32768), Range: rng(1, 65535), Doc: "the LACP system priority (lower wins)"},
			{Name: "LagHash", Type: Int, Default: int64(LagHashL2), Range: rng(0, 2), Names: []string{"LAYER2", "LAYER2_3", "LAYER3_4"}, Doc: "how frames are spread over the members: 0 LAYER2 (MACs), 1 LAYER2_3 (MACs and IPs), 2 LAYER3_4 (IPs and ports)"},
			{Name: "AdminState", Type: String, Default: "UP", Enum: adminStates},
		},
		Check: func(o Object) error {
			if !systemIdMacRE.MatchString(o.Str("SystemIdMac")) {
				return apierr.BadRequest(apierr.CodeInvalidValue, "LaPortChannel", "SystemIdMac", "SystemIdMac: %q is not a MAC address like 00-11-22-33-44-55", o.Str("SystemIdMac"))
			}
			members := o.List("IntfRefList")
			if len(members) == 0 {
				return apierr.BadRequest(apierr.CodeInvalidValue, "LaPortChannel", "IntfRefList", "IntfRefList: give at least one member port")
			}
			for i, p := range members {
				if slices.Contains(members[:i], p) {
					return apierr.BadRequest(apierr.CodeInvalidValue, "LaPortChannel", "IntfRefList", "IntfRefList: %s is listed twice", p)
				}
			}
			if o.Int("MinLinks") > int64(len(members)) {
				return apierr.BadRequest(apierr.CodeInvalidValue, "LaPortChannel", "MinLinks", "MinLinks %d: the LAG has %d member ports", o.Int("MinLinks"), len(members))
			}
			return nil
		},
		Constraints: []Constraint{oneLAGPerPort, lagMembersAreBare},
		StateDoc:    "The LAG's interface: OperState is UP while AdminState is UP and at least MinLinks members are collecting and distributing (IntfRefListUpInBundle).",
		Metrics:     &Metrics{Subsystem: "lag", Doc: "Link aggregation group", Labels: []MetricLabel{{Field: "IntfRef", Label: "lag"}}},
		StateOnly: []*Field{
			{Name: "IfIndex", Type: Int},
			{Name: "OperState", Type: String, Enum: adminStates, Metric: &Metric{Name: "up", Is: "UP"}},
			{Name: "IntfRefListUpInBundle", Type: StringList, Doc: "the members collecting and distributing", Metric: &Metric{Name: "members_up", Len: true}},
		},
	}
}

// macTableEntries is FlexSwitch's MacTableEntryState: the switch's
// forwarding database, as the dataplane reports it.
func macTableEntries() *Kind {
	return &Kind{
		Name: "MacTableEntryState", Class: State, Source: SourceBackend,
		Doc: "A MAC address the switch forwards to a port or a LAG in a VLAN: learned from traffic or static. The Linux backend lists its bridge's forwarding database (not the switch's own addresses); the simulated switch learns none.",
		CLI: &CLICommand{Words: []string{"mac", "address-table"},
			Brief: []string{"VlanId:VLAN", "MacAddr:MAC", "Type", "Port", "Age"}},
		Fields: []*Field{
			{Name: "MacAddr", Type: String, Key: true, Doc: "the MAC address"},
			{Name: "VlanId", Type: Int, Key: true, Doc: "its VLAN; 0 where the bridge does not filter VLANs"},
			{Name: "Port", Type: String, Doc: "the port or the LAG (PortChannel<N>) it is reached through; a netdev's name for another device"},
			{Name: "IfIndex", Type: Int},
			{Name: "Type", Type: String, Enum: []string{"learned", "static"}},
			{Name: "Age", Type: Int, Doc: "seconds since the entry was last updated (a learned address: last seen)"},
		},
	}
}

// clearMacTable flushes learned entries of the MAC table. FlexSwitch has
// no such action (its nearest are ArpDeleteByIfName and the like); the
// name is the one EOS and NX-OS users know (`clear mac address-table
// dynamic`).
func clearMacTable() *Kind {
	return &Kind{
		Name: "ClearMacTable", Class: Action, Role: RoleOperator, DryRunnable: true, NotLogged: true,
		Doc: "Flushes the learned entries of the MAC table (MacTableEntryState): of one VLAN, of one port or LAG, of both, or all; static entries stay. " +
			"It changes no configuration and is not written to the config log. The answer lists the entries flushed (a dry run: those it would flush).",
		CLI: &CLICommand{Words: []string{"clear", "mac", "address-table"}, Line: true},
		Fields: []*Field{
			{Name: "VlanId", Type: Int, Default: int64(0), Range: rng(0, 4094), Doc: "only this VLAN's entries; 0: every VLAN"},
			{Name: "IntfRef", Type: String, Format: FormatSwitchPort, Doc: "only the entries reached through this port or LAG; empty: every port"},
		},
		Answer: []*Field{
			{Name: "Cleared", Type: Int, Doc: "how many entries were flushed (a dry run: would be)"},
			{Name: "Entries", Type: RecordList, Sub: macTableEntries().Fields, Doc: "those entries, as MacTableEntryState lists them"},
		},
	}
}

// laPortChannelMembers is FlexSwitch's LaPortChannelIntfRefListState: one
// member port of a LAG and its LACP state, as the dataplane reports it.
func laPortChannelMembers() *Kind {
	return &Kind{
		Name: "LaPortChannelIntfRefListState", Class: State, Source: SourceBackend, FeedPolled: true,
		Doc:     "A LAG's member port and its LACP state (802.1AX actor and partner), as the dataplane reports it. Listed for every member of every LAG.",
		Metrics: &Metrics{Subsystem: "lag_member", Doc: "LAG member port", Labels: []MetricLabel{{Field: "LagIntfRef", Label: "lag"}, {Field: "IntfRef", Label: "port"}}},
		CLI: &CLICommand{Words: []string{"port_channel", "members"},
			Brief: []string{"IntfRef:Port", "LagIntfRef:LAG", "OperState", "Collecting", "Distributing", "PartnerId:Partner"}},
		Fields: []*Field{
			{Name: "IntfRef", Type: String, Doc: "the member port"},
			{Name: "LagIntfRef", Type: String, Doc: "its LAG"},
			{Name: "OperState", Type: String, Doc: "UP IN BUNDLE (collecting and distributing) or DOWN", Metric: &Metric{Name: "up", Is: "UP IN BUNDLE"}},
			{Name: "IfIndex", Type: Int},
			{Name: "Activity", Type: Int, Names: []string{"ACTIVE", "PASSIVE"}, Doc: "the actor's LACP activity: 0 ACTIVE, 1 PASSIVE"},
			{Name: "Timeout", Type: Int, Names: []string{"LONG", "SHORT"}, Doc: "the actor's LACP timeout: 0 LONG, 1 SHORT"},
			{Name: "Synchronization", Type: Int, Names: []string{"IN_SYNC", "OUT_SYNC"}, Doc: "0 IN_SYNC, 1 OUT_SYNC"},
			{Name: "Aggregatable", Type: Bool},
			{Name: "Collecting", Type: Bool},
			{Name: "Distributing", Type: Bool},
			{Name: "Defaulted", Type: Bool, Doc: "no partner information: the partner's are the defaults"},
			{Name: "SystemId", Type: String, Doc: "the actor's system MAC"},
			{Name: "OperKey", Type: Int, Doc: "the actor's operational key"},
			{Name: "PartnerId", Type: String, Doc: "the partner's system MAC"},
			{Name: "PartnerKey", Type: Int, Doc: "the partner's operational key"},
			{Name: "Selected", Type: Bool, Doc: "the member is in the LAG's active aggregator (selected to carry its traffic once collecting and distributing)"},
			{Name: "PartnerSystemPriority", Type: Int, Doc: "the partner's LACP system priority"},
			{Name: "PartnerPortNum", Type: Int, Doc: "the partner's port number"},
			{Name: "PartnerPortPriority", Type: Int, Doc: "the partner's port priority"},
			{Name: "PartnerActivity", Type: Int, Names: []string{"ACTIVE", "PASSIVE"}, Doc: "the partner's LACP activity: 0 ACTIVE, 1 PASSIVE"},
			{Name: "PartnerTimeout", Type: Int, Names: []string{"LONG", "SHORT"}, Doc: "the partner's LACP timeout: 0 LONG, 1 SHORT"},
			{Name: "PartnerSynchronization", Type: Int, Names: []string{"IN_SYNC", "OUT_SYNC"}, Doc: "the partner's: 0 IN_SYNC, 1 OUT_SYNC"},
			{Name: "PartnerAggregatable", Type: Bool},
			{Name: "PartnerCollecting", Type: Bool},
			{Name: "PartnerDistributing", Type: Bool},
			{Name: "PartnerDefaulted", Type: Bool},
		},
	}
}

// lagMembership maps each port to the LAG that lists it, in cfg.
func lagMembership(cfg View) (map[string]string, error) {
	owner := map[string]string{}
	err := cfg.Each("LaPortChannel", func(key string, o Object) bool {
		for _, p := range o.List("IntfRefList") {
			if _, taken := owner[p]; !taken {
				owner[p] = key
			}
		}
		return true
	})
	return owner, err
}

// oneLAGPerPort: a port is a member of at most one LAG.
var oneLAGPerPort = Constraint{
	Name:  "a port is a member of at most one LAG",
	Kinds: []string{"LaPortChannel"},
	Check: func(cfg View, changes []Change) error {
		owner := map[string]string{}
		var clash error
		err := cfg.Each("LaPortChannel", func(key string, o Object) bool {
			for _, p := range o.List("IntfRefList") {
				if other, taken := owner[p]; taken {
					a, b := min(other, key), max(other, key)
					clash = apierr.Conflict(apierr.CodeConflict, "LaPortChannel", "IntfRefList: port %s would be a member of %s and of %s; a port is in at most one LAG", p, a, b)
					return false
				}
				owner[p] = key
			}
			return true
		})
		if err != nil {
			return err
		}
		return clash
	},
}

// lagMembersAreBare: a LAG's member port carries no address and is in no
// VLAN or mirror session as itself: its frames belong to the LAG, which
// carries them instead.
var lagMembersAreBare = Constraint{
	Name:  "a LAG's member port has no address and is in no VLAN",
	Kinds: []string{"LaPortChannel", "IPv4Intf", "Vlan"},
	Check: func(cfg View, changes []Change) error {
		owner, err := lagMembership(cfg)
		if err != nil || len(owner) == 0 {
			return err
		}
		var clash error
		err = cfg.Each("IPv4Intf", func(_ string, in Object) bool {
			if lag, ok := owner[in.Str("IntfRef")]; ok {
				clash = apierr.Conflict(apierr.CodeConflict, "LaPortChannel", "port %s is a member of %s and carries the address %s (IPv4Intf): a LAG's member port has no address; give it to %s instead", in.Str("IntfRef"), lag, in.Str("IpAddr"), lag)
				return false
			}
			return true
		})
		if err != nil || clash != nil {
			return cmpErr(err, clash)
		}
		err = cfg.Each("Vlan", func(_ string, v Object) bool {
			for _, p := range append(slices.Clone(v.List("IntfList")), v.List("UntagIntfList")...) {
				if lag, ok := owner[p]; ok {
					clash = apierr.Conflict(apierr.CodeConflict, "LaPortChannel", "port %s is a member of %s and of VLAN %d: a LAG's member port is in no VLAN; make %s the VLAN's member instead", p, lag, v.Int("VlanId"), lag)
					return false
				}
			}
			return true
		})
		return cmpErr(err, clash)
	},
}

// cmpErr is the first of an iteration's error and the clash it found.
func cmpErr(err, clash error) error {
	if err != nil {
		return err
	}
	return clash
}
