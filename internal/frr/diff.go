package frr

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var routerRE = regexp.MustCompile(`^router bgp ([0-9]+)(?: vrf (\S+))?$`)

// parseRunning extracts the `router bgp` stanzas from FRR's running
// configuration; everything else (zebra's, other daemons') is not ours.
func parseRunning(text string) []block {
	var out []block
	var cur *block
	var af *[]string // the address family's lines being read; nil outside one
	inAF, otherAF := false, false
	var vni []string // the lines of an EVPN VNI block being read
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \r")
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if m := routerRE.FindStringSubmatch(line); m != nil {
				asn, _ := strconv.ParseUint(m[1], 10, 32)
				vrf := m[2]
				if vrf == "" {
					vrf = DefaultVRF
				}
				out = append(out, block{vrf: vrf, asn: uint32(asn)})
				cur = &out[len(out)-1]
			}
			continue
		}
		switch {
		case trimmed == "" || trimmed == "!":
		case line == "exit" || !strings.HasPrefix(line, " "):
			cur, inAF, otherAF = nil, false, false
		case trimmed == "exit-address-family":
			inAF, otherAF = false, false
		case strings.HasPrefix(trimmed, "address-family "):
			// IPv4 and IPv6 unicast and L2VPN EVPN are ours; other
			// families are left alone.
			inAF, otherAF = true, false
			switch trimmed {
			case "address-family ipv4 unicast":
				af = &cur.af
			case "address-family ipv6 unicast":
				af = &cur.af6
			case "address-family l2vpn evpn":
				af = &cur.evpn
			default:
				otherAF = true
			}
		case otherAF:
		case inAF && af == &cur.evpn && strings.HasPrefix(trimmed, "vni "):
			vni = []string{trimmed}
		case inAF && vni != nil && trimmed == "exit-vni":
			n, _ := strconv.ParseUint(strings.TrimPrefix(vni[0], "vni "), 10, 32)
			*af = append(*af, vniBlock(uint32(n), vni[1:]))
			vni = nil
		case inAF && vni != nil:
			vni = append(vni, trimmed)
		case inAF:
			*af = append(*af, trimmed)
		default:
			cur.router = append(cur.router, trimmed)
		}
	}
	return out
}

// neighborOf returns the neighbor or peer group a line configures ("" if
// none).
func neighborOf(line string) string {
	f := strings.Fields(line)
	if len(f) >= 2 && (f[0] == "neighbor" || (f[0] == "no" && len(f) >= 3 && f[1] == "neighbor")) {
		if f[0] == "no" {
			return f[2]
		}
		return f[1]
	}
	return ""
}

// identity is what makes a neighbor the neighbor it is: its remote AS, its
// group, whether it is unnumbered, whether it is a group. When it changes
// the neighbor is deleted and created again (FRR would otherwise reset it
// anyway, and removing `remote-as` alone deletes it).
func identity(b block, name string) string {
	var id []string
	for _, l := range b.router {
		if neighborOf(l) != name {
			continue
		}
		rest := strings.TrimPrefix(l, "neighbor "+name+" ")
		if strings.HasPrefix(rest, "remote-as ") || strings.HasPrefix(rest, "interface") || strings.HasPrefix(rest, "peer-group") {
			id = append(id, rest)
		}
	}
	return strings.Join(id, "|")
}

func neighbors(b block) []string {
	var names []string
	for _, l := range slices.Concat(b.router, b.af, b.af6, b.evpn) {
		if n := neighborOf(l); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

func isGroup(b block, name string) bool {
	return slices.Contains(b.router, "neighbor "+name+" peer-group")
}

// negate is the command that undoes one configuration line.
func negate(line string) string {
	if rest, ok := strings.CutPrefix(line, "no "); ok {
		return rest
	}
	return "no " + line
}

// diff returns the vtysh configuration commands that turn the running
// stanzas into the desired ones, touching only what differs.
func diff(running, desired []block) []string {
	find := func(bs []block, vrf string) *block {
		for i := range bs {
			if bs[i].vrf == vrf {
				return &bs[i]
			}
		}
		return nil
	}
	var cmds []string
	// A VRF instance cannot outlive the default one: when the default is
	// removed or renumbered, every VRF instance goes first and comes back.
	runDef, wantDef := find(running, DefaultVRF), find(desired, DefaultVRF)
	resetAll := runDef != nil && (wantDef == nil || wantDef.asn != runDef.asn)
	var rebuild []block
	for _, r := range running {
		if r.vrf == DefaultVRF {
			continue
		}
		w := find(desired, r.vrf)
		if resetAll || w == nil || w.asn != r.asn {
			cmds = append(cmds, "no "+r.header())
			if w != nil {
				rebuild = append(rebuild, *w)
			}
		}
	}
	if resetAll {
		cmds = append(cmds, "no "+runDef.header())
	}
	if wantDef != nil {
		if runDef == nil || resetAll {
			cmds = append(cmds, whole(*wantDef)...)
		} else {
			cmds = append(cmds, change(*runDef, *wantDef)...)
		}
	}
	for _, w := range desired {
		if w.vrf == DefaultVRF {
			continue
		}
		r := find(running, w.vrf)
		switch {
		case slices.ContainsFunc(rebuild, func(b block) bool { return b.vrf == w.vrf }) || r == nil:
			cmds = append(cmds, whole(w)...)
		default:
			cmds = append(cmds, change(*r, w)...)
		}
	}
	return cmds
}

func whole(b block) []string {
	cmds := append([]string{b.header()}, b.router...)
	cmds = append(cmds, family("ipv4 unicast", b.af)...)
	cmds = append(cmds, family("ipv6 unicast", b.af6)...)
	cmds = append(cmds, family("l2vpn evpn", b.evpn)...)
	return append(cmds, "exit")
}

// family is the commands that enter lines in an address family; none
// for no lines. An EVPN VNI block is entered line by line.
func family(name string, lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	return slices.Concat([]string{" address-family " + name}, expandVNIBlocks(lines), []string{" exit-address-family"})
}

// change turns one running stanza into the desired one of the same AS.
func change(r, w block) []string {
	// Neighbors to delete outright: gone, or their identity changed.
	var drop []string
	for _, n := range neighbors(r) {
		if !slices.Contains(neighbors(w), n) || identity(r, n) != identity(w, n) {
			drop = append(drop, n)
		}
	}
	dropped := func(l string) bool { return slices.Contains(drop, neighborOf(l)) }
	var router []string
	// Members before groups: a group in use cannot be deleted.
	for _, group := range []bool{false, true} {
		for _, n := range drop {
			if isGroup(r, n) != group {
				continue
			}
			if group {
				router = append(router, "no neighbor "+n+" peer-group")
			} else {
				router = append(router, "no neighbor "+n)
			}
		}
	}
	// Sets, not scans: a family of thousands of lines (EVPN's VNIs) is
	// compared in linear time.
	setOf := func(lines []string) map[string]bool {
		m := make(map[string]bool, len(lines))
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	removed := func(have, want []string) (out []string) {
		wanted := setOf(want)
		for i := len(have) - 1; i >= 0; i-- {
			l := have[i]
			if wanted[l] || dropped(l) {
				continue
			}
			out = append(out, negate(l))
		}
		return out
	}
	added := func(have, want []string) (out []string) {
		had := setOf(have)
		for _, l := range want {
			if !had[l] || dropped(l) {
				out = append(out, l)
			}
		}
		return out
	}
	// AF removals go first (they name neighbors the router-level commands
	// may delete); AF additions last (they need the neighbors to exist).
	afRemove, af6Remove, evpnRemove := softReconfigFirst(removed(r.af, w.af)), softReconfigFirst(removed(r.af6, w.af6)), removed(r.evpn, w.evpn)
	router = append(router, removed(r.router, w.router)...)
	router = append(router, added(r.router, w.router)...)
	afAdd, af6Add, evpnAdd := added(r.af, w.af), added(r.af6, w.af6), added(r.evpn, w.evpn)
	if len(router) == 0 && len(afRemove) == 0 && len(afAdd) == 0 && len(af6Remove) == 0 && len(af6Add) == 0 && len(evpnRemove) == 0 && len(evpnAdd) == 0 {
		return nil
	}
	cmds := []string{w.header()}
	cmds = append(cmds, family("ipv4 unicast", afRemove)...)
	cmds = append(cmds, family("ipv6 unicast", af6Remove)...)
	cmds = append(cmds, family("l2vpn evpn", evpnRemove)...)
	cmds = append(cmds, router...)
	cmds = append(cmds, family("ipv4 unicast", afAdd)...)
	cmds = append(cmds, family("ipv6 unicast", af6Add)...)
	cmds = append(cmds, family("l2vpn evpn", evpnAdd)...)
	return append(cmds, "exit")
}

// redact hides neighbor passwords in anything shown to a user or a log.
var passwordRE = regexp.MustCompile(`(password\s+)\S+`)

func redact(s string) string { return passwordRE.ReplaceAllString(s, "${1}<redacted>") }
