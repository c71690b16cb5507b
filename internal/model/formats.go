package model

import (
	"net/netip"
	"regexp"
	"strings"
)

// Format is the form of the text of a string field (or of each element of a
// list), declared once with everything said about it: validation, the
// canonical spelling, docs/objects.md and the OpenAPI document, the CLI's
// help and the Ansible examples all read it from here, and none of them
// names a format. NewRegistry refuses a field whose format lacks any of
// Name, Doc, Hint, Sample or Check, or whose Sample it does not accept.
type Format struct {
	// Name is the format's name in the OpenAPI document (x-swmgr-format).
	Name string
	// Doc says what the format accepts: the "allowed" column of
	// docs/objects.md and the OpenAPI description's "form:".
	Doc string
	// Hint is the CLI's help for a value of the form: <A.B.C.D>.
	Hint string
	// Sample is a value of the form, for examples (the Ansible modules').
	Sample string
	// Check returns "" when s has the form, else what s should have been
	// ("an IPv4 address in dotted form, like 192.0.2.1").
	Check func(s string) string
	// Canonical, when set, returns the one spelling of s (an address's
	// shortest form), or s unchanged when s does not have the form; see
	// canon.go.
	Canonical func(s string) string
	// Resolve, on a format whose values name objects of several kinds (an
	// interface: a Port, a Vlan, a LogicalIntf), returns the kind and the
	// store key a value names; a reference field of the format names that
	// object instead of one of its Ref kind.
	Resolve func(value string) (kind, key string)
	// bind, on a format whose rule depends on the other declarations of a
	// registry (the interface kinds, interfaces.go), makes the format of
	// that registry; NewRegistry puts it in place of the declared one.
	bind func(declared *Format, r *Registry) *Format
}

// complete says what a declared format lacks, or "".
func (f *Format) complete() string {
	var missing []string
	for _, m := range []struct {
		name string
		ok   bool
	}{{"Name", f.Name != ""}, {"Doc", f.Doc != ""}, {"Hint", f.Hint != ""}, {"Sample", f.Sample != ""}, {"Check", f.Check != nil}} {
		if !m.ok {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return "lacks " + strings.Join(missing, ", ")
	}
	if why := f.Check(f.Sample); why != "" {
		return "refuses its own Sample " + f.Sample + ": " + why
	}
	return ""
}

// The declared formats.
var (
	FormatIPv4 = &Format{
		Name: "ipv4", Doc: "IPv4 address", Hint: "<A.B.C.D>", Sample: "192.0.2.1",
		Check:     checkIPv4,
		Canonical: canonicalIP,
	}
	FormatIPv4Host = &Format{
		Name: "ipv4-host", Doc: "an IPv4 address a host can have (not 0.0.0.0, broadcast or multicast)", Hint: "<A.B.C.D>", Sample: "192.0.2.1",
		Check: func(s string) string {
			if why := checkIPv4(s); why != "" {
				return why
			}
			if !isUnicastHost(netip.MustParseAddr(s)) {
				return "a unicast IPv4 address (not 0.0.0.0, 255.255.255.255 or multicast 224.0.0.0/4)"
			}
			return ""
		},
		Canonical: canonicalIP,
	}
	FormatIPv4CIDR = &Format{
		Name: "ipv4-interface", Doc: "IPv4 address/prefix length (not the network or broadcast address)", Hint: "<A.B.C.D/M>", Sample: "192.0.2.1/24",
		Check: checkInterfaceCIDR,
		Canonical: func(s string) string {
			if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
				return p.String()
			}
			return s
		},
	}
	FormatIPHost = &Format{
		Name: "ip-host", Doc: "an IPv4 or IPv6 address a host can have (unicast, no zone)", Hint: "<A.B.C.D|X:X::X>", Sample: "192.0.2.1",
		Check: func(s string) string {
			if a, why := parseIP(s); why != "" {
				return "an IP address, like 192.0.2.1 or 2001:db8::1: " + why
			} else if !isUnicastHost(a) {
				return "a unicast IP address (not unspecified, broadcast or multicast)"
			}
			return ""
		},
		Canonical: canonicalIP,
	}
	FormatIPOrFQDN = &Format{
		Name: "ip-or-fqdn", Doc: "IP address or fully qualified domain name", Hint: "<A.B.C.D|host name>", Sample: "192.0.2.1",
		Check: func(s string) string {
			if a, err := netip.ParseAddr(s); err == nil || strings.Contains(s, ":") {
				if _, why := parseIP(s); why != "" {
					return "a usable IP address or a fully qualified domain name, like 192.0.2.1 or ntp.example.com: " + why
				}
				if !isUnicastHost(a) {
					return "a usable unicast IP address (not unspecified, broadcast or multicast) or a fully qualified domain name, like 192.0.2.1 or ntp.example.com"
				}
				return ""
			}
			if !isHostname(s, true) {
				return "an IP address or a fully qualified domain name, like 192.0.2.1 or ntp.example.com"
			}
			return ""
		},
		Canonical: func(s string) string {
			if _, err := netip.ParseAddr(s); err == nil {
				return canonicalIP(s)
			}
			return canonicalFQDN(s)
		},
	}
	FormatASN = &Format{
		Name: "asn", Doc: "AS number: asplain 1..4294967295 or asdot", Hint: "<1-4294967295>", Sample: "65001",
		Check: func(s string) string {
			if _, ok := ParseASN(s); !ok {
				return "an AS number: asplain 1..4294967295 or asdot 0..65535.0..65535, like 65001 or 1.10"
			}
			return ""
		},
	}
	FormatPortName = &Format{
		Name: "port-name", Doc: "fpPort<N> or fpPort<N>s<M>", Hint: "<fpPortN>", Sample: "fpPort1",
		Check: matching(portNameRE, "a front-panel port name like fpPort1, or a breakout sub-port like fpPort1s2"),
	}
	FormatIfName = &Format{
		Name: "ifname", Doc: "interface name, 1..15 characters", Hint: "<Linux interface>", Sample: "example",
		Check: func(s string) string {
			if len(s) == 0 || len(s) > 15 || s == "." || s == ".." || strings.ContainsAny(s, "/ \t\n:\x00") {
				return "an interface name of 1..15 characters without '/', ':' or spaces"
			}
			return ""
		},
	}
	FormatMAC = &Format{
		Name: "mac", Doc: "MAC address aa:bb:cc:dd:ee:ff", Hint: "<HH:HH:HH:HH:HH:HH>", Sample: "02:00:00:00:00:01",
		Check: matching(macRE, "a MAC address like 00:11:22:33:44:55"),
	}
	FormatUserName = &Format{
		Name: "posix-user-name", Doc: "POSIX user name", Hint: "<user name>", Sample: "ops1",
		Check: matching(userNameRE, "a POSIX user name: 1..32 of a-z, 0-9, '_' and '-', starting with a letter or '_'"),
	}
	FormatHostname = &Format{
		Name: "hostname", Doc: "an RFC 1123 host name", Hint: "<host name>", Sample: "switch1",
		Check: func(s string) string {
			if !isHostname(s, false) {
				return "a host name of letters, digits and '-' in dot-separated labels"
			}
			return ""
		},
	}
	FormatFileURI = &Format{
		Name: "file-uri", Doc: "///abs/path, file:///abs/path or sftp://[user@]host[:port]/path", Hint: "<URI>", Sample: "sftp://backup@192.0.2.1/switch1.json",
		Check: func(s string) string {
			if _, _, err := ParseFileURI(s); err != nil {
				return err.Error()
			}
			return ""
		},
	}
	FormatAbsPath = &Format{
		Name: "absolute-path", Doc: "absolute path naming a file (as an sftp:// path: no trailing `/`, no empty, `.` or `..` segment, no control characters, `?` or `#`)", Hint: "</path>", Sample: "/var/backups/switch1.json",
		Check: func(s string) string {
			if why := CheckFilePath(s, true); why != "" {
				return "an absolute path naming a file on the server (" + why + ")"
			}
			return ""
		},
	}
	FormatObjName = &Format{
		Name: "object-name", Doc: "name: letters, digits, _ . -", Hint: "<name>", Sample: "example",
		Check: matching(objNameRE, "a name of 1..63 letters, digits, '_', '.' or '-', starting with a letter or digit"),
	}
	// The IPv6 formats read every value with one parser (ipv6.go) and
	// keep RFC 5952's form.
	FormatIPv6 = &Format{
		Name: "ipv6", Doc: "IPv6 address (RFC 5952 form; no zone, no IPv4-mapped or dotted forms)", Hint: "<X:X::X>", Sample: "2001:db8::",
		Check: func(s string) string {
			_, why := parseIPv6(s)
			return why
		},
		Canonical: canonicalIPv6,
	}
	FormatIPv6Host = &Format{
		Name: "ipv6-host", Doc: "an IPv6 address a host can have (unicast: not ::, loopback or multicast; RFC 5952 form)", Hint: "<X:X::X>", Sample: "2001:db8::1",
		Check: func(s string) string {
			a, why := parseIPv6(s)
			if why != "" {
				return why
			}
			if a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() {
				return "a unicast IPv6 address (not ::, ::1 or multicast ff00::/8)"
			}
			return ""
		},
		Canonical: canonicalIPv6,
	}
	FormatIPv6CIDR = &Format{
		Name: "ipv6-interface", Doc: "IPv6 address/prefix length, unicast and not link-local (RFC 5952 form)", Hint: "<X:X::X/M>", Sample: "2001:db8::1/64",
		Check: checkIPv6Interface,
		Canonical: func(s string) string {
			if p, why := parseIPv6Prefix(s); why == "" {
				return p.String()
			}
			return s
		},
	}
	FormatIPv6Mask = &Format{
		Name: "ipv6-mask", Doc: "IPv6 network mask: a prefix length (64, /64) or a contiguous mask; kept as the mask (ffff:ffff:ffff:ffff::)", Hint: "<X:X::X|0-128>", Sample: "ffff:ffff:ffff:ffff::",
		Check: func(s string) string {
			_, why := parseIPv6Mask(s)
			return why
		},
		Canonical: func(s string) string {
			if n, why := parseIPv6Mask(s); why == "" {
				return ipv6Mask(n)
			}
			return s
		},
	}
	FormatPeerAS = &Format{
		Name: "peer-as", Doc: "the peer's AS number (asplain 1..4294967295 or asdot), or external (any AS but the switch's) or internal (the switch's)", Hint: "<1-4294967295|external|internal>", Sample: "65002",
		Check: func(s string) string {
			if _, ok := ParseASN(s); !ok && s != "external" && s != "internal" {
				return "an AS number (asplain or asdot, like 65001 or 1.10), external or internal"
			}
			return ""
		},
		Canonical: strings.ToLower,
	}
	// FormatRoutingName names what the routing daemon's configuration
	// names (a peer group, a policy): an object name that cannot be read
	// as anything else where the daemon's commands take it. Not an IP
	// address (a neighbor's name in the same place) and none of the words
	// of those commands (routingWords).
	FormatRoutingName = &Format{
		Name: "routing-name", Doc: "name: letters, digits, _ . -; not an IP address nor a word of the routing daemon's commands (remote-as, peer-group, interface, ...)", Hint: "<name>", Sample: "SPINES",
		Check: func(s string) string {
			const want = "a name of 1..63 letters, digits, '_', '.' or '-', starting with a letter or digit"
			switch {
			case !objNameRE.MatchString(s):
				return want
			case routingWords[strings.ToLower(s)]:
				return want + ", not " + strings.ToLower(s) + " (a word of the routing daemon's commands)"
			}
			if _, err := netip.ParseAddr(s); err == nil {
				return want + ", not an IP address (the routing daemon would read it as a neighbor's)"
			}
			return ""
		},
	}
	// FormatIntfRef is an interface of the switch: a name of one of the
	// registry's interface kinds (a port, a VLAN interface, a LogicalIntf;
	// interfaces.go). Its Doc, Check and Resolve come from those kinds.
	FormatIntfRef = &Format{Name: "intf-ref", Hint: "<interface>", Sample: "fpPort1", bind: bindInterfaceFormat}
	// FormatSwitchPort is an interface that switches frames as a port does:
	// a name of one of the registry's interface kinds declared Member (a
	// port, a LAG; interfaces.go): a VLAN's members, a mirror session's
	// ports.
	FormatSwitchPort = &Format{Name: "switch-port", Hint: "<port>", Sample: "fpPort1", bind: bindSwitchPortFormat}
)

// matching is the check of a format a regular expression defines: want
// is what a value that does not match should have been.
func matching(re *regexp.Regexp, want string) func(s string) string {
	return func(s string) string {
		if !re.MatchString(s) {
			return want
		}
		return ""
	}
}

// checkIPv4 accepts a dotted IPv4 address.
func checkIPv4(s string) string {
	if a, err := netip.ParseAddr(s); err != nil || !a.Is4() {
		return "an IPv4 address in dotted form, like 192.0.2.1"
	}
	return ""
}

// routingWords are the words of FRR's neighbor, route-map and prefix-list
// commands where a name stands: a name equal to one is refused, so that no
// name can read as a command's word.
var routingWords = setOf("activate", "addpath-tx-all-paths", "allowas-in", "as-override", "attribute-unchanged", "bfd",
	"capability", "default-originate", "deny", "description", "disable-addpath-rx", "ebgp-multihop", "external", "filter-list",
	"in", "interface", "internal", "ipv4", "ipv6", "le", "ge", "local-as", "match", "maximum-prefix", "next-hop-self", "out",
	"passive", "password", "peer-group", "permit", "port", "prefix-list", "remote-as", "route-map", "route-reflector-client",
	"send-community", "seq", "set", "shutdown", "timers", "unicast", "update-source", "v6only", "vrf", "weight", "any", "no", "exit", "end")
