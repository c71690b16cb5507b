package model

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// The values of AclRule's Action and Acl's Direction and AclType.
const (
	AclAllow = "Allow"
	AclDeny  = "Deny"
	AclIn    = "IN"
	AclOut   = "OUT"
	AclIPv4  = "IP"
	AclIPv6  = "IPv6"
	AclMAC   = "MAC"
)

// The L4PortMatch comparisons: NA (a given port matches equal), EQ, NEQ,
// LT, GT, RANGE (L4MinPort..L4MaxPort).
var aclPortMatches = []string{"NA", "EQ", "NEQ", "LT", "GT", "RANGE"}

// aclProtocols are the protocols a rule matches ("": any).
var aclProtocols = []string{"", "TCP", "UDP", "ICMP", "ICMPv6"}

// FormatIPAddr is any IPv4 or IPv6 address (a network's first address
// included): what an ACL rule matches with its mask.
var FormatIPAddr = &Format{
	Name: "ip-address", Doc: "an IPv4 or IPv6 address (no zone)", Hint: "<A.B.C.D|X:X::X>", Sample: "192.0.2.0",
	Check: func(s string) string {
		if _, why := parseIP(s); why != "" {
			return "an IP address, like 192.0.2.0 or 2001:db8::: " + why
		}
		return ""
	},
	Canonical: canonicalIP,
}

// FormatAclMask is a rule's mask: a prefix length or an IPv4 dotted mask.
var FormatAclMask = &Format{
	Name: "acl-mask", Doc: "a prefix length (24, /24) or an IPv4 mask (255.255.255.0)", Hint: "<len|A.B.C.D>", Sample: "24",
	Check: func(s string) string {
		if _, ok := aclMaskBits(s); !ok {
			return "a prefix length like 24 or /64, or an IPv4 mask like 255.255.255.0"
		}
		return ""
	},
}

// aclMaskBits is the prefix length a mask gives.
func aclMaskBits(s string) (int, bool) {
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "/")); err == nil && strconv.Itoa(n) == strings.TrimPrefix(s, "/") {
		return n, n >= 0 && n <= 128
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return 0, false
	}
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	ones := 0
	for v&(1<<31) != 0 {
		ones++
		v <<= 1
	}
	return ones, v == 0
}

// AclPrefix is the prefix a rule's address field and its mask name ("" and
// true: the field is empty, any address). The model's check has refused
// what does not parse.
func AclPrefix(o Object, addrField, maskField string) (netip.Prefix, bool) {
	s := o.Str(addrField)
	if s == "" {
		return netip.Prefix{}, true
	}
	a, why := parseIP(s)
	if why != "" {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	bits := a.BitLen()
	if m := o.Str(maskField); m != "" {
		n, ok := aclMaskBits(m)
		if !ok || n > a.BitLen() {
			return netip.Prefix{}, false
		}
		bits = n
	}
	return netip.PrefixFrom(a, bits).Masked(), true
}

// AclRuleFamily is the address family a rule's addresses and protocol
// need: AclIPv4, AclIPv6, AclMAC (MAC addresses only) or "" (any IP ACL).
func AclRuleFamily(o Object) string {
	for _, f := range []string{"SourceIp", "DestIp"} {
		if p, ok := AclPrefix(o, f, ""); ok && p.IsValid() {
			if p.Addr().Is4() {
				return AclIPv4
			}
			return AclIPv6
		}
	}
	switch o.Str("Proto") {
	case "ICMP":
		return AclIPv4
	case "ICMPv6":
		return AclIPv6
	}
	if o.Str("Proto") == "" && o.Int("Dscp") < 0 && o.Int("L4SrcPort") == 0 && o.Int("L4DstPort") == 0 && (o.Str("SourceMac") != "" || o.Str("DestMac") != "") {
		return AclMAC
	}
	return ""
}

// aclKinds are FlexSwitch's Acl and AclRule, their per-rule counters
// (AclRuleState), and swmgr's control-plane ACL of its own listeners.
func aclKinds() []*Kind {
	portRange := rng(0, 65535)
	return []*Kind{
		{
			Name: "AclRule", Class: Config,
			CLI: &CLICommand{Words: []string{"acl_rule"}, Prompt: []string{"acl-rule"}},
			Doc: "One rule of access control lists: what a packet must match (every given field; an empty or zero field matches anything) and the Action taken. A rule is used by the ACLs whose RuleNameList names it, in that list's order; one no ACL names does nothing. " +
				"A packet that matches no rule of an ACL passes: end the list with a rule that matches everything (no field given) and Action Deny for an allow-list.",
			Fields: []*Field{
				{Name: "RuleName", Type: String, Key: true, Format: FormatObjName, Doc: "the rule's name, which an Acl's RuleNameList names"},
				{Name: "SourceMac", Type: String, Format: FormatMAC, Doc: "source MAC address (MAC ACLs)"},
				{Name: "DestMac", Type: String, Format: FormatMAC, Doc: "destination MAC address (MAC ACLs)"},
				{Name: "SourceIp", Type: String, Format: FormatIPAddr, Doc: "source address, IPv4 or IPv6; with SourceMask, a network"},
				{Name: "DestIp", Type: String, Format: FormatIPAddr, Doc: "destination address, IPv4 or IPv6; with DestMask, a network"},
				{Name: "SourceMask", Type: String, Format: FormatAclMask, Doc: "SourceIp's prefix length or IPv4 mask; \"\": the address alone"},
				{Name: "DestMask", Type: String, Format: FormatAclMask, Doc: "DestIp's prefix length or IPv4 mask; \"\": the address alone"},
				{Name: "Proto", Type: String, Enum: aclProtocols, Doc: "TCP, UDP, ICMP (IPv4), ICMPv6; \"\": any"},
				{Name: "SrcPort", Type: String, MaxLen: 64, Doc: "FlexSwitch's physical source port match (its MLAG); swmgr matches ports by binding the ACL to them (Acl IntfList), so this stays \"\""},
				{Name: "DstPort", Type: String, Default: "0", MaxLen: 64, Doc: "FlexSwitch's physical destination port match (its MLAG); stays \"0\""},
				{Name: "L4SrcPort", Type: Int, Range: portRange, Doc: "TCP or UDP source port, compared as L4PortMatch says; 0: any"},
				{Name: "L4DstPort", Type: Int, Range: portRange, Doc: "TCP or UDP destination port, compared as L4PortMatch says; 0: any"},
				{Name: "L4PortMatch", Type: String, Default: "NA", Enum: aclPortMatches, Doc: "how L4SrcPort and L4DstPort are compared: NA or EQ equal, NEQ not equal, LT less than, GT greater than; RANGE: the destination port in L4MinPort..L4MaxPort"},
				{Name: "L4MinPort", Type: Int, Range: portRange, Doc: "the first destination port of a RANGE"},
				{Name: "L4MaxPort", Type: Int, Range: portRange, Doc: "the last destination port of a RANGE"},
				{Name: "Dscp", Type: Int, Default: int64(-1), Range: rng(-1, 63), Doc: "the DSCP (0..63) of an IP packet; -1: any"},
				{Name: "Action", Type: String, Default: AclAllow, Enum: []string{AclAllow, AclDeny}, Doc: "Allow: the packet passes, no later rule is looked at; Deny: it is dropped"},
				{Name: "Log", Type: Bool, Doc: "log every match (the Linux backend: the kernel log, prefixed with the ACL's and the rule's names, at most 10 a second per rule)"},
			},
			Check: checkAclRule,
		},
		{
			Name: "Acl", Class: Config,
			CLI: &CLICommand{Words: []string{"acl"}, Prompt: []string{"acl"}},
			Doc: "An access control list: its rules (RuleNameList, looked at in order; the first that matches decides) applied to the packets that enter (Direction IN) or leave (OUT) each interface of IntfList: ports, LAGs (PortChannel<N>, not their member ports) and VLAN interfaces (vlan<N>). " +
				"AclType says which packets it looks at: IP (IPv4), IPv6, or MAC (any frame, rules on MAC addresses only); a packet of another type passes. An interface has at most one ACL of each type per direction. A change of an ACL or of one of its rules replaces it at once: no packet sees no rules or a mix of old and new.",
			Fields: []*Field{
				{Name: "AclName", Type: String, Key: true, Format: FormatObjName, Doc: "the ACL's name"},
				{Name: "Direction", Type: String, Key: true, Enum: []string{AclIn, AclOut}, Doc: "IN: packets entering the interfaces; OUT: leaving them"},
				{Name: "AclType", Type: String, Default: AclIPv4, Enum: []string{AclIPv4, AclIPv6, AclMAC}, Doc: "IP (IPv4 packets), IPv6, or MAC (any frame)"},
				{Name: "IntfList", Type: StringList, Format: FormatIntfRef, Ref: "Port", Doc: "the ports, LAGs and VLAN interfaces it is applied to"},
				{Name: "RuleNameList", Type: StringList, Format: FormatObjName, Ref: "AclRule", Doc: "its rules (AclRule RuleName), in the order they are looked at"},
			},
			Check: func(o Object) error {
				seen := map[string]bool{}
				for _, r := range o.List("RuleNameList") {
					if seen[r] {
						return apierr.BadRequest(apierr.CodeInvalidValue, "Acl", "RuleNameList", "RuleNameList: %s is listed twice", r)
					}
					seen[r] = true
				}
				seen = map[string]bool{}
				for _, in := range o.List("IntfList") {
					if seen[in] {
						return apierr.BadRequest(apierr.CodeInvalidValue, "Acl", "IntfList", "IntfList: %s is listed twice", in)
					}
					seen[in] = true
					if !aclBindable(in) {
						return apierr.BadRequest(apierr.CodeInvalidValue, "Acl", "IntfList", "IntfList: %s is not a port, a LAG (PortChannel<N>) or a VLAN interface (vlan<N>): an ACL applies to those", in)
					}
				}
				return nil
			},
			Constraints: []Constraint{aclRulesFitType, aclNotOnLAGMember, oneAclPerInterface},
		},
		{
			Name: "AclRuleState", Class: State, Source: SourceBackend,
			Doc: "The counters of each rule of each ACL: the packets and bytes it matched, summed over the ACL's interfaces, since the ACL was last changed (a change replaces the ACL and starts its counters again) or the switch's start. The simulated switch counts nothing.",
			CLI: &CLICommand{Words: []string{"acl", "counters"},
				Shows: []CLIShow{
					// EOS's and NX-OS's words; one line per rule with its matches.
					{Words: []string{"ip", "access-lists"}, Columns: []string{"AclName:ACL", "Direction:Dir", "AclType:Type", "Sequence:Seq", "RuleName:Rule", "Action", "MatchedPackets:Packets", "MatchedBytes:Bytes"}, Doc: "Every ACL's rules in order, with the packets and bytes each matched"},
				}},
			Metrics: &Metrics{Subsystem: "acl_rule", Doc: "ACL rule", Labels: []MetricLabel{{Field: "AclName", Label: "acl"}, {Field: "Direction", Label: "direction"}, {Field: "RuleName", Label: "rule"}}},
			Fields: []*Field{
				{Name: "AclName", Type: String, Key: true},
				{Name: "Direction", Type: String, Key: true},
				{Name: "RuleName", Type: String, Key: true},
				{Name: "AclType", Type: String, Doc: "the ACL's AclType"},
				{Name: "Sequence", Type: Int, Doc: "the rule's place in the ACL's RuleNameList, from 1"},
				{Name: "Action", Type: String},
				{Name: "MatchedPackets", Type: Int, Doc: "packets the rule matched", Metric: &Metric{Name: "matched_packets_total", Counter: true}},
				{Name: "MatchedBytes", Type: Int, Doc: "bytes of the packets the rule matched", Metric: &Metric{Name: "matched_bytes_total", Counter: true}},
			},
		},
		controlPlaneAcl(),
	}
}

// aclBindable: an ACL applies to a port, a LAG or a VLAN interface.
func aclBindable(name string) bool {
	if portNameRE.MatchString(name) {
		return true
	}
	if _, ok, _ := lagKey(name); ok {
		return true
	}
	_, ok, _ := vlanIntfKey(name)
	return ok
}

// checkAclRule: a rule's fields fit together.
func checkAclRule(o Object) error {
	bad := func(field, format string, args ...any) error {
		return apierr.BadRequest(apierr.CodeInvalidValue, "AclRule", field, field+": "+format, args...)
	}
	if o.Str("SrcPort") != "" {
		return bad("SrcPort", "matching a physical source port is FlexSwitch's MLAG feature; bind the ACL to the port instead (Acl IntfList)")
	}
	if p := o.Str("DstPort"); p != "0" && p != "" {
		return bad("DstPort", "matching a physical destination port is FlexSwitch's MLAG feature; bind an OUT ACL to the port instead (Acl IntfList)")
	}
	var family string
	for _, f := range [][2]string{{"SourceIp", "SourceMask"}, {"DestIp", "DestMask"}} {
		if o.Str(f[0]) == "" {
			if o.Str(f[1]) != "" {
				return bad(f[1], "a mask needs an address (%s)", f[0])
			}
			continue
		}
		p, ok := AclPrefix(o, f[0], f[1])
		if !ok {
			return bad(f[1], "%s is longer than %s's address allows", o.Str(f[1]), f[0])
		}
		fam := AclIPv4
		if p.Addr().Is6() {
			fam = AclIPv6
		}
		if fam == AclIPv6 && strings.Contains(o.Str(f[1]), ".") {
			return bad(f[1], "an IPv4 mask on the IPv6 address %s; give a prefix length", o.Str(f[0]))
		}
		if family != "" && family != fam {
			return bad(f[0], "SourceIp and DestIp are of different families")
		}
		family = fam
	}
	proto := o.Str("Proto")
	switch {
	case proto == "ICMP" && family == AclIPv6:
		return bad("Proto", "ICMP is IPv4's; an IPv6 rule matches ICMPv6")
	case proto == "ICMPv6" && family == AclIPv4:
		return bad("Proto", "ICMPv6 is IPv6's; an IPv4 rule matches ICMP")
	}
	match := o.Str("L4PortMatch")
	ports := o.Int("L4SrcPort") != 0 || o.Int("L4DstPort") != 0
	rangeGiven := o.Int("L4MinPort") != 0 || o.Int("L4MaxPort") != 0
	if (ports || rangeGiven || match != "NA") && proto != "TCP" && proto != "UDP" {
		what := "any protocol"
		if proto != "" {
			what = proto
		}
		field := "L4DstPort"
		switch {
		case rangeGiven || match == "RANGE":
			field = "L4MinPort"
		case o.Int("L4SrcPort") != 0:
			field = "L4SrcPort"
		case !ports:
			field = "L4PortMatch"
		}
		return bad(field, "ports are TCP's and UDP's; this rule's Proto is %s: give Proto TCP or UDP, or no port", what)
	}
	if match == "RANGE" {
		lo, hi := o.Int("L4MinPort"), o.Int("L4MaxPort")
		if lo == 0 || hi == 0 || lo > hi {
			return bad("L4MinPort", "a RANGE needs 1 <= L4MinPort <= L4MaxPort (got %d..%d)", lo, hi)
		}
		if o.Int("L4DstPort") != 0 {
			return bad("L4DstPort", "a RANGE matches the destination port in L4MinPort..L4MaxPort; leave L4DstPort 0")
		}
	} else if rangeGiven {
		return bad("L4MinPort", "L4MinPort and L4MaxPort are a RANGE's; set L4PortMatch RANGE or leave them 0")
	}
	if match != "NA" && match != "RANGE" && !ports {
		return bad("L4PortMatch", "%s compares L4SrcPort or L4DstPort; give one", match)
	}
	if (o.Str("SourceMac") != "" || o.Str("DestMac") != "") && (family != "" || proto != "" || o.Int("Dscp") >= 0) {
		return bad("SourceMac", "a rule matches MAC addresses (a MAC ACL's) or IP fields, not both")
	}
	return nil
}

// aclRulesFitType: every rule of an ACL matches packets of its AclType.
var aclRulesFitType = Constraint{
	Name:  "an ACL's rules fit its AclType",
	Kinds: []string{"Acl", "AclRule"},
	Check: func(cfg View, changes []Change) error {
		return firstAclClash(cfg, func(acl Object) error {
			typ := acl.Str("AclType")
			for _, name := range acl.List("RuleNameList") {
				r := cfg.Get("AclRule", name)
				if r == nil {
					continue // the reference check names it
				}
				switch fam := AclRuleFamily(r); {
				case fam == "" && typ != AclMAC, fam == typ:
				case typ == AclMAC:
					return apierr.Conflict(apierr.CodeConflict, "Acl", "RuleNameList: rule %s matches IP fields; the MAC ACL %s's rules match MAC addresses only", name, acl.Str("AclName"))
				default:
					return apierr.Conflict(apierr.CodeConflict, "Acl", "RuleNameList: rule %s is an %s rule; ACL %s is of AclType %s", name, fam, acl.Str("AclName"), typ)
				}
			}
			return nil
		})
	},
}

// firstAclClash is the first error check finds in an ACL of cfg.
func firstAclClash(cfg View, check func(acl Object) error) error {
	var clash error
	err := cfg.Each("Acl", func(_ string, acl Object) bool {
		clash = check(acl)
		return clash == nil
	})
	return cmpErr(err, clash)
}

// aclNotOnLAGMember: a LAG's member port's packets are the LAG's: an ACL
// applies to the LAG.
var aclNotOnLAGMember = Constraint{
	Name:  "an ACL is not applied to a LAG's member port",
	Kinds: []string{"Acl", "LaPortChannel"},
	Check: func(cfg View, changes []Change) error {
		owner, err := lagMembership(cfg)
		if err != nil || len(owner) == 0 {
			return err
		}
		return firstAclClash(cfg, func(acl Object) error {
			for _, in := range acl.List("IntfList") {
				if lag, ok := owner[in]; ok {
					return apierr.Conflict(apierr.CodeConflict, "Acl", "IntfList: port %s is a member of %s: ACL %s applies to the LAG's traffic through %s, not through a member port", in, lag, acl.Str("AclName"), lag)
				}
			}
			return nil
		})
	},
}

// oneAclPerInterface: an interface has at most one ACL of a type per
// direction (the first that matches decides, so a second would be
// ambiguous).
var oneAclPerInterface = Constraint{
	Name:  "an interface has at most one ACL of a type per direction",
	Kinds: []string{"Acl"},
	Check: func(cfg View, changes []Change) error {
		taken := map[[3]string]string{}
		return firstAclClash(cfg, func(acl Object) error {
			for _, in := range acl.List("IntfList") {
				slot := [3]string{in, acl.Str("Direction"), acl.Str("AclType")}
				if other, ok := taken[slot]; ok {
					a, b := min(other, acl.Str("AclName")), max(other, acl.Str("AclName"))
					return apierr.Conflict(apierr.CodeConflict, "Acl", "IntfList: %s would have two %s ACLs of type %s, %s and %s; an interface has one per direction and type", in, slot[1], slot[2], a, b)
				}
				taken[slot] = acl.Str("AclName")
			}
			return nil
		})
	},
}

// The services of swmgr's own listeners a control-plane ACL rule may name.
var controlPlaneServices = []string{"HTTPS", "GNMI", "SSH"}

// controlPlaneAcl is swmgr's own kind (FlexSwitch's nearest is IpTableAcl,
// which names a port number and no service): who may reach the switch's
// management listeners.
func controlPlaneAcl() *Kind {
	return &Kind{
		Name: "ControlPlaneAclRule", Class: Config,
		CLI: &CLICommand{Words: []string{"control-plane", "acl"}, Prompt: []string{"cp-acl"}},
		Doc: "A rule of the control-plane ACL: which sources may reach one of swmgr's own listeners (HTTPS: the REST API and the web page, GNMI, SSH: the host's sshd) on the switch. Rules are looked at in Sequence order, the first that matches decides, and a connection no rule matches is accepted. " +
			"Connections over the loopback interface are always accepted, before any rule: no rule can lock out the switch's own clients (swmgr cli on the switch).",
		Fields: []*Field{
			{Name: "Name", Type: String, Key: true, Format: FormatObjName, Doc: "the rule's name"},
			{Name: "Sequence", Type: Int, Required: true, Range: rng(1, 65535), Doc: "its place: lower first; two rules do not share one"},
			{Name: "Service", Type: String, Required: true, Enum: controlPlaneServices, Doc: "the listener: HTTPS (REST and the web page), GNMI, SSH"},
			{Name: "SourceIp", Type: String, Format: FormatIPAddr, Doc: "the source address, IPv4 or IPv6; \"\": any (both families)"},
			{Name: "SourceMask", Type: String, Format: FormatAclMask, Doc: "SourceIp's prefix length or IPv4 mask"},
			{Name: "Action", Type: String, Default: AclAllow, Enum: []string{AclAllow, AclDeny}},
		},
		Check: func(o Object) error {
			if o.Str("SourceIp") == "" && o.Str("SourceMask") != "" {
				return apierr.BadRequest(apierr.CodeInvalidValue, "ControlPlaneAclRule", "SourceMask", "SourceMask: a mask needs an address (SourceIp)")
			}
			if _, ok := AclPrefix(o, "SourceIp", "SourceMask"); !ok {
				return apierr.BadRequest(apierr.CodeInvalidValue, "ControlPlaneAclRule", "SourceMask", "SourceMask: %s is longer than SourceIp's address allows", o.Str("SourceMask"))
			}
			return nil
		},
		Constraints: []Constraint{{
			Name:  "control-plane ACL rules have distinct Sequences",
			Kinds: []string{"ControlPlaneAclRule"},
			Check: func(cfg View, changes []Change) error {
				seen := map[int64]string{}
				var clash error
				err := cfg.Each("ControlPlaneAclRule", func(key string, o Object) bool {
					if other, ok := seen[o.Int("Sequence")]; ok {
						names := []string{other, key}
						slices.Sort(names)
						clash = apierr.Conflict(apierr.CodeConflict, "ControlPlaneAclRule", "Sequence: %s and %s both have Sequence %d", names[0], names[1], o.Int("Sequence"))
						return false
					}
					seen[o.Int("Sequence")] = key
					return true
				})
				return cmpErr(err, clash)
			},
		}},
	}
}
