package frr

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Routing policy in FRR's terms: FlexSwitch's PolicyPrefixSet is a
// prefix-list (an `ip` one for its IPv4 prefixes, an `ipv6` one of the same
// name for its IPv6 ones), its PolicyDefinition a route-map whose entries
// are its statements' (a statement matching all its conditions is one
// entry, one matching any is an entry per condition), and a condition given
// by IpPrefix an implicit prefix-list named "cond:<condition>" (a colon
// no object name has, so it cannot collide with a set).

// Policies are the routing-policy objects, by name.
type Policies struct {
	PrefixSets  []PrefixSet
	Conditions  []Condition
	Statements  []Statement
	Definitions []Definition
}

// PrefixSet is a PolicyPrefixSet.
type PrefixSet struct {
	Name    string
	Entries []PrefixEntry
}

// PrefixEntry is one prefix: MaskLengthRange "exact" ("" too) or "lo-hi".
type PrefixEntry struct{ Prefix, MaskLengthRange string }

// Condition is a PolicyCondition.
type Condition struct {
	Name, Type, Protocol, IpPrefix, MaskLengthRange, PrefixSet string
}

// Statement is a PolicyStmt: Action permit or deny, MatchAny for
// MatchConditions "any".
type Statement struct {
	Name       string
	Conditions []string
	Action     string
	MatchAny   bool
}

// Definition is a PolicyDefinition: its statements already in priority
// order; MatchAny for MatchType "any".
type Definition struct {
	Name       string
	Statements []string
	MatchAny   bool
}

// policyConf is the policy part of FRR's running configuration in its
// normal form: the prefix-list lines and the route-map entries.
type policyConf struct {
	prefixLists []string   // "ip prefix-list N seq S permit P ..." in order
	routeMaps   []routeMap // in name, then sequence order
}

// routeMap is one route-map entry.
type routeMap struct {
	name, action string
	seq          int
	lines        []string
}

func (m routeMap) header() string { return fmt.Sprintf("route-map %s %s %d", m.name, m.action, m.seq) }

// key identifies an entry: FRR keeps one per name and sequence number.
func (m routeMap) key() string { return m.name + " " + strconv.Itoa(m.seq) }

// policyName checks a name FRR takes as a word of its commands (the
// model's routing-name, checked again: nothing unchecked reaches FRR).
func policyName(what, name string) error {
	if !wordRE.MatchString(name) || strings.Contains(name, ":") {
		return fmt.Errorf("%s name %q: use letters, digits and _.@/+- only", what, name)
	}
	return nil
}

// prefixLine is one prefix-list line; len and lengths as FRR prints them
// (ge only above the prefix's own length, le always with ge).
func prefixLine(list string, seq int, e PrefixEntry) (string, error) {
	p, err := netip.ParsePrefix(e.Prefix)
	if err != nil || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return "", fmt.Errorf("prefix %q is not a network prefix", e.Prefix)
	}
	family := "ip"
	if p.Addr().Is6() {
		family = "ipv6"
	}
	line := fmt.Sprintf("%s prefix-list %s seq %d permit %s", family, list, seq, p)
	if e.MaskLengthRange == "" || e.MaskLengthRange == "exact" {
		return line, nil
	}
	lo, hi, ok := parseRange(e.MaskLengthRange)
	if !ok || lo < p.Bits() || hi > p.Addr().BitLen() {
		return "", fmt.Errorf("prefix %s: MaskLengthRange %q must be exact or lo-hi within %d-%d", p, e.MaskLengthRange, p.Bits(), p.Addr().BitLen())
	}
	switch {
	case lo == p.Bits() && hi == p.Bits():
	case lo == p.Bits():
		line += fmt.Sprintf(" le %d", hi)
	default:
		line += fmt.Sprintf(" ge %d le %d", lo, hi)
	}
	return line, nil
}

func parseRange(s string) (lo, hi int, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	return lo, hi, err1 == nil && err2 == nil && lo <= hi
}

// prefixLines renders a list's entries, each family's numbered 5, 10, ...
// (FRR's own step), so a change to one entry is that entry's line only.
func prefixLines(list string, entries []PrefixEntry) ([]string, error) {
	var out []string
	seq := map[bool]int{}
	for _, e := range entries {
		v6 := strings.Contains(e.Prefix, ":")
		seq[v6] += 5
		l, err := prefixLine(list, seq[v6], e)
		if err != nil {
			return nil, fmt.Errorf("prefix set %s: %w", list, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// renderPolicies renders the policies FRR runs.
func (p Policies) render() (policyConf, error) {
	var out policyConf
	var errs []error
	sets := map[string]PrefixSet{}
	for _, s := range p.PrefixSets {
		if err := policyName("prefix set", s.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		lines, err := prefixLines(s.Name, s.Entries)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sets[s.Name] = s
		out.prefixLists = append(out.prefixLists, lines...)
	}
	// match is the route-map line of one condition.
	conds := map[string]string{}
	for _, c := range p.Conditions {
		line, lines, err := conditionMatch(c, sets)
		if err != nil {
			errs = append(errs, fmt.Errorf("condition %s: %w", c.Name, err))
			continue
		}
		conds[c.Name] = line
		out.prefixLists = append(out.prefixLists, lines...)
	}
	stmts := map[string]Statement{}
	for _, s := range p.Statements {
		if err := policyName("statement", s.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		if s.Action != "permit" && s.Action != "deny" {
			errs = append(errs, fmt.Errorf("statement %s: Action %q: use permit or deny", s.Name, s.Action))
			continue
		}
		stmts[s.Name] = s
	}
	for _, d := range p.Definitions {
		maps, err := definitionMaps(d, stmts, conds)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy %s: %w", d.Name, err))
			continue
		}
		out.routeMaps = append(out.routeMaps, maps...)
	}
	if len(errs) > 0 {
		return policyConf{}, errors.Join(errs...)
	}
	out.prefixLists = normalPrefixOrder(out.prefixLists)
	slices.SortStableFunc(out.routeMaps, func(a, b routeMap) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	return out, nil
}

// normalPrefixOrder sorts prefix-list lines as FRR prints them: IPv4
// lists before IPv6 ones, each list's lines by sequence number, lists in
// the order they were defined (kept from the input, which is name order).
func normalPrefixOrder(lines []string) []string {
	v6 := func(l string) bool { return strings.HasPrefix(l, "ipv6 ") }
	slices.SortStableFunc(lines, func(a, b string) int {
		switch {
		case v6(a) != v6(b):
			if v6(a) {
				return 1
			}
			return -1
		}
		return 0
	})
	return lines
}

// conditionMatch is the route-map match line of a condition, and the
// implicit prefix-list lines of one given by IpPrefix.
func conditionMatch(c Condition, sets map[string]PrefixSet) (string, []string, error) {
	if err := policyName("condition", c.Name); err != nil {
		return "", nil, err
	}
	switch c.Type {
	case "MatchDstIpPrefix", "MatchSrcIpPrefix":
	case "MatchProtocol":
		// bgpd 8.4 refuses `match source-protocol` ("Unknown command").
		return "", nil, errors.New("MatchProtocol: FRR's bgpd cannot match the protocol a route came from")
	default:
		return "", nil, fmt.Errorf("ConditionType %q: use MatchDstIpPrefix or MatchSrcIpPrefix", c.Type)
	}
	var list string
	var lines []string
	v6 := false
	switch {
	case c.PrefixSet != "" && c.IpPrefix == "":
		s, ok := sets[c.PrefixSet]
		if !ok {
			return "", nil, fmt.Errorf("prefix set %q does not exist", c.PrefixSet)
		}
		list = s.Name
		for _, e := range s.Entries {
			if strings.Contains(e.Prefix, ":") {
				v6 = true
			} else if v6 {
				return "", nil, fmt.Errorf("prefix set %s mixes IPv4 and IPv6 prefixes: a condition matches one family", s.Name)
			}
		}
		if v6 && slices.ContainsFunc(s.Entries, func(e PrefixEntry) bool { return !strings.Contains(e.Prefix, ":") }) {
			return "", nil, fmt.Errorf("prefix set %s mixes IPv4 and IPv6 prefixes: a condition matches one family", s.Name)
		}
	case c.IpPrefix != "" && c.PrefixSet == "":
		list = "cond:" + c.Name
		l, err := prefixLine(list, 5, PrefixEntry{Prefix: c.IpPrefix, MaskLengthRange: c.MaskLengthRange})
		if err != nil {
			return "", nil, err
		}
		lines = []string{l}
		v6 = strings.HasPrefix(l, "ipv6 ")
	default:
		return "", nil, errors.New("give IpPrefix or PrefixSet")
	}
	family := "ip"
	if v6 {
		family = "ipv6"
	}
	what := "address"
	if c.Type == "MatchSrcIpPrefix" {
		what = "route-source"
	}
	return fmt.Sprintf("match %s %s prefix-list %s", family, what, list), lines, nil
}

// definitionMaps are the route-map entries of a policy: numbered 10, 20,
// ... in statement order. MatchAny (first match decides) is FRR's own
// order; without it (FlexSwitch's "all") a permit entry goes on to the
// next (`on-match next`), so every statement is applied and a deny that
// matches later still denies.
func definitionMaps(d Definition, stmts map[string]Statement, conds map[string]string) ([]routeMap, error) {
	if err := policyName("policy", d.Name); err != nil {
		return nil, err
	}
	if len(d.Statements) == 0 {
		return nil, errors.New("no statement")
	}
	var out []routeMap
	add := func(action string, lines []string) {
		if action == "permit" && !d.MatchAny {
			lines = append(slices.Clone(lines), "on-match next")
		}
		out = append(out, routeMap{name: d.Name, action: action, seq: 10 * (len(out) + 1), lines: lines})
	}
	for _, name := range d.Statements {
		s, ok := stmts[name]
		if !ok {
			return nil, fmt.Errorf("statement %q does not exist", name)
		}
		var lines []string
		for _, c := range s.Conditions {
			line, ok := conds[c]
			if !ok {
				return nil, fmt.Errorf("statement %s: condition %q does not exist", s.Name, c)
			}
			lines = append(lines, line)
		}
		if s.MatchAny && len(lines) > 1 {
			for _, l := range lines {
				add(s.Action, []string{l})
			}
			continue
		}
		// FRR keeps one match of each kind per entry: two of the same
		// kind cannot both be required.
		kinds := map[string]bool{}
		for _, l := range lines {
			k := matchKind(l)
			if kinds[k] {
				return nil, fmt.Errorf("statement %s: MatchConditions all with two conditions of the same kind (%s); FRR matches one of each kind per entry: use a PolicyPrefixSet, or MatchConditions any", s.Name, k)
			}
			kinds[k] = true
		}
		add(s.Action, lines)
		if len(out) > 6553 {
			return nil, errors.New("more than 6553 route-map entries")
		}
	}
	return out, nil
}

// matchKind is a match line without its value ("match ip address prefix-list").
func matchKind(line string) string {
	f := strings.Fields(line)
	return strings.Join(f[:len(f)-1], " ")
}

// parsePolicies extracts swmgr's part of the policy configuration FRR
// prints: every prefix-list line and route-map entry (swmgr owns all of
// them in its bgpd).
func parsePolicies(text string) policyConf {
	var out policyConf
	var cur *routeMap
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \r")
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if strings.HasPrefix(line, " ") && trimmed != "" {
				cur.lines = append(cur.lines, trimmed)
				continue
			}
			out.routeMaps = append(out.routeMaps, *cur)
			cur = nil
		}
		switch {
		case strings.HasPrefix(line, "ip prefix-list ") || strings.HasPrefix(line, "ipv6 prefix-list "):
			out.prefixLists = append(out.prefixLists, line)
		case strings.HasPrefix(line, "route-map "):
			f := strings.Fields(line)
			if len(f) != 4 {
				continue
			}
			seq, err := strconv.Atoi(f[3])
			if err != nil {
				continue
			}
			cur = &routeMap{name: f[1], action: f[2], seq: seq}
		}
	}
	if cur != nil {
		out.routeMaps = append(out.routeMaps, *cur)
	}
	return out
}

// prefixKey identifies a prefix-list line: its family, list and sequence
// number (FRR replaces an entry given again with the same number).
func prefixKey(line string) string {
	f := strings.Fields(line)
	if len(f) < 5 {
		return line
	}
	return strings.Join(f[:5], " ")
}

// diffPolicies returns the commands that turn the running policies into
// the desired ones, in two parts: before (new and changed prefix-lists and
// route-map entries, sent before BGP's changes, which may start to name
// them) and after (what is no longer wanted, sent after BGP stops naming
// it). A changed prefix-list entry is its one line (FRR replaces the entry
// of that sequence number in place); a changed route-map entry is entered
// and only its changed lines sent. Nothing here resets a BGP session: FRR
// applies a changed policy with a route refresh.
func diffPolicies(running, desired policyConf) (before, after []string) {
	have, want, wantKeys := setOfLines(running.prefixLists), setOfLines(desired.prefixLists), map[string]bool{}
	for _, l := range desired.prefixLists {
		wantKeys[prefixKey(l)] = true
		if !have[l] {
			before = append(before, l)
		}
	}
	for _, l := range running.prefixLists {
		if !want[l] && !wantKeys[prefixKey(l)] {
			after = append(after, "no "+l)
		}
	}
	runByKey := map[string]routeMap{}
	for _, m := range running.routeMaps {
		runByKey[m.key()] = m
	}
	wantByKey := map[string]bool{}
	for _, w := range desired.routeMaps {
		wantByKey[w.key()] = true
		r, ok := runByKey[w.key()]
		switch {
		case !ok:
			before = append(before, w.header())
			before = append(before, indent(w.lines)...)
			before = append(before, "exit")
			continue
		case r.action != w.action:
			before = append(before, "no "+r.header(), w.header())
			before = append(before, indent(w.lines)...)
			before = append(before, "exit")
			continue
		}
		var change []string
		for i := len(r.lines) - 1; i >= 0; i-- {
			if !slices.Contains(w.lines, r.lines[i]) {
				change = append(change, " "+negate(r.lines[i]))
			}
		}
		for _, l := range w.lines {
			if !slices.Contains(r.lines, l) {
				change = append(change, " "+l)
			}
		}
		if len(change) > 0 {
			before = append(before, w.header())
			before = append(before, change...)
			before = append(before, "exit")
		}
	}
	for _, r := range running.routeMaps {
		if !wantByKey[r.key()] {
			after = append(after, "no "+r.header())
		}
	}
	return before, after
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = " " + l
	}
	return out
}

func setOfLines(lines []string) map[string]bool {
	m := make(map[string]bool, len(lines))
	for _, l := range lines {
		m[l] = true
	}
	return m
}

// desired is everything swmgr renders into FRR's configuration.
type desired struct {
	bgp    []block
	policy policyConf
}

// renderAll renders the BGP stanzas and the policies.
func (c Config) renderAll() (desired, error) {
	bgp, err := c.render()
	pol, perr := c.Policies.render()
	if err = errors.Join(err, perr); err != nil {
		return desired{}, err
	}
	return desired{bgp: bgp, policy: pol}, nil
}

// parseAll reads swmgr's part of FRR's running configuration.
func parseAll(running string) desired {
	return desired{bgp: parseRunning(running), policy: parsePolicies(running)}
}

// diffAll returns the commands that turn the running configuration into
// the desired one: new policies first (BGP may start to name them), then
// BGP's changes, then the policies BGP no longer names.
func diffAll(running, want desired) []string {
	before, after := diffPolicies(running.policy, want.policy)
	return slices.Concat(before, diff(running.bgp, want.bgp), after)
}
