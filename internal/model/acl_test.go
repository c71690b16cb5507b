package model

import (
	"strings"
	"testing"
)

// TestAclRuleCheck: which rules a switch can match, and the message of
// each that it cannot.
func TestAclRuleCheck(t *testing.T) {
	rule := func(fields Object) Object {
		o := Object{"RuleName": "r", "DstPort": "0", "L4PortMatch": "NA", "Dscp": int64(-1), "Action": AclAllow}
		for k, v := range fields {
			o[k] = v
		}
		return o
	}
	for _, c := range []struct {
		name   string
		fields Object
		family string
		err    string
	}{
		{"matches everything", Object{}, "", ""},
		{"an IPv4 network", Object{"SourceIp": "10.0.0.0", "SourceMask": "255.0.0.0"}, AclIPv4, ""},
		{"a prefix length", Object{"DestIp": "10.0.0.0", "DestMask": "/8", "Proto": "TCP", "L4DstPort": int64(22)}, AclIPv4, ""},
		{"an IPv6 network", Object{"DestIp": "2001:db8::", "DestMask": "32", "Proto": "ICMPv6"}, AclIPv6, ""},
		{"ICMP alone is IPv4", Object{"Proto": "ICMP"}, AclIPv4, ""},
		{"a MAC rule", Object{"SourceMac": "02:00:00:00:00:01"}, AclMAC, ""},
		{"a range", Object{"Proto": "UDP", "L4PortMatch": "RANGE", "L4MinPort": int64(1000), "L4MaxPort": int64(2000)}, "", ""},
		{"greater than", Object{"Proto": "TCP", "L4PortMatch": "GT", "L4SrcPort": int64(1023)}, "", ""},
		{"a port range on ICMP", Object{"Proto": "ICMP", "L4PortMatch": "RANGE", "L4MinPort": int64(1), "L4MaxPort": int64(9)}, "", "L4MinPort: ports are TCP's and UDP's; this rule's Proto is ICMP"},
		{"a port without a protocol", Object{"L4DstPort": int64(80)}, "", "L4DstPort: ports are TCP's and UDP's; this rule's Proto is any protocol"},
		{"a comparison without a port", Object{"Proto": "TCP", "L4PortMatch": "LT"}, "", "L4PortMatch: LT compares L4SrcPort or L4DstPort"},
		{"a backwards range", Object{"Proto": "TCP", "L4PortMatch": "RANGE", "L4MinPort": int64(9), "L4MaxPort": int64(1)}, "", "1 <= L4MinPort <= L4MaxPort"},
		{"range bounds without RANGE", Object{"Proto": "TCP", "L4MinPort": int64(9)}, "", "set L4PortMatch RANGE"},
		{"a mask without an address", Object{"SourceMask": "24"}, "", "SourceMask: a mask needs an address"},
		{"a mask too long", Object{"SourceIp": "10.0.0.0", "SourceMask": "33"}, "", "longer than SourceIp's address allows"},
		{"an IPv4 mask on IPv6", Object{"SourceIp": "2001:db8::", "SourceMask": "255.255.0.0"}, "", "an IPv4 mask on the IPv6 address"},
		{"mixed families", Object{"SourceIp": "10.0.0.1", "DestIp": "2001:db8::1"}, "", "different families"},
		{"ICMP on IPv6", Object{"DestIp": "2001:db8::1", "Proto": "ICMP"}, "", "ICMP is IPv4's"},
		{"ICMPv6 on IPv4", Object{"DestIp": "10.0.0.1", "Proto": "ICMPv6"}, "", "ICMPv6 is IPv6's"},
		{"MAC and IP", Object{"SourceMac": "02:00:00:00:00:01", "Proto": "TCP"}, "", "MAC addresses (a MAC ACL's) or IP fields"},
		{"FlexSwitch's MLAG port", Object{"SrcPort": "fpPort1"}, "", "SrcPort: matching a physical source port"},
	} {
		o := rule(c.fields)
		err := checkAclRule(o)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.err)
		case c.err == "" && AclRuleFamily(o) != c.family:
			t.Errorf("%s: family %q, want %q", c.name, AclRuleFamily(o), c.family)
		}
	}
}

// TestAclMaskBits: the masks a rule may give.
func TestAclMaskBits(t *testing.T) {
	for in, want := range map[string]int{"24": 24, "/64": 64, "0": 0, "128": 128, "255.255.255.0": 24, "255.255.255.255": 32, "0.0.0.0": 0} {
		if got, ok := aclMaskBits(in); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"129", "-1", "255.0.255.0", "024", "ffff::", "x", ""} {
		if _, ok := aclMaskBits(in); ok {
			t.Errorf("%q was taken as a mask", in)
		}
	}
}
