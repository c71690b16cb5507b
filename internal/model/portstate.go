package model

// portStateExtra are the fields of FlexSwitch's PortState beyond the
// RFC 2233 counters: its CLI's `show interface`, the SDK's printers and the
// Prometheus exporter read every one of them.
func portStateExtra() []*Field {
	ether := []string{
		"IfEtherUnderSizePktCnt", "IfEtherOverSizePktCnt", "IfEtherFragments", "IfEtherCRCAlignError", "IfEtherJabber",
		"IfEtherPkts", "IfEtherMCPkts", "IfEtherBcastPkts", "IfEtherPkts64OrLessOctets", "IfEtherPkts65To127Octets",
		"IfEtherPkts128To255Octets", "IfEtherPkts256To511Octets", "IfEtherPkts512To1023Octets", "IfEtherPkts1024To1518Octets",
	}
	out := []*Field{
		{Name: "IfInUnknownProtos", Type: Int},
		{Name: "Pvid", Type: Int, Doc: "the VLAN of untagged frames"},
	}
	for _, n := range ether {
		out = append(out, &Field{Name: n, Type: Int, Doc: "RFC 1757"})
	}
	return append(out,
		&Field{Name: "ErrDisableReason", Type: String, Doc: "\"\" unless the switch shut the port down"},
		&Field{Name: "ConfigMode", Type: String, Doc: "L3 with an IPv4Intf, else L2"},
		&Field{Name: "PRBSRxErrCnt", Type: Int, Doc: "bit errors seen by the PRBS checker"},
	)
}
