package model

import (
	"strings"
	"testing"
)

// TestIPv6Forms: every IPv6 format reads one form per address and keeps
// RFC 5952's spelling; the odd forms net/netip accepts and a switch has no
// use for (zones, IPv4-mapped, dotted tails) are refused.
func TestIPv6Forms(t *testing.T) {
	for _, c := range []struct {
		f    *Format
		in   string
		want string // canonical form; "" refused
	}{
		{FormatIPv6Host, "2001:db8::1", "2001:db8::1"},
		{FormatIPv6Host, "2001:DB8::1", "2001:db8::1"},
		{FormatIPv6Host, "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
		{FormatIPv6Host, "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},    // the first of equal runs
		{FormatIPv6Host, "2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"},      // the longest run
		{FormatIPv6Host, "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"}, // one zero group stays
		{FormatIPv6Host, "fe80::1", "fe80::1"},
		{FormatIPv6Host, "fe80::1%eth0", ""},
		{FormatIPv6Host, "fe80::1%25eth0", ""},
		{FormatIPv6Host, "::ffff:192.0.2.1", ""},
		{FormatIPv6Host, "::ffff:c000:201", ""}, // mapped, in hex
		{FormatIPv6Host, "2001:db8::192.0.2.1", ""},
		{FormatIPv6Host, "::192.0.2.1", ""},
		{FormatIPv6Host, "192.0.2.1", ""},
		{FormatIPv6Host, "[2001:db8::1]", ""},
		{FormatIPv6Host, " 2001:db8::1", ""},
		{FormatIPv6Host, "2001:db8::1/64", ""},
		{FormatIPv6Host, "2001:db8:::1", ""},
		{FormatIPv6Host, "2001:db8::1::2", ""},
		{FormatIPv6Host, "02001:db8::1", ""},
		{FormatIPv6Host, "2001:db8:1:2:3:4:5:6:7", ""},
		{FormatIPv6Host, "::", ""},
		{FormatIPv6Host, "::1", ""},
		{FormatIPv6Host, "ff02::1", ""},
		{FormatIPv6Host, "", ""},
		{FormatIPv6, "::", "::"},
		{FormatIPv6, "2001:DB8::", "2001:db8::"},
		{FormatIPv6CIDR, "2001:DB8:0::1/64", "2001:db8::1/64"},
		{FormatIPv6CIDR, "2001:db8::/64", ""},                // the subnet-router anycast address
		{FormatIPv6CIDR, "2001:db8::/127", "2001:db8::/127"}, // RFC 6164 point-to-point
		{FormatIPv6CIDR, "2001:db8::1/128", "2001:db8::1/128"},
		{FormatIPv6CIDR, "fe80::1/64", ""},
		{FormatIPv6CIDR, "2001:db8::1/129", ""},
		{FormatIPv6CIDR, "2001:db8::1/064", ""},
		{FormatIPv6CIDR, "2001:db8::1/0", ""},
		{FormatIPv6CIDR, "2001:db8::1", ""},
		{FormatIPv6CIDR, "2001:db8::1%eth0/64", ""},
		{FormatIPv6CIDR, "::ffff:192.0.2.1/120", ""},
		{FormatIPv6CIDR, "ff02::1/64", ""},
		{FormatIPv6Mask, "64", "ffff:ffff:ffff:ffff::"},
		{FormatIPv6Mask, "/64", "ffff:ffff:ffff:ffff::"},
		{FormatIPv6Mask, "FFFF:FFFF:FFFF:FFFF:0:0:0:0", "ffff:ffff:ffff:ffff::"},
		{FormatIPv6Mask, "0", "::"},
		{FormatIPv6Mask, "128", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{FormatIPv6Mask, "ffff:0:ffff::", ""},
		{FormatIPv6Mask, "129", ""},
		{FormatIPv6Mask, "064", ""},
		{FormatIPv6Mask, "255.255.255.0", ""},
		// The fields that take either family read IPv6 the same way.
		{FormatIPHost, "2001:DB8:0::1", "2001:db8::1"},
		{FormatIPHost, "::ffff:192.0.2.1", "192.0.2.1"},
		{FormatIPHost, "fe80::1%eth0", ""},
		{FormatIPHost, "2001:db8::192.0.2.1", ""},
		{FormatIPOrFQDN, "2001:DB8::1", "2001:db8::1"},
		{FormatIPOrFQDN, "2001:db8::192.0.2.1", ""},
		{FormatIPOrFQDN, "fe80::1%eth0", ""},
		{FormatIPOrFQDN, "[2001:db8::1]", ""},
	} {
		why := c.f.Check(c.in)
		switch {
		case c.want == "" && why == "":
			t.Errorf("%s %q accepted, want refused", c.f.Name, c.in)
		case c.want != "" && why != "":
			t.Errorf("%s %q refused: %s", c.f.Name, c.in, why)
		case c.want != "" && c.f.Canonical(c.in) != c.want:
			t.Errorf("%s %q: canonical %q, want %q", c.f.Name, c.in, c.f.Canonical(c.in), c.want)
		}
	}
}

// TestIPv6KindsKeepOneSpelling: an IPv6Route's key and an IPv6Intf's
// address are stored in one form whatever the spelling given, and the
// route's checks hold for IPv6 (host bits, link-local next hops).
func TestIPv6KindsKeepOneSpelling(t *testing.T) {
	r := Builtin()
	route := r.Lookup(Config, "IPv6Route")
	o, err := create(route, `{"DestinationNw":"2001:DB8:0:1::","NetworkMask":"/64","NextHop":[{"NextHopIp":"2001:db8::0:2"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if o.Str("DestinationNw") != "2001:db8:0:1::" || o.Str("NetworkMask") != "ffff:ffff:ffff:ffff::" || o.Records("NextHop")[0].Str("NextHopIp") != "2001:db8::2" {
		t.Errorf("stored as %v", o)
	}
	for body, want := range map[string]string{
		`{"DestinationNw":"2001:db8::1","NetworkMask":"64","NextHop":[{"NextHopIp":"2001:db8::2"}]}`:                 "host bits",
		`{"DestinationNw":"2001:db8::","NetworkMask":"64","NextHop":[{"NextHopIp":"fe80::1"}]}`:                      "link-local",
		`{"DestinationNw":"2001:db8::","NetworkMask":"64","NextHop":[{"NextHopIp":"192.0.2.1"}]}`:                    "IPv4",
		`{"DestinationNw":"2001:db8::","NetworkMask":"64","NullRoute":true,"NextHop":[{"NextHopIp":"2001:db8::2"}]}`: "NullRoute",
	} {
		if _, err := create(route, body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", body, err, want)
		}
	}
	if _, err := create(route, `{"DestinationNw":"2001:db8::","NetworkMask":"64","NextHop":[{"NextHopIp":"fe80::1","NextHopIntRef":"fpPort1"}]}`); err != nil {
		t.Errorf("a link-local next hop with its interface: %v", err)
	}
	intf := r.Lookup(Config, "IPv6Intf")
	o, err = create(intf, `{"IntfRef":"fpPort1","IpAddr":"2001:DB8::0001/64"}`)
	if err != nil || o.Str("IpAddr") != "2001:db8::1/64" {
		t.Errorf("IPv6Intf: %v %v", o, err)
	}
}
