package model

// OpenConfigLeaf is one OpenConfig leaf that means the same as a field of
// a kind (gNMI's openconfig origin). In Path, a key "@Field" takes the
// value of a field of the object ("@IpAddr:addr": the address part of an
// address/prefix); any other key value is fixed.
type OpenConfigLeaf struct {
	Path  string
	Kind  string
	Field string // the swmgr field
	State bool   // read from the object's state form; not writable
	Conv  string // how the value converts: "" as is, or a conversion the gNMI front end names (docs/gnmi.md)
}

const (
	ocIfPath   = "/interfaces/interface[name=@IntfRef]"
	ocIP4Path  = "/interfaces/interface[name=@IntfRef]/subinterfaces/subinterface[index=0]/ipv4/addresses/address[ip=@IpAddr:addr]"
	ocNIPath   = "/network-instances/network-instance[name=@Vrf]"
	ocBGPPath  = "/network-instances/network-instance[name=@Vrf]/protocols/protocol[identifier=BGP][name=BGP]/bgp"
	ocNTPPath  = "/system/ntp/servers/server[address=@IpAddr]"
	ocUserPath = "/system/aaa/authentication/users/user[username=@Name]"
	ocVlanPath = "/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=@VlanId]"
)

// OpenConfigLeaves is the OpenConfig mapping, openconfig/public release
// v5.9.0; docs/gnmi.md shows it.
func OpenConfigLeaves() []OpenConfigLeaf {
	return []OpenConfigLeaf{
		{ocIfPath + "/config/name", "Port", "IntfRef", false, ""},
		{ocIfPath + "/config/description", "Port", "Description", false, ""},
		{ocIfPath + "/config/enabled", "Port", "AdminState", false, "enabled"},
		{ocIfPath + "/config/mtu", "Port", "Mtu", false, ""},
		{ocIfPath + "/ethernet/config/port-speed", "Port", "Speed", false, "speed"},
		{ocIfPath + "/ethernet/config/duplex-mode", "Port", "Duplex", false, "duplex"},
		{ocIfPath + "/ethernet/config/auto-negotiate", "Port", "Autoneg", false, "onoff"},
		{ocIfPath + "/state/name", "Port", "IntfRef", true, ""},
		{ocIfPath + "/state/description", "Port", "Description", true, ""},
		{ocIfPath + "/state/enabled", "Port", "AdminState", true, "enabled"},
		{ocIfPath + "/state/mtu", "Port", "Mtu", true, ""},
		{ocIfPath + "/state/ifindex", "Port", "IfIndex", true, ""},
		{ocIfPath + "/state/admin-status", "Port", "AdminState", true, ""},
		{ocIfPath + "/state/oper-status", "Port", "OperState", true, ""},
		{ocIfPath + "/state/counters/in-octets", "Port", "IfInOctets", true, "counter"},
		{ocIfPath + "/state/counters/in-unicast-pkts", "Port", "IfInUcastPkts", true, "counter"},
		{ocIfPath + "/state/counters/in-discards", "Port", "IfInDiscards", true, "counter"},
		{ocIfPath + "/state/counters/in-errors", "Port", "IfInErrors", true, "counter"},
		{ocIfPath + "/state/counters/out-octets", "Port", "IfOutOctets", true, "counter"},
		{ocIfPath + "/state/counters/out-unicast-pkts", "Port", "IfOutUcastPkts", true, "counter"},
		{ocIfPath + "/state/counters/out-discards", "Port", "IfOutDiscards", true, "counter"},
		{ocIfPath + "/state/counters/out-errors", "Port", "IfOutErrors", true, "counter"},
		{ocIfPath + "/ethernet/state/port-speed", "Port", "Speed", true, "speed"},
		{ocIfPath + "/ethernet/state/mac-address", "Port", "MacAddr", true, ""},
		{ocIP4Path + "/config/ip", "IPv4Intf", "IpAddr", false, "addr"},
		{ocIP4Path + "/config/prefix-length", "IPv4Intf", "IpAddr", false, "prefixlen"},
		{ocIP4Path + "/state/ip", "IPv4Intf", "IpAddr", true, "addr"},
		{ocIP4Path + "/state/prefix-length", "IPv4Intf", "IpAddr", true, "prefixlen"},
		{ocNIPath + "/config/name", "Vrf", "Vrf", false, ""},
		{ocNIPath + "/config/description", "Vrf", "Name", false, ""},
		{ocNIPath + "/state/name", "Vrf", "Vrf", true, ""},
		{ocVlanPath + "/config/vlan-id", "Vlan", "VlanId", false, ""},
		{ocVlanPath + "/config/name", "Vlan", "Description", false, ""},
		{ocVlanPath + "/config/status", "Vlan", "AdminState", false, "active"},
		{ocVlanPath + "/state/vlan-id", "Vlan", "VlanId", true, ""},
		{ocVlanPath + "/state/status", "Vlan", "OperState", true, "active"},
		{ocBGPPath + "/global/config/as", "BGPGlobal", "ASNum", false, "asn"},
		{ocBGPPath + "/global/config/router-id", "BGPGlobal", "RouterId", false, ""},
		{ocBGPPath + "/global/state/as", "BGPGlobal", "ASNum", true, "asn"},
		{ocBGPPath + "/global/state/router-id", "BGPGlobal", "RouterId", true, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/config/neighbor-address", "BGPv4Neighbor", "NeighborAddress", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/config/peer-as", "BGPv4Neighbor", "PeerAS", false, "asn"},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/config/local-as", "BGPv4Neighbor", "LocalAS", false, "asn"},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/config/description", "BGPv4Neighbor", "Description", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/config/auth-password", "BGPv4Neighbor", "AuthPassword", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/timers/config/hold-time", "BGPv4Neighbor", "HoldTime", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/timers/config/keepalive-interval", "BGPv4Neighbor", "KeepaliveTime", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/transport/config/local-address", "BGPv4Neighbor", "UpdateSource", false, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/state/neighbor-address", "BGPv4Neighbor", "NeighborAddress", true, ""},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/state/peer-as", "BGPv4Neighbor", "PeerAS", true, "asn"},
		{ocBGPPath + "/neighbors/neighbor[neighbor-address=@NeighborAddress]/state/session-state", "BGPv4Neighbor", "SessionState", true, "upper"},
		{"/system/config/hostname", "SystemParam", "Hostname", false, ""},
		{"/system/state/hostname", "SystemParam", "Hostname", true, ""},
		{ocNTPPath + "/config/address", "NtpServer", "IpAddr", false, ""},
		{ocNTPPath + "/config/prefer", "NtpServer", "Prefer", false, ""},
		{ocNTPPath + "/state/address", "NtpServer", "IpAddr", true, ""},
		{ocNTPPath + "/state/prefer", "NtpServer", "Prefer", true, ""},
		{ocNTPPath + "/state/stratum", "NtpServer", "Stratum", true, ""},
		{ocUserPath + "/config/username", "User", "Name", false, ""},
		{ocUserPath + "/config/password", "User", "Password", false, ""},
		{ocUserPath + "/config/role", "User", "Group", false, "role"},
		{ocUserPath + "/state/username", "User", "Name", true, ""},
		{ocUserPath + "/state/role", "User", "Group", true, "role"},
		{"/lldp/config/enabled", "LLDPGlobal", "Enable", false, ""},
		{"/lldp/config/hello-timer", "LLDPGlobal", "TranmitInterval", false, ""},
		{"/lldp/state/enabled", "LLDPGlobal", "Enable", true, ""},
		{"/lldp/state/hello-timer", "LLDPGlobal", "TranmitInterval", true, ""},
	}
}
