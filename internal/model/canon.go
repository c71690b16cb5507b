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

// canonicalIP is the one spelling of an IP address (IPv4-mapped IPv6
// addresses as IPv4), or s unchanged when s is none or has a zone (which
// the format check refuses).
func canonicalIP(s string) string {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap().String()
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

// canonical returns the one spelling of s in the field's format, or s
// unchanged when the format has none or s does not have the format
// (validation then says what is wrong).
func (f *Field) canonical(s string) string {
	if f.Format == nil || f.Format.Canonical == nil {
		return s
	}
	return f.Format.Canonical(s)
}

// canonicalValue applies canonical to a string or each element of a list.
func (f *Field) canonicalValue(v any) any {
	if f.Format == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		if c := f.canonical(x); c != x {
			return c
		}
		return v // already canonical: no new string nor interface (a restore's 300,000)
	case []string:
		if f.PortList() {
			x = expandPortList(x)
		}
		var out []string
		for i, s := range x {
			if c := f.canonical(s); c != s {
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
