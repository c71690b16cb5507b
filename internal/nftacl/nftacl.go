// Package nftacl renders access control lists as nftables scripts for
// `nft -f`, and reads their counters back from `nft -j list table`.
//
// The data-plane ACLs live in one netdev table (Table): one regular chain
// per ACL holding its rules, each rule with its counter, and one base
// chain per interface and direction (the netdev ingress and egress hooks
// of the interface's device) that jumps to the interface's ACLs, each
// guarded by its packet type. A Deny drops; an Allow returns to the base
// chain, whose next ACL (another type's) still looks at the packet; the
// base chains' policy accepts what no rule dropped.
//
// The control-plane ACL lives in an inet table (ControlPlaneTable) on the
// input hook: its first rule always accepts what arrives over the loopback
// interface, so no rule can lock out the switch's own clients.
//
// A script is one nft transaction: the kernel applies all of it or none,
// and a packet meets the rules either before or after it, never a table
// half-changed or empty. Every name written into a script has passed the
// model's formats: chain names are nft identifiers made of an ACL's name
// (letters, digits, '_', '.', '-', as nft's identifiers allow) behind a
// fixed prefix, and the strings (device names, comments, log prefixes) are
// written quoted, holding no quote.
package nftacl

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// The tables swmgr owns.
const (
	Table             = "swmgr_acl"
	ControlPlaneTable = "swmgr_cpacl"
)

// The packet types of an ACL.
const (
	IPv4 = "IP"
	IPv6 = "IPv6"
	MAC  = "MAC"
)

// Ruleset is every ACL the switch applies.
type Ruleset struct {
	ACLs []ACL
	// ControlPlane are the control-plane rules, in order; nil or empty
	// leaves no control-plane table.
	ControlPlane []ControlRule
}

// ACL is one access control list, as the dataplane applies it.
type ACL struct {
	Name      string
	Direction string // IN or OUT
	Type      string // IPv4, IPv6, MAC
	Devices   []string
	Rules     []Rule
}

// Rule is one rule of an ACL: what it matches (a zero field matches
// anything) and its action.
type Rule struct {
	Name             string
	SrcMAC, DstMAC   string
	Src, Dst         netip.Prefix
	Proto            string // TCP, UDP, ICMP, ICMPv6, "" any
	SrcPort, DstPort uint16
	PortMatch        string // NA, EQ, NEQ, LT, GT, RANGE
	MinPort, MaxPort uint16
	DSCP             int // -1 any
	Deny             bool
	Log              bool
}

// ControlRule is one rule of the control-plane ACL.
type ControlRule struct {
	Name  string
	Port  uint16       // the listener's TCP port
	Src   netip.Prefix // invalid: any source
	Allow bool
}

// Chain is the name of an ACL's chain.
func Chain(name, direction string) string { return "acl_" + name + "_" + direction }

// hookChain is the name of the base chain of a device and direction: the
// device's name with what nft's identifiers do not allow written _xHH.
func hookChain(device, direction string) string {
	var b strings.Builder
	b.WriteString("hook_" + direction + "_")
	for _, c := range []byte(device) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_x%02x", c)
	}
	return b.String()
}

// hook is one base chain: a device's ingress or egress and the ACLs it
// jumps to.
type hook struct {
	device, direction string
	jumps             []string // rendered jump rules
}

func (rs Ruleset) hooks() map[string]hook {
	hooks := map[string]hook{}
	acls := slices.Clone(rs.ACLs)
	// MAC ACLs first, then IPv4, then IPv6: a stable order of the jumps.
	order := map[string]int{MAC: 0, IPv4: 1, IPv6: 2}
	slices.SortStableFunc(acls, func(a, b ACL) int { return order[a.Type] - order[b.Type] })
	for _, a := range acls {
		for _, d := range a.Devices {
			name := hookChain(d, a.Direction)
			h := hooks[name]
			h.device, h.direction = d, a.Direction
			h.jumps = append(h.jumps, guard(a.Type)+"jump "+Chain(a.Name, a.Direction))
			hooks[name] = h
		}
	}
	return hooks
}

// guard is the match of an ACL type's packets.
func guard(typ string) string {
	switch typ {
	case IPv4:
		return "meta protocol ip "
	case IPv6:
		return "meta protocol ip6 "
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }

// chains are the rendered rules of every ACL's chain, by chain name.
func (rs Ruleset) chains() map[string][]string {
	out := map[string][]string{}
	for _, a := range rs.ACLs {
		var lines []string
		for _, r := range a.Rules {
			lines = append(lines, r.render(a)...)
		}
		out[Chain(a.Name, a.Direction)] = lines
	}
	return out
}

// maxLogPrefix is the longest log prefix the kernel keeps.
const maxLogPrefix = 127

// render writes a rule's statements: a log rule (rate-limited, no verdict)
// before the counted rule when it logs.
func (r Rule) render(a ACL) []string {
	m := r.match(a.Type)
	verdict := "return"
	if r.Deny {
		verdict = "drop"
	}
	comment := " comment " + quote(r.Name)
	var lines []string
	if r.Log {
		prefix := a.Name + " " + a.Direction + " " + r.Name + ": "
		if len(prefix) > maxLogPrefix {
			prefix = prefix[:maxLogPrefix] // the names are ASCII
		}
		lines = append(lines, m+"limit rate 10/second log prefix "+quote(prefix)+comment)
	}
	return append(lines, m+"counter "+verdict+comment)
}

func (r Rule) match(typ string) string {
	var b strings.Builder
	if r.SrcMAC != "" {
		fmt.Fprintf(&b, "ether saddr %s ", r.SrcMAC)
	}
	if r.DstMAC != "" {
		fmt.Fprintf(&b, "ether daddr %s ", r.DstMAC)
	}
	l3 := "ip"
	if typ == IPv6 {
		l3 = "ip6"
	}
	if r.Src.IsValid() {
		fmt.Fprintf(&b, "%s saddr %s ", l3, r.Src)
	}
	if r.Dst.IsValid() {
		fmt.Fprintf(&b, "%s daddr %s ", l3, r.Dst)
	}
	if r.DSCP >= 0 {
		fmt.Fprintf(&b, "%s dscp %d ", l3, r.DSCP)
	}
	switch r.Proto {
	case "TCP", "UDP":
		l4 := strings.ToLower(r.Proto)
		fmt.Fprintf(&b, "meta l4proto %s ", l4)
		op := map[string]string{"NEQ": "!= ", "LT": "< ", "GT": "> "}[r.PortMatch]
		if r.SrcPort != 0 {
			fmt.Fprintf(&b, "%s sport %s%d ", l4, op, r.SrcPort)
		}
		if r.DstPort != 0 {
			fmt.Fprintf(&b, "%s dport %s%d ", l4, op, r.DstPort)
		}
		if r.PortMatch == "RANGE" {
			fmt.Fprintf(&b, "%s dport %d-%d ", l4, r.MinPort, r.MaxPort)
		}
	case "ICMP":
		b.WriteString("meta l4proto icmp ")
	case "ICMPv6":
		b.WriteString("meta l4proto ipv6-icmp ")
	}
	return b.String()
}

// Script is the nft script that takes the switch from old to want in one
// transaction. old nil: what the kernel has is not known (swmgr's start),
// and the tables are replaced whole. Otherwise only the chains that
// differ are rewritten (flushed and filled in the same transaction), so
// the counters of an unchanged ACL go on counting.
func Script(old *Ruleset, want Ruleset) string {
	var b strings.Builder
	if old == nil {
		// Create (if absent) then delete: the table is gone whatever was
		// there, within the same transaction that makes it again.
		fmt.Fprintf(&b, "table netdev %s {}\ndelete table netdev %s\n", Table, Table)
		fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\n", ControlPlaneTable, ControlPlaneTable)
		old = &Ruleset{}
	}
	fmt.Fprintf(&b, "table netdev %s {}\n", Table)
	oldChains, newChains := old.chains(), want.chains()
	for _, name := range slices.Sorted(maps.Keys(newChains)) {
		if prev, ok := oldChains[name]; ok && slices.Equal(prev, newChains[name]) {
			continue
		}
		fmt.Fprintf(&b, "add chain netdev %s %s\n", Table, name)
		if _, ok := oldChains[name]; ok {
			fmt.Fprintf(&b, "flush chain netdev %s %s\n", Table, name)
		}
		for _, line := range newChains[name] {
			fmt.Fprintf(&b, "add rule netdev %s %s %s\n", Table, name, line)
		}
	}
	oldHooks, newHooks := old.hooks(), want.hooks()
	for _, name := range slices.Sorted(maps.Keys(newHooks)) {
		h := newHooks[name]
		if prev, ok := oldHooks[name]; ok && slices.Equal(prev.jumps, h.jumps) {
			continue
		}
		if _, ok := oldHooks[name]; ok {
			fmt.Fprintf(&b, "flush chain netdev %s %s\n", Table, name)
		} else {
			hookName := map[string]string{"IN": "ingress", "OUT": "egress"}[h.direction]
			fmt.Fprintf(&b, "add chain netdev %s %s { type filter hook %s device %s priority 0; policy accept; }\n", Table, name, hookName, quote(h.device))
		}
		for _, j := range h.jumps {
			fmt.Fprintf(&b, "add rule netdev %s %s %s\n", Table, name, j)
		}
	}
	// A chain is added before it is deleted: the add does nothing to one
	// that exists, and makes the delete succeed where the kernel already
	// removed it (a base chain whose device went, on kernels that remove
	// those).
	for _, name := range slices.Sorted(maps.Keys(oldHooks)) {
		if _, ok := newHooks[name]; !ok {
			fmt.Fprintf(&b, "add chain netdev %s %s\ndelete chain netdev %s %s\n", Table, name, Table, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(oldChains)) {
		if _, ok := newChains[name]; !ok {
			fmt.Fprintf(&b, "add chain netdev %s %s\nflush chain netdev %s %s\ndelete chain netdev %s %s\n", Table, name, Table, name, Table, name)
		}
	}
	controlPlane(&b, old.ControlPlane, want.ControlPlane)
	return b.String()
}

// controlPlane writes the control-plane table when its rules changed:
// flushed and filled in the transaction, the loopback's accept first.
func controlPlane(b *strings.Builder, old, want []ControlRule) {
	if slices.Equal(old, want) {
		return
	}
	fmt.Fprintf(b, "table inet %s {}\n", ControlPlaneTable)
	if len(want) == 0 {
		fmt.Fprintf(b, "delete table inet %s\n", ControlPlaneTable)
		return
	}
	if len(old) > 0 {
		fmt.Fprintf(b, "flush chain inet %s input\n", ControlPlaneTable)
	} else {
		fmt.Fprintf(b, "add chain inet %s input { type filter hook input priority 0; policy accept; }\n", ControlPlaneTable)
	}
	fmt.Fprintf(b, "add rule inet %s input iifname \"lo\" accept comment \"loopback\"\n", ControlPlaneTable)
	for _, r := range want {
		src := ""
		if r.Src.IsValid() {
			l3 := "ip"
			if r.Src.Addr().Is6() {
				l3 = "ip6"
			}
			src = fmt.Sprintf("%s saddr %s ", l3, r.Src)
		}
		verdict := "drop"
		if r.Allow {
			verdict = "accept"
		}
		fmt.Fprintf(b, "add rule inet %s input %stcp dport %d counter %s comment %s\n", ControlPlaneTable, src, r.Port, verdict, quote(r.Name))
	}
}
