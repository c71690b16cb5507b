package model

import "slices"

// OpenConfigLeaf is one OpenConfig leaf that means the same as a field of
// a kind (gNMI's openconfig origin).
//
// In Path, a key "@Field" takes the value of a field of the object;
// "@Field:conv" that value converted ("@IpAddr:addr": the address part of
// an address/prefix); "@F,G:conv" several fields joined by the conversion
// ("@DestinationNw,NetworkMask:prefix": a CIDR prefix); "@List.Sub" a
// sub-field of the records of a record list, one list entry per record
// (a route's next hops); a bare "@" the member of a Member mapping. Any
// other key value is fixed.
//
// What a write means follows from the keys. A key bound to the kind's key
// fields names the object. A key bound to another field in the list
// entry's own element (an address's ip) names the object only while the
// field holds that value: a write to another value is refused (the object
// holds one), a delete of the entry deletes the object. A key bound to
// another field in an element above the entry's (the network instance an
// interface is in) is the container the object is a member of: a write
// sets the field, a delete of the entry resets it to its default. A key
// bound to a record sub-field names the record: a write adds or changes
// it, a delete of the entry removes it.
type OpenConfigLeaf struct {
	Path  string
	Kind  string
	Field string // the swmgr field; "F,G": several, joined by Conv; "List.Sub": the record's sub-field
	State bool   // read from the object's state form; not writable
	Conv  string // how the value converts: "" as is, or a conversion the gNMI front end names (docs/gnmi.md)
	// Member, when set, makes the leaf one of another list's entries
	// (a port's switched-vlan), many objects to one leaf: Member are
	// list fields of Kind whose elements are the entries (ports) Path's
	// "@" key names, and the leaf gathers Field of every object whose
	// lists hold the entry (Conv makes the leaf of them, one set per
	// list). A write moves the entry into and out of the objects' lists.
	Member []string
}

const (
	ocIfPath   = "/interfaces/interface[name=@IntfRef]"
	ocIP4Path  = "/interfaces/interface[name=@IntfRef]/subinterfaces/subinterface[index=0]/ipv4/addresses/address[ip=@IpAddr:addr]"
	ocNIPath   = "/network-instances/network-instance[name=@Vrf]"
	ocBGPPath  = "/network-instances/network-instance[name=@Vrf]/protocols/protocol[identifier=BGP][name=BGP]/bgp"
	ocNTPPath  = "/system/ntp/servers/server[address=@IpAddr]"
	ocUserPath = "/system/aaa/authentication/users/user[username=@Name]"
	ocVlanPath = "/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=@VlanId]"
	// A port's VLAN membership: the Vlans whose IntfList (tagged) or
	// UntagIntfList (untagged) hold it.
	ocSwitchedPath = "/interfaces/interface[name=@]/ethernet/switched-vlan"
	// A port's LAG: the LaPortChannel whose IntfRefList holds it.
	ocAggregatePath = "/interfaces/interface[name=@]/ethernet"
	// The interfaces of a network instance: the IPv4Intfs of the VRF.
	ocNIIfPath = "/network-instances/network-instance[name=@Vrf]/interfaces/interface[id=@IntfRef]"
	// Static routes are the default instance's: IPv4Route has no VRF.
	ocStaticPath = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=STATIC][name=STATIC]/static-routes/static[prefix=@DestinationNw,NetworkMask:prefix]"
	ocHopPath    = ocStaticPath + "/next-hops/next-hop[index=@NextHop.NextHopIp]"
	// The routing table (state/IPv4Routes): the default instance's.
	ocAFTPath     = "/network-instances/network-instance[name=default]/afts/ipv4-unicast/ipv4-entry[prefix=@DestinationNw]"
	ocLLDPIfPath  = "/lldp/interfaces/interface[name=@IntfRef]"
	ocLLDPNbrPath = ocLLDPIfPath + "/neighbors/neighbor[id=@PeerMac:nonempty]"
	ocCPUPath     = "/system/cpus/cpu[index=@Index:cpuindex]"
	ocProcPath    = "/system/processes/process[pid=@Pid]"
	ocCompPath    = "/components/component[name=@Name]"
	// A LAG is an interface of its own (openconfig-if-aggregate) and a
	// LACP interface whose members are its ports (openconfig-lacp).
	ocLACPPath   = "/lacp/interfaces/interface[name=@IntfRef]"
	ocLACPMember = "/lacp/interfaces/interface[name=@LagIntfRef]/members/member[interface=@IntfRef]"
	// The forwarding database (MacTableEntryState): the default instance's.
	ocFDBPath = "/network-instances/network-instance[name=default]/fdb/mac-table/entries/entry[mac-address=@MacAddr][vlan=@VlanId]"
	// An ACL's rules and their counters: the set is named <AclName>:<Direction>
	// (FlexSwitch keys an ACL by both; ':' is in no ACL's name), its type
	// from AclType, an entry's sequence-id the rule's place in RuleNameList.
	ocACLEntryPath = "/acl/acl-sets/acl-set[name=@AclName,Direction:aclset][type=@AclType:acltype]/acl-entries/acl-entry[sequence-id=@Sequence]"
)

// ocState is a read-only leaf of a state kind's field.
func ocState(path, kind, field, conv string) OpenConfigLeaf {
	return OpenConfigLeaf{Path: path, Kind: kind, Field: field, State: true, Conv: conv}
}

// OpenConfigLeaves is the OpenConfig mapping, openconfig/public release
// v5.9.0; docs/gnmi.md shows it.
func OpenConfigLeaves() []OpenConfigLeaf {
	// The Vlan lists a port's switched-vlan gathers: tagged, untagged.
	vlanMembers := []string{"IntfList", "UntagIntfList"}
	lagMembers := []string{"IntfRefList"}
	return append([]OpenConfigLeaf{
		{ocIfPath + "/config/name", "Port", "IntfRef", false, "", nil},
		{ocIfPath + "/config/description", "Port", "Description", false, "", nil},
		{ocIfPath + "/config/enabled", "Port", "AdminState", false, "enabled", nil},
		{ocIfPath + "/config/mtu", "Port", "Mtu", false, "", nil},
		{ocIfPath + "/ethernet/config/port-speed", "Port", "Speed", false, "speed", nil},
		{ocIfPath + "/ethernet/config/duplex-mode", "Port", "Duplex", false, "duplex", nil},
		{ocIfPath + "/ethernet/config/auto-negotiate", "Port", "Autoneg", false, "onoff", nil},
		{ocIfPath + "/state/name", "Port", "IntfRef", true, "", nil},
		{ocIfPath + "/state/description", "Port", "Description", true, "", nil},
		{ocIfPath + "/state/enabled", "Port", "AdminState", true, "enabled", nil},
		{ocIfPath + "/state/mtu", "Port", "Mtu", true, "", nil},
		{ocIfPath + "/state/ifindex", "Port", "IfIndex", true, "", nil},
		{ocIfPath + "/state/admin-status", "Port", "AdminState", true, "", nil},
		{ocIfPath + "/state/oper-status", "Port", "OperState", true, "", nil},
		{ocIfPath + "/state/counters/in-octets", "Port", "IfInOctets", true, "counter", nil},
		{ocIfPath + "/state/counters/in-unicast-pkts", "Port", "IfInUcastPkts", true, "counter", nil},
		{ocIfPath + "/state/counters/in-discards", "Port", "IfInDiscards", true, "counter", nil},
		{ocIfPath + "/state/counters/in-errors", "Port", "IfInErrors", true, "counter", nil},
		{ocIfPath + "/state/counters/out-octets", "Port", "IfOutOctets", true, "counter", nil},
		{ocIfPath + "/state/counters/out-unicast-pkts", "Port", "IfOutUcastPkts", true, "counter", nil},
		{ocIfPath + "/state/counters/out-discards", "Port", "IfOutDiscards", true, "counter", nil},
		{ocIfPath + "/state/counters/out-errors", "Port", "IfOutErrors", true, "counter", nil},
		{ocIfPath + "/ethernet/state/port-speed", "Port", "Speed", true, "speed", nil},
		{ocIfPath + "/ethernet/state/mac-address", "Port", "MacAddr", true, "", nil},
		{ocIP4Path + "/config/ip", "IPv4Intf", "IpAddr", false, "addr", nil},
		{ocIP4Path + "/config/prefix-length", "IPv4Intf", "IpAddr", false, "prefixlen", nil},
		{ocIP4Path + "/state/ip", "IPv4Intf", "IpAddr", true, "addr", nil},
		{ocIP4Path + "/state/prefix-length", "IPv4Intf", "IpAddr", true, "prefixlen", nil},
		{ocNIPath + "/config/name", "Vrf", "Vrf", false, "", nil},
		{ocNIPath + "/config/description", "Vrf", "Name", false, "", nil},
		{ocNIPath + "/state/name", "Vrf", "Vrf", true, "", nil},
		{ocVlanPath + "/config/vlan-id", "Vlan", "VlanId", false, "", nil},
		{ocVlanPath + "/config/name", "Vlan", "Description", false, "", nil},
		{ocVlanPath + "/config/status", "Vlan", "AdminState", false, "active", nil},
		{ocVlanPath + "/state/vlan-id", "Vlan", "VlanId", true, "", nil},
		{ocVlanPath + "/state/status", "Vlan", "OperState", true, "active", nil},
		{ocSwitchedPath + "/config/interface-mode", "Vlan", "VlanId", false, "vlanmode", vlanMembers},
		{ocSwitchedPath + "/config/access-vlan", "Vlan", "VlanId", false, "accessvlan", vlanMembers},
		{ocSwitchedPath + "/config/native-vlan", "Vlan", "VlanId", false, "nativevlan", vlanMembers},
		{ocSwitchedPath + "/config/trunk-vlans", "Vlan", "VlanId", false, "trunkvlans", vlanMembers},
		{ocSwitchedPath + "/state/interface-mode", "Vlan", "VlanId", true, "vlanmode", vlanMembers},
		{ocSwitchedPath + "/state/access-vlan", "Vlan", "VlanId", true, "accessvlan", vlanMembers},
		{ocSwitchedPath + "/state/native-vlan", "Vlan", "VlanId", true, "nativevlan", vlanMembers},
		{ocSwitchedPath + "/state/trunk-vlans", "Vlan", "VlanId", true, "trunkvlans", vlanMembers},
		{ocNIIfPath + "/config/id", "IPv4Intf", "IntfRef", false, "", nil},
		{ocNIIfPath + "/config/interface", "IPv4Intf", "IntfRef", false, "", nil},
		{ocNIIfPath + "/config/subinterface", "IPv4Intf", "IntfRef", false, "index0", nil},
		{ocNIIfPath + "/state/id", "IPv4Intf", "IntfRef", true, "", nil},
		{ocNIIfPath + "/state/interface", "IPv4Intf", "IntfRef", true, "", nil},
		{ocNIIfPath + "/state/subinterface", "IPv4Intf", "IntfRef", true, "index0", nil},
		{ocStaticPath + "/config/prefix", "IPv4Route", "DestinationNw,NetworkMask", false, "prefix", nil},
		{ocStaticPath + "/state/prefix", "IPv4Route", "DestinationNw,NetworkMask", true, "prefix", nil},
		{ocHopPath + "/config/index", "IPv4Route", "NextHop.NextHopIp", false, "", nil},
		{ocHopPath + "/config/next-hop", "IPv4Route", "NextHop.NextHopIp", false, "", nil},
		{ocHopPath + "/config/metric", "IPv4Route", "Cost", false, "", nil},
		{ocHopPath + "/interface-ref/config/interface", "IPv4Route", "NextHop.NextHopIntRef", false, "nonempty", nil},
		{ocHopPath + "/state/index", "IPv4Route", "NextHop.NextHopIp", true, "", nil},
		{ocHopPath + "/state/next-hop", "IPv4Route", "NextHop.NextHopIp", true, "", nil},
		{ocHopPath + "/state/metric", "IPv4Route", "Cost", true, "", nil},
		{ocHopPath + "/interface-ref/state/interface", "IPv4Route", "NextHop.NextHopIntRef", true, "nonempty", nil},
		{ocBGPPath + "/global/config/as", "BGPGlobal", "ASNum", false, "asn", nil},
		{ocBGPPath + "/global/config/router-id", "BGPGlobal", "RouterId", false, "", nil},
		{ocBGPPath + "/global/state/as", "BGPGlobal", "ASNum", true, "asn", nil},
		{ocBGPPath + "/global/state/router-id", "BGPGlobal", "RouterId", true, "", nil},
		{"/system/config/hostname", "SystemParam", "Hostname", false, "", nil},
		{"/system/state/hostname", "SystemParam", "Hostname", true, "", nil},
		{ocNTPPath + "/config/address", "NtpServer", "IpAddr", false, "", nil},
		{ocNTPPath + "/config/prefer", "NtpServer", "Prefer", false, "", nil},
		{ocNTPPath + "/state/address", "NtpServer", "IpAddr", true, "", nil},
		{ocNTPPath + "/state/prefer", "NtpServer", "Prefer", true, "", nil},
		{ocNTPPath + "/state/stratum", "NtpServer", "Stratum", true, "", nil},
		// What chronyd says of a server, in OpenConfig's units: unsigned
		// milliseconds (the offset's magnitude), seconds.
		ocState(ocNTPPath+"/state/offset", "NtpServer", "OffsetUsec", "absusecms64"),
		ocState(ocNTPPath+"/state/root-delay", "NtpServer", "RootDelayUsec", "usecms"),
		ocState(ocNTPPath+"/state/root-dispersion", "NtpServer", "RootDispersionUsec", "usecms64"),
		ocState(ocNTPPath+"/state/poll-interval", "NtpServer", "PollSec", ""),
		ocState("/system/ntp/state/enabled", "HostNtpState", "Enabled", ""),
		{ocUserPath + "/config/username", "User", "Name", false, "", nil},
		{ocUserPath + "/config/password", "User", "Password", false, "", nil},
		{ocUserPath + "/config/role", "User", "Group", false, "role", nil},
		{ocUserPath + "/state/username", "User", "Name", true, "", nil},
		{ocUserPath + "/state/role", "User", "Group", true, "role", nil},
		{"/lldp/config/enabled", "LLDPGlobal", "Enable", false, "", nil},
		{"/lldp/config/hello-timer", "LLDPGlobal", "TranmitInterval", false, "", nil},
		{"/lldp/state/enabled", "LLDPGlobal", "Enable", true, "", nil},
		{"/lldp/state/hello-timer", "LLDPGlobal", "TranmitInterval", true, "", nil},
		ocState(ocLLDPIfPath+"/state/name", "LLDPIntfState", "IntfRef", ""),
		ocState(ocLLDPIfPath+"/state/enabled", "LLDPIntfState", "Enable", ""),
		ocState(ocLLDPIfPath+"/state/counters/frame-in", "LLDPIntfState", "ReceivedFrames", "counter"),
		ocState(ocLLDPIfPath+"/state/counters/frame-out", "LLDPIntfState", "SendFrames", "counter"),
		ocState(ocLLDPNbrPath+"/state/id", "LLDPIntfState", "PeerMac", ""),
		ocState(ocLLDPNbrPath+"/state/chassis-id", "LLDPIntfState", "PeerMac", ""),
		ocState(ocLLDPNbrPath+"/state/port-id", "LLDPIntfState", "PeerPort", "nonempty"),
		ocState(ocLLDPNbrPath+"/state/port-description", "LLDPIntfState", "PortDescription", "nonempty"),
		ocState(ocLLDPNbrPath+"/state/system-name", "LLDPIntfState", "PeerHostName", "nonempty"),
		ocState(ocLLDPNbrPath+"/state/system-description", "LLDPIntfState", "SystemDescription", "nonempty"),
		ocState(ocAFTPath+"/state/prefix", "IPv4RouteState", "DestinationNw", ""),
		ocState(ocAFTPath+"/state/origin-protocol", "IPv4RouteState", "Protocol", "originprotocol"),
		ocState("/system/state/boot-time", "HostSystemState", "BootTime", "counter"),
		ocState("/system/state/current-datetime", "HostSystemState", "CurrentDatetime", ""),
		ocState("/system/state/up-time", "HostSystemState", "UpTime", "counter"),
		ocState("/system/state/software-version", "HostSystemState", "SoftwareVersion", ""),
		ocState(ocCPUPath+"/state/index", "HostCpuState", "Index", "cpuindex"),
		ocState(ocCPUPath+"/state/total/instant", "HostCpuState", "Total", ""),
		ocState(ocCPUPath+"/state/user/instant", "HostCpuState", "User", ""),
		ocState(ocCPUPath+"/state/kernel/instant", "HostCpuState", "Kernel", ""),
		ocState(ocCPUPath+"/state/nice/instant", "HostCpuState", "Nice", ""),
		ocState(ocCPUPath+"/state/idle/instant", "HostCpuState", "Idle", ""),
		ocState(ocCPUPath+"/state/wait/instant", "HostCpuState", "Wait", ""),
		ocState(ocCPUPath+"/state/hardware-interrupt/instant", "HostCpuState", "HardwareInterrupt", ""),
		ocState(ocCPUPath+"/state/software-interrupt/instant", "HostCpuState", "SoftwareInterrupt", ""),
		ocState("/system/memory/state/physical", "HostMemoryState", "Physical", "counter"),
		ocState("/system/memory/state/used", "HostMemoryState", "Used", "counter"),
		ocState("/system/memory/state/free", "HostMemoryState", "Free", "counter"),
		ocState(ocProcPath+"/state/pid", "HostProcessState", "Pid", "counter"),
		ocState(ocProcPath+"/state/name", "HostProcessState", "Name", ""),
		ocState(ocProcPath+"/state/args", "HostProcessState", "Args", ""),
		ocState(ocProcPath+"/state/start-time", "HostProcessState", "StartTime", "counter"),
		ocState(ocProcPath+"/state/cpu-usage-user", "HostProcessState", "CpuUsageUser", "counter"),
		ocState(ocProcPath+"/state/cpu-usage-system", "HostProcessState", "CpuUsageSystem", "counter"),
		ocState(ocProcPath+"/state/cpu-utilization", "HostProcessState", "CpuUtilization", ""),
		ocState(ocProcPath+"/state/memory-usage", "HostProcessState", "MemoryUsage", "counter"),
		ocState(ocProcPath+"/state/memory-utilization", "HostProcessState", "MemoryUtilization", ""),
		{ocIfPath + "/config/name", "LaPortChannel", "IntfRef", false, "", nil},
		{ocIfPath + "/config/enabled", "LaPortChannel", "AdminState", false, "enabled", nil},
		{ocIfPath + "/aggregation/config/lag-type", "LaPortChannel", "LagType", false, "lagtype", nil},
		{ocIfPath + "/aggregation/config/min-links", "LaPortChannel", "MinLinks", false, "", nil},
		{ocIfPath + "/state/name", "LaPortChannel", "IntfRef", true, "", nil},
		{ocIfPath + "/state/enabled", "LaPortChannel", "AdminState", true, "enabled", nil},
		{ocIfPath + "/state/admin-status", "LaPortChannel", "AdminState", true, "", nil},
		{ocIfPath + "/state/oper-status", "LaPortChannel", "OperState", true, "", nil},
		{ocIfPath + "/state/ifindex", "LaPortChannel", "IfIndex", true, "", nil},
		{ocIfPath + "/aggregation/state/lag-type", "LaPortChannel", "LagType", true, "lagtype", nil},
		{ocIfPath + "/aggregation/state/min-links", "LaPortChannel", "MinLinks", true, "", nil},
		{ocIfPath + "/aggregation/state/member", "LaPortChannel", "IntfRefList", true, "", nil},
		{ocAggregatePath + "/config/aggregate-id", "LaPortChannel", "IntfRef", false, "aggregateid", lagMembers},
		{ocAggregatePath + "/state/aggregate-id", "LaPortChannel", "IntfRef", true, "aggregateid", lagMembers},
		{ocLACPPath + "/config/name", "LaPortChannel", "IntfRef", false, "", nil},
		{ocLACPPath + "/config/interval", "LaPortChannel", "Interval", false, "lacpinterval", nil},
		{ocLACPPath + "/config/lacp-mode", "LaPortChannel", "LacpMode", false, "lacpmode", nil},
		{ocLACPPath + "/config/system-priority", "LaPortChannel", "SystemPriority", false, "", nil},
		{ocLACPPath + "/state/name", "LaPortChannel", "IntfRef", true, "", nil},
		{ocLACPPath + "/state/interval", "LaPortChannel", "Interval", true, "lacpinterval", nil},
		{ocLACPPath + "/state/lacp-mode", "LaPortChannel", "LacpMode", true, "lacpmode", nil},
		{ocLACPPath + "/state/system-priority", "LaPortChannel", "SystemPriority", true, "", nil},
		ocState(ocLACPMember+"/state/interface", "LaPortChannelIntfRefListState", "IntfRef", ""),
		ocState(ocLACPMember+"/state/activity", "LaPortChannelIntfRefListState", "Activity", "lacpmode"),
		ocState(ocLACPMember+"/state/timeout", "LaPortChannelIntfRefListState", "Timeout", "lacptimeout"),
		ocState(ocLACPMember+"/state/synchronization", "LaPortChannelIntfRefListState", "Synchronization", "lacpsync"),
		ocState(ocLACPMember+"/state/aggregatable", "LaPortChannelIntfRefListState", "Aggregatable", ""),
		ocState(ocLACPMember+"/state/collecting", "LaPortChannelIntfRefListState", "Collecting", ""),
		ocState(ocLACPMember+"/state/distributing", "LaPortChannelIntfRefListState", "Distributing", ""),
		ocState(ocLACPMember+"/state/system-id", "LaPortChannelIntfRefListState", "SystemId", "nonempty"),
		ocState(ocLACPMember+"/state/oper-key", "LaPortChannelIntfRefListState", "OperKey", ""),
		ocState(ocLACPMember+"/state/partner-id", "LaPortChannelIntfRefListState", "PartnerId", "nonempty"),
		ocState(ocLACPMember+"/state/partner-key", "LaPortChannelIntfRefListState", "PartnerKey", ""),
		ocState(ocFDBPath+"/state/mac-address", "MacTableEntryState", "MacAddr", ""),
		ocState(ocFDBPath+"/state/vlan", "MacTableEntryState", "VlanId", ""),
		ocState(ocFDBPath+"/state/age", "MacTableEntryState", "Age", "counter"),
		ocState(ocFDBPath+"/state/entry-type", "MacTableEntryState", "Type", "fdbtype"),
		ocState(ocFDBPath+"/interface/interface-ref/state/interface", "MacTableEntryState", "Port", "nonempty"),
		ocState(ocCompPath+"/state/name", "HostComponentState", "Name", ""),
		ocState(ocCompPath+"/state/type", "HostComponentState", "Type", ""),
		ocState(ocCompPath+"/state/description", "HostComponentState", "Description", ""),
		ocState(ocCompPath+"/state/temperature/instant", "HostComponentState", "Temperature", "decimal"),
		ocState(ocCompPath+"/state/temperature/alarm-threshold", "HostComponentState", "AlarmThreshold", "nonzero"),
		ocState(ocACLEntryPath+"/state/sequence-id", "AclRuleState", "Sequence", ""),
		ocState(ocACLEntryPath+"/state/description", "AclRuleState", "RuleName", ""),
		ocState(ocACLEntryPath+"/state/matched-packets", "AclRuleState", "MatchedPackets", "counter"),
		ocState(ocACLEntryPath+"/state/matched-octets", "AclRuleState", "MatchedBytes", "counter"),
	}, slices.Concat(policyOpenConfigLeaves(), unnumberedOpenConfigLeaves(), evpnOpenConfigLeaves(), routingOpenConfigLeaves())...)
}
