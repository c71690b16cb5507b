package model

import (
	"net/netip"
	"strings"
)

// Canonical forms. Two spellings of one address or name must be one key —
// 2001:DB8::1, 2001:0db8::1 and 2001:db8:0:0:0:0:0:1 are one NTP server,
// ::ffff:192.0.2.77 is 192.0.2.77, NTP.Example.COM. is ntp.example.com —
// so every value of a field with an address or name format is rewritten to
// one spelling as soon as it is read (body, query string, stored object),
// and that spelling is what is stored, compared, indexed and returned. It
// is done here, per format, once for every kind and for keys and
// references alike.

// canonical returns the one spelling of s for format f, or s unchanged when
// s does not have the format (validation then says what is wrong).
func canonical(f Format, s string) string {
	switch f {
	case FormatIPv4, FormatIPv4Host, FormatIPOrFQDN, FormatIPHost:
		if a, err := netip.ParseAddr(s); err == nil {
			if a.Zone() != "" {
				return s // refused by the format check
			}
			return a.Unmap().String()
		}
		if f == FormatIPOrFQDN {
			return canonicalFQDN(s)
		}
	case FormatIPv4CIDR:
		if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
			return p.String()
		}
	}
	return s
}

// canonicalFQDN lower-cases a DNS name and drops the trailing dot of its
// absolute form: DNS names are case-insensitive and "a.example." is
// "a.example".
func canonicalFQDN(s string) string {
	if len(s) > 1 {
		s = strings.TrimSuffix(s, ".")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// canonicalValue applies canonical to a string or each element of a list.
func (f *Field) canonicalValue(v any) any {
	if f.Format == FormatNone {
		return v
	}
	switch x := v.(type) {
	case string:
		if c := canonical(f.Format, x); c != x {
			return c
		}
		return v // already canonical: no new string nor interface (a restore's 300,000)
	case []string:
		if f.PortList() {
			x = expandPortList(x)
		}
		var out []string
		for i, s := range x {
			if c := canonical(f.Format, s); c != s {
				if out == nil {
					out = append([]string(nil), x...)
				}
				out[i] = c
			}
		}
		if out != nil {
			return out
		}
		return x
	}
	return v
}
