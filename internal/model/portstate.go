package model

// portStateExtra are the fields of FlexSwitch's PortState beyond the
// RFC 2233 counters: its CLI's `show interface`, the SDK's printers and the
// Prometheus exporter read every one of them.
func portStateExtra() []*Field {
	// The RFC 1757 etherStats counters: name, metric, what they count.
	ether := [][3]string{
		{"IfEtherUnderSizePktCnt", "ether_undersize_packets_total", "frames shorter than 64 bytes, well formed otherwise (RFC 1757 etherStatsUndersizePkts)"},
		{"IfEtherOverSizePktCnt", "ether_oversize_packets_total", "frames longer than 1518 bytes, well formed otherwise (RFC 1757 etherStatsOversizePkts)"},
		{"IfEtherFragments", "ether_fragments_total", "frames shorter than 64 bytes with a bad checksum (RFC 1757 etherStatsFragments)"},
		{"IfEtherCRCAlignError", "ether_crc_align_errors_total", "frames with a bad checksum or alignment (RFC 1757 etherStatsCRCAlignErrors)"},
		{"IfEtherJabber", "ether_jabbers_total", "frames longer than 1518 bytes with a bad checksum (RFC 1757 etherStatsJabbers)"},
		{"IfEtherPkts", "ether_packets_total", "frames received, bad ones included (RFC 1757 etherStatsPkts)"},
		{"IfEtherMCPkts", "ether_multicast_packets_total", "multicast frames received (RFC 1757 etherStatsMulticastPkts)"},
		{"IfEtherBcastPkts", "ether_broadcast_packets_total", "broadcast frames received (RFC 1757 etherStatsBroadcastPkts)"},
		{"IfEtherPkts64OrLessOctets", "ether_packets_64_bytes_total", "frames received of 64 bytes or less (RFC 1757 etherStatsPkts64Octets)"},
		{"IfEtherPkts65To127Octets", "ether_packets_65_to_127_bytes_total", "frames received of 65 to 127 bytes (RFC 1757)"},
		{"IfEtherPkts128To255Octets", "ether_packets_128_to_255_bytes_total", "frames received of 128 to 255 bytes (RFC 1757)"},
		{"IfEtherPkts256To511Octets", "ether_packets_256_to_511_bytes_total", "frames received of 256 to 511 bytes (RFC 1757)"},
		{"IfEtherPkts512To1023Octets", "ether_packets_512_to_1023_bytes_total", "frames received of 512 to 1023 bytes (RFC 1757)"},
		{"IfEtherPkts1024To1518Octets", "ether_packets_1024_to_1518_bytes_total", "frames received of 1024 to 1518 bytes (RFC 1757)"},
	}
	out := []*Field{
		{Name: "IfInUnknownProtos", Type: Int, Doc: "received packets of a protocol the switch does not handle", Metric: &Metric{Name: "receive_unknown_protocols_total", Counter: true}},
		{Name: "Pvid", Type: Int, Doc: "the VLAN of untagged frames"},
	}
	for _, e := range ether {
		out = append(out, &Field{Name: e[0], Type: Int, Doc: e[2], Metric: &Metric{Name: e[1], Counter: true}})
	}
	return append(out,
		&Field{Name: "ErrDisableReason", Type: String, Doc: "\"\" unless the switch shut the port down"},
		&Field{Name: "ConfigMode", Type: String, Doc: "L3 with an IPv4Intf, else L2"},
		&Field{Name: "PRBSRxErrCnt", Type: Int, Doc: "bit errors seen by the PRBS checker"},
	)
}

// portBrief are the columns of `show interface` and `show interfaces`: the
// port, its states, speed, MTU, its VLANs or address, its description.
var portBrief = []string{"IntfRef:Port", "AdminState:Admin", "OperState:Oper", "Speed", "Mtu:MTU", "Vlan.VlanId:VLAN", "IPv4Intf.IpAddr:IP Address", "Description"}
