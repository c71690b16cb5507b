package model

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Routing policy: FlexSwitch's generic policy kinds (PolicyPrefixSet,
// PolicyCondition, PolicyStmt, PolicyDefinition), with the fields and
// defaults of its SDK. A PolicyDefinition is what BGP names: a neighbor's
// or peer group's AdjRIBInFilter/AdjRIBOutFilter and BGPGlobal's
// Redistribution Policy. Every name is a routing-name (the routing daemon
// takes the names as words of its commands) and every link between them is
// a declared reference, so an object in use cannot be deleted and a
// missing one cannot be named. The SDK's older BGPPolicy* forms are not
// declared: docs/routing.md says why.

// The values of a prefix's MaskLengthRange: "exact", or "<lo>-<hi>".
const maskExact = "exact"

var (
	// FormatIPPrefix is a network prefix of either family, without host
	// bits: what a route is.
	FormatIPPrefix = &Format{
		Name: "ip-prefix", Doc: "IPv4 or IPv6 network prefix (no host bits), like 10.1.0.0/16 or 2001:db8::/32", Hint: "<A.B.C.D/M|X:X::X/M>", Sample: "10.1.0.0/16",
		Check: func(s string) string {
			_, why := parseIPPrefix(s)
			return why
		},
		Canonical: func(s string) string {
			if p, why := parseIPPrefix(s); why == "" {
				return p.String()
			}
			return s
		},
	}
	// FormatMaskLengthRange is FlexSwitch's MaskLengthRange: the prefix
	// lengths a prefix matches, "exact" (its own) or "lo-hi".
	FormatMaskLengthRange = &Format{
		Name: "mask-length-range", Doc: "exact, or the prefix lengths matched as lo-hi (lo..hi is read too), like 24-32", Hint: "<exact|lo-hi>", Sample: "24-32",
		Check: func(s string) string {
			_, _, why := parseMaskLengthRange(s)
			return why
		},
		Canonical: func(s string) string {
			lo, hi, why := parseMaskLengthRange(s)
			switch {
			case why != "":
				return s
			case lo < 0:
				return maskExact
			}
			return fmt.Sprintf("%d-%d", lo, hi)
		},
	}
)

// parseIPPrefix reads a network prefix of either family (the IPv6 side as
// every IPv6 field reads it: no zone, no mapped or dotted form).
func parseIPPrefix(s string) (netip.Prefix, string) {
	const want = "a network prefix like 10.1.0.0/16 or 2001:db8::/32"
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return netip.Prefix{}, want + " (the /length is missing)"
	}
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		if a, why := parseIPv6(addr); why != "" {
			return netip.Prefix{}, want + ": " + why
		} else if a.Is4() {
			return netip.Prefix{}, want
		}
	}
	p, err := netip.ParsePrefix(addr + "/" + bits)
	if err != nil || strings.HasPrefix(bits, "0") && bits != "0" {
		return netip.Prefix{}, want
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Sprintf("%s without host bits (%s, not %s)", want, p.Masked(), s)
	}
	return p, ""
}

// parseMaskLengthRange reads "exact" (lo, hi = -1) or "lo-hi"/"lo..hi"
// with 0 <= lo <= hi <= 128.
func parseMaskLengthRange(s string) (lo, hi int, why string) {
	const want = "exact, or the prefix lengths as lo-hi with lo <= hi, like 24-32"
	if strings.EqualFold(s, maskExact) {
		return -1, -1, ""
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		a, b, ok = strings.Cut(s, "..")
	}
	if !ok {
		return 0, 0, want
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo < 0 || hi > 128 || lo > hi {
		return 0, 0, want
	}
	return lo, hi, ""
}

// checkMaskRange checks a MaskLengthRange against its prefix: the lengths
// lie between the prefix's own and the family's longest.
func checkMaskRange(kind, field, prefix, rng string) error {
	if prefix == "" || rng == "" || rng == maskExact {
		return nil
	}
	p, why := parseIPPrefix(prefix)
	if why != "" {
		return nil // the prefix's own check says it
	}
	lo, hi, _ := parseMaskLengthRange(rng)
	if lo < p.Bits() || hi > p.Addr().BitLen() {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s: %s does not fit %s: the lengths must lie within %d-%d", field, rng, prefix, p.Bits(), p.Addr().BitLen())
	}
	return nil
}

func policyKinds() []*Kind {
	return []*Kind{
		{
			Name: "PolicyPrefixSet", Class: Config,
			Doc: "A named list of prefixes (FRR's prefix-list): a PolicyCondition of type MatchDstIpPrefix or MatchSrcIpPrefix matches a route in any of them. A set in use cannot be deleted.",
			CLI: &CLICommand{Words: []string{"policy", "prefix-set"}, Prompt: []string{"prefix-set"}, Show: []string{"policy", "prefix-set"}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatRoutingName, Doc: "the set's name (FRR's prefix-list)"},
				{Name: "PrefixList", Type: RecordList, Required: true, Doc: "the prefixes, in order; IPv4 and IPv6 ones may be mixed",
					Sub: []*Field{
						{Name: "Prefix", Type: String, Required: true, Format: FormatIPPrefix},
						{Name: "MaskLengthRange", Type: String, Default: maskExact, Format: FormatMaskLengthRange, Doc: "exact: the prefix itself; lo-hi: the prefix's more specifics of those lengths"},
					},
					CheckRecord: func(o Object) error {
						return checkMaskRange("PolicyPrefixSet", "PrefixList.MaskLengthRange", o.Str("Prefix"), o.Str("MaskLengthRange"))
					}},
			},
			Check: func(o Object) error {
				seen := map[string]bool{}
				for _, e := range o.Records("PrefixList") {
					k := e.Str("Prefix") + " " + e.Str("MaskLengthRange")
					if seen[k] {
						return apierr.BadRequest(apierr.CodeInvalidValue, "PolicyPrefixSet", "PrefixList", "PrefixList: %s %s is listed twice", e.Str("Prefix"), e.Str("MaskLengthRange"))
					}
					seen[k] = true
				}
				return nil
			},
		},
		{
			Name: "PolicyCondition", Class: Config,
			Doc: "What a route must be for a PolicyStmt to apply: its destination in a prefix (IpPrefix and MaskLengthRange) or in a PolicyPrefixSet (MatchDstIpPrefix), or the address of the peer it came from (MatchSrcIpPrefix). MatchProtocol is not supported yet: BGPGlobal's Redistribution Sources choose the protocols. A condition in use cannot be deleted.",
			CLI: &CLICommand{Words: []string{"policy", "condition"}, Prompt: []string{"condition"}, Show: []string{"policy", "condition"}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatRoutingName},
				{Name: "ConditionType", Type: String, Required: true, Enum: []string{"MatchProtocol", "MatchDstIpPrefix", "MatchSrcIpPrefix"}},
				{Name: "Protocol", Type: String, Enum: []string{"", "CONNECTED", "STATIC", "BGP", "OSPF"}, Doc: "FlexSwitch's protocol of MatchProtocol, which is not supported yet; \"\" with the other types"},
				{Name: "IpPrefix", Type: String, Format: FormatIPPrefix, Doc: "with MatchDstIpPrefix or MatchSrcIpPrefix, instead of PrefixSet"},
				{Name: "MaskLengthRange", Type: String, Format: FormatMaskLengthRange, Doc: "with IpPrefix; \"\" is exact"},
				{Name: "PrefixSet", Type: String, Format: FormatRoutingName, Ref: "PolicyPrefixSet", Doc: "with MatchDstIpPrefix or MatchSrcIpPrefix, instead of IpPrefix"},
			},
			Check: checkPolicyCondition,
		},
		{
			Name: "PolicyStmt", Class: Config,
			Doc: "A policy statement: when a route meets its Conditions (all or any of them, MatchConditions; no condition: every route), its Action (permit or deny) decides. A statement in use cannot be deleted.",
			CLI: &CLICommand{Words: []string{"policy", "statement"}, Prompt: []string{"statement"}, Show: []string{"policy", "statement"}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatRoutingName},
				{Name: "Conditions", Type: StringList, Required: true, Format: FormatRoutingName, Ref: "PolicyCondition", Doc: "the PolicyConditions; [] matches every route"},
				{Name: "Action", Type: String, Default: "deny", Enum: []string{"permit", "deny"}},
				{Name: "MatchConditions", Type: String, Default: "all", Enum: []string{"all", "any"}},
			},
			Constraints: []Constraint{conditionsFit},
		},
		{
			Name: "PolicyDefinition", Class: Config,
			Doc: "A routing policy (FRR's route-map): its statements in Priority order. MatchType any: the first statement whose conditions a route meets decides; all: every statement is applied in turn, a route is permitted when one permit statement and no deny statement matches it. A route no statement matches is denied. BGP names a policy in a neighbor's or peer group's AdjRIBInFilter/AdjRIBOutFilter and in BGPGlobal's Redistribution; a policy in use cannot be deleted.",
			CLI: &CLICommand{Words: []string{"policy", "definition"}, Prompt: []string{"policy"}, Show: []string{"policy", "definition"}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatRoutingName, Doc: "the policy's name (FRR's route-map)"},
				{Name: "Priority", Type: Int, Required: true, Range: rng(0, 2147483647), Doc: "FlexSwitch's order among policies applied together; each BGP attachment takes one policy, so it orders nothing there"},
				{Name: "StatementList", Type: RecordList, Required: true, Doc: "the statements, applied by ascending Priority",
					Sub: []*Field{
						{Name: "Priority", Type: Int, Required: true, Range: rng(0, 2147483647)},
						{Name: "Statement", Type: String, Required: true, Format: FormatRoutingName, Ref: "PolicyStmt"},
					}},
				{Name: "MatchType", Type: String, Default: "all", Enum: []string{"all", "any"}},
				{Name: "PolicyType", Type: String, Default: "ALL", Enum: []string{"BGP", "OSPF", "ALL"}},
			},
			Check: checkPolicyDefinition,
		},
	}
}

func checkPolicyCondition(o Object) error {
	const kind = "PolicyCondition"
	bad := func(field, format string, a ...any) error {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, field, field+": "+format, a...)
	}
	prefix, set := o.Str("IpPrefix"), o.Str("PrefixSet")
	switch o.Str("ConditionType") {
	case "MatchProtocol":
		// FRR's bgpd (8.4) has no match on the protocol a route came
		// from; BGPGlobal's Redistribution Sources choose the protocols
		// whose routes BGP takes, each with its own policy.
		return bad("ConditionType", "MatchProtocol is not supported yet (the routing daemon's BGP cannot match the protocol a route came from); choose the protocols with BGPGlobal's Redistribution Sources, each with its Policy")
	default:
		switch {
		case prefix == "" && set == "":
			return bad("IpPrefix", "%s needs IpPrefix (with MaskLengthRange) or PrefixSet", o.Str("ConditionType"))
		case prefix != "" && set != "":
			return bad("PrefixSet", "give IpPrefix or PrefixSet, not both")
		case o.Str("Protocol") != "":
			return bad("Protocol", "Protocol is for MatchProtocol; leave it \"\"")
		case set != "" && o.Str("MaskLengthRange") != "":
			return bad("MaskLengthRange", "goes with IpPrefix; a PrefixSet's prefixes carry their own")
		}
	}
	return checkMaskRange(kind, "MaskLengthRange", prefix, o.Str("MaskLengthRange"))
}

func checkPolicyDefinition(o Object) error {
	const kind = "PolicyDefinition"
	if o.Str("PolicyType") == "OSPF" {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "PolicyType", "PolicyType: OSPF is not supported yet (swmgr runs no OSPF); use BGP or ALL")
	}
	list := o.Records("StatementList")
	if len(list) == 0 {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, "StatementList", "StatementList: give at least one statement ({\"Priority\": 1, \"Statement\": \"<PolicyStmt>\"})")
	}
	prios, stmts := map[int64]string{}, map[string]bool{}
	for _, e := range list {
		p, s := e.Int("Priority"), e.Str("Statement")
		if other, ok := prios[p]; ok {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "StatementList", "StatementList: %s and %s both have Priority %d; statements are ordered by it", other, s, p)
		}
		if stmts[s] {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, "StatementList", "StatementList: %s is listed twice", s)
		}
		prios[p], stmts[s] = s, true
	}
	return nil
}

// conditionsFit: a statement that needs all its conditions holds at most
// one of each kind (the destination prefix of a family, the source prefix
// of a family), as the routing daemon's policy entry does,
// and a prefix set a condition names holds one family (a condition
// matches IPv4 or IPv6 routes). Both backends refuse alike, before
// anything is applied.
var conditionsFit = Constraint{
	Name:  "a statement's conditions fit one policy entry",
	Kinds: []string{"PolicyPrefixSet", "PolicyCondition", "PolicyStmt"},
	Check: func(cfg View, changes []Change) error {
		family := func(prefix string) string {
			if strings.Contains(prefix, ":") {
				return "IPv6"
			}
			return "IPv4"
		}
		// kindOf is a condition's kind of match, or a refusal.
		kindOf := func(name string) (string, error) {
			c := cfg.Get("PolicyCondition", name)
			if c == nil {
				return "", nil // the reference check names it
			}
			t := c.Str("ConditionType")
			if p := c.Str("IpPrefix"); p != "" {
				return t + " " + family(p), nil
			}
			set := cfg.Get("PolicyPrefixSet", c.Str("PrefixSet"))
			fams := map[string]bool{}
			for _, e := range set.Records("PrefixList") {
				fams[family(e.Str("Prefix"))] = true
			}
			if len(fams) > 1 {
				return "", apierr.BadRequest(apierr.CodeInvalidValue, "PolicyCondition", "PrefixSet", "PrefixSet: %s holds IPv4 and IPv6 prefixes, and condition %s matches one family; split the set", c.Str("PrefixSet"), name)
			}
			for f := range fams {
				return t + " " + f, nil
			}
			return t, nil
		}
		var bad error
		err := cfg.Each("PolicyCondition", func(name string, c Object) bool {
			if c.Str("PrefixSet") != "" {
				_, bad = kindOf(name)
			}
			return bad == nil
		})
		if err != nil || bad != nil {
			return cmpErr(err, bad)
		}
		err = cfg.Each("PolicyStmt", func(name string, s Object) bool {
			if s.Str("MatchConditions") == "any" {
				return true
			}
			seen := map[string]string{}
			for _, c := range s.List("Conditions") {
				k, _ := kindOf(c)
				if other, ok := seen[k]; ok && k != "" {
					bad = apierr.BadRequest(apierr.CodeInvalidValue, "PolicyStmt", "Conditions", "Conditions: %s and %s are both %s conditions, and MatchConditions all needs a route to meet both, which one policy entry cannot say; put their prefixes in one PolicyPrefixSet, or use MatchConditions any", other, c, k)
					return false
				}
				seen[k] = c
			}
			return true
		})
		return cmpErr(err, bad)
	},
}

// The OpenConfig paths of the policy kinds (openconfig-routing-policy),
// read only: a prefix set's prefixes, a policy's statements.
const (
	ocPrefixSetPath = "/routing-policy/defined-sets/prefix-sets/prefix-set[name=@Name]"
	ocPrefixPath    = ocPrefixSetPath + "/prefixes/prefix[ip-prefix=@PrefixList.Prefix][masklength-range=@PrefixList.MaskLengthRange:masklen]"
	ocPolicyPath    = "/routing-policy/policy-definitions/policy-definition[name=@Name]"
	ocStatementPath = ocPolicyPath + "/statements/statement[name=@StatementList.Statement]"
)

func policyOpenConfigLeaves() []OpenConfigLeaf {
	return []OpenConfigLeaf{
		ocState(ocPrefixSetPath+"/state/name", "PolicyPrefixSet", "Name", ""),
		ocState(ocPrefixPath+"/state/ip-prefix", "PolicyPrefixSet", "PrefixList.Prefix", ""),
		ocState(ocPrefixPath+"/state/masklength-range", "PolicyPrefixSet", "PrefixList.MaskLengthRange", "masklen"),
		ocState(ocPolicyPath+"/state/name", "PolicyDefinition", "Name", ""),
		ocState(ocStatementPath+"/state/name", "PolicyDefinition", "StatementList.Statement", ""),
	}
}
