package model

import (
	"net/url"
	"testing"
)

// TestCanonicalKeys: every spelling of one address or name parses (from a
// body and from a query string) and validates to the same value.
func TestCanonicalKeys(t *testing.T) {
	reg := Builtin()
	for _, tc := range []struct {
		kind, field string
		want        string
		spellings   []string
	}{
		{"NtpServer", "IpAddr", "2001:db8::1", []string{"2001:db8::1", "2001:DB8::1", "2001:0db8::1", "2001:db8:0:0:0:0:0:1", "2001:0DB8:0000:0000:0000:0000:0000:0001"}},
		{"NtpServer", "IpAddr", "192.0.2.77", []string{"192.0.2.77", "::ffff:192.0.2.77", "::FFFF:c000:024d"}},
		{"NtpServer", "IpAddr", "ntp.example.com", []string{"ntp.example.com", "NTP.EXAMPLE.COM", "ntp.example.com.", "Ntp.Example.Com."}},
		{"ConfigArchiveServer", "IpAddr", "2001:db8::a", []string{"2001:DB8::A", "2001:db8:0::a"}},
		{"ConfigArchiveServer", "IpAddr", "archive.example.com", []string{"ARCHIVE.example.com."}},
		{"BGPv4Neighbor", "NeighborAddress", "10.0.0.2", []string{"10.0.0.2", "::ffff:10.0.0.2"}},
		{"IPv4Intf", "IpAddr", "10.0.0.1/24", []string{"10.0.0.1/24"}},
		{"SystemParam", "MgmtIp", "192.0.2.5", []string{"::ffff:192.0.2.5"}},
	} {
		k := reg.Lookup(Config, tc.kind)
		f := k.Field(tc.field)
		for _, s := range tc.spellings {
			body := Body{tc.field: []byte(`"` + s + `"`)}
			got, err := k.Parse(body)
			if err != nil || got[tc.field] != tc.want {
				t.Errorf("%s.Parse(%s=%q) = %v, %v; want %q", tc.kind, tc.field, s, got[tc.field], err, tc.want)
			}
			q, err := k.ParseQuery(url.Values{tc.field: {s}})
			if err != nil || q[tc.field] != tc.want {
				t.Errorf("%s.ParseQuery(%s=%q) = %v, %v; want %q", tc.kind, tc.field, s, q[tc.field], err, tc.want)
			}
			v, err := f.validate(tc.kind, s)
			if err != nil || v != tc.want {
				t.Errorf("%s.%s validate(%q) = %v, %v; want %q", tc.kind, tc.field, s, v, err, tc.want)
			}
		}
	}
}
