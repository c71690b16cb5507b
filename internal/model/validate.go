package model

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Validate checks every field of a complete object against its declaration,
// then the kind's own cross-field check. Enum values given in another letter
// case are rewritten to the declared spelling.
func (k *Kind) Validate(o Object) error {
	for _, f := range k.Fields {
		v, ok := o[f.Name]
		if !ok {
			continue
		}
		nv, err := f.validate(k.Name, v)
		if err != nil {
			return err
		}
		o[f.Name] = nv
	}
	if k.Check != nil {
		return k.Check(o)
	}
	return nil
}

// ValidateGiven checks each given field against its declaration, without
// the kind's cross-field check: for fields that come with a by-key read or
// delete, such as FlexSwitch's IntfRef "" of a BGP neighbor, which name the
// object without being swmgr's keys.
func (k *Kind) ValidateGiven(o Object) error {
	for _, f := range k.Fields {
		if v, ok := o[f.Name]; ok {
			if _, err := f.validate(k.Name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// RequireFields checks that a create (or an action) gives every required
// field.
func (k *Kind) RequireFields(given Object) error {
	what := "create a " + k.Name
	if k.Class == Action { // an action is run, nothing is created
		what = "run " + k.Name
	}
	for _, f := range k.Fields {
		if v, ok := given[f.Name]; ok {
			if f.Required && f.Secret == Transient && v == "" {
				return apierr.BadRequest(apierr.CodeMissingField, k.Name, f.Name, "%s is required to %s and cannot be empty", f.Name, what)
			}
			continue
		}
		if f.Required || (f.Key && f.Default == nil) {
			return apierr.BadRequest(apierr.CodeMissingField, k.Name, f.Name, "%s is required to %s", f.Name, what)
		}
	}
	return nil
}

// ValidateValue checks one field value, returning its canonical form.
func (f *Field) validate(kind string, v any) (any, error) {
	bad := func(format string, args ...any) error {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: %s", f.Name, fmt.Sprintf(format, args...))
	}
	if err := f.checkType(v); err != nil {
		return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s: %v", f.Name, err)
	}
	v = f.canonicalValue(v)
	if f.Type == String || f.Type == StringList {
		if err := f.CheckText(kind, v); err != nil {
			return nil, err
		}
	}
	if f.NotYet != "" && !EqualValue(v, f.zero()) {
		return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: not supported yet (%s); leave it at its default %s", f.Name, f.NotYet, string(f.appendValue(nil, f.zero())))
	}
	switch f.Type {
	case String:
		s := v.(string)
		if f.MaxLen > 0 && len(s) > f.MaxLen {
			return nil, bad("%d characters is too long; at most %d", len(s), f.MaxLen)
		}
		if len(f.Enum) > 0 {
			for _, e := range f.Enum {
				if strings.EqualFold(e, s) {
					return e, nil
				}
			}
			return nil, bad("%q is not allowed; use one of %s", s, strings.Join(f.Enum, ", "))
		}
		// "" leaves an optional field unset — unless the field has a
		// default: then "" is not "the default" but an invalid value
		// (Hostname "", SourceIntf ""). A key whose default is "" may be
		// "" (BGPv4Neighbor's NeighborAddress of a neighbor by interface).
		if s == "" && !f.Required && (f.Default == "" || (f.Default == nil && !f.Key)) {
			return s, nil // unset optional value
		}
		if msg := f.checkFormat(s); msg != "" {
			return nil, bad("%q is not %s", s, msg)
		}
	case Int:
		n := v.(int64)
		if f.Range != nil && (n < f.Range.Min || n > f.Range.Max) {
			return nil, bad("%d is out of range; use %d..%d", n, f.Range.Min, f.Range.Max)
		}
	case StringList:
		seen := map[string]bool{}
		for _, s := range v.([]string) {
			if why := portListProblem(s); why != "" && f.PortList() {
				return nil, bad("element %q holds %s", s, why)
			}
			if msg := f.checkFormat(s); msg != "" {
				return nil, bad("element %q is not %s", s, msg)
			}
			if seen[s] {
				return nil, bad("%q is listed twice", s)
			}
			seen[s] = true
		}
	case Record:
		return f.validateRecord(kind, v.(Object))
	case RecordList:
		return f.validateRecordList(kind, v.([]Object))
	}
	return v, nil
}

func (f *Field) checkType(v any) error {
	ok := false
	switch f.Type {
	case String:
		_, ok = v.(string)
	case Int:
		_, ok = v.(int64)
	case Bool:
		_, ok = v.(bool)
	case StringList:
		_, ok = v.([]string)
	case Record:
		_, ok = v.(Object)
	case RecordList:
		_, ok = v.([]Object)
	case Document:
		_, ok = v.(json.RawMessage)
	}
	if !ok {
		return fmt.Errorf("want %s, have %T", f.Type, v)
	}
	return nil
}

var (
	portNameRE = regexp.MustCompile(`^fpPort([1-9][0-9]{0,3})(?:s([1-9]))?$`)
	userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,30}[$]?$`)
	macRE      = regexp.MustCompile(`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`)
	objNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)
	labelRE    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// checkFormat returns "" when s has the field's format (or the field has
// none), else what s should have been.
func (f *Field) checkFormat(s string) string {
	if f.Format == nil {
		return ""
	}
	return f.Format.Check(s)
}

// checkInterfaceCIDR accepts an interface address with its prefix length,
// refusing the network and broadcast addresses of subnets that have them.
func checkInterfaceCIDR(s string) string {
	const want = "an IPv4 interface address with prefix length, like 10.1.1.1/30"
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return want
	}
	a := p.Addr()
	if a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return want + " (not an unspecified, multicast or broadcast address)"
	}
	if a.IsLoopback() {
		return want + " (not a loopback address 127.0.0.0/8: those belong to the host's lo, not to a front-panel port)"
	}
	if p.Bits() <= 30 {
		if a == p.Masked().Addr() {
			return want + " (this is the subnet's network address)"
		}
		b := a.As4()
		host := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if mask := uint32(1)<<(32-p.Bits()) - 1; host&mask == mask {
			return want + " (this is the subnet's broadcast address)"
		}
	}
	return ""
}

// isUnicastHost: an address a peer (an NTP server, a BGP neighbor) can
// have. 0.0.0.0 / ::, the limited broadcast and multicast addresses name no
// single host.
func isUnicastHost(a netip.Addr) bool {
	return !a.IsUnspecified() && !a.IsMulticast() && a != netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

// IsControl reports the runes of Unicode category C: controls (C0, DEL and
// C1 such as U+0085 NEXT LINE), format characters (U+200B, U+202E, ...),
// surrogates, private use and unassigned code points. None has a place in a
// password: they are invisible, differ between keyboards and terminals, and
// some end a line for one tool and not for another.
func IsControl(r rune) bool {
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

func isHostname(s string, fqdn bool) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if fqdn && len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !labelRE.MatchString(l) {
			return false
		}
	}
	// A name whose last label is numeric would be read as an address.
	_, err := strconv.Atoi(labels[len(labels)-1])
	return err != nil
}

// ParseASN reads an AS number in asplain or asdot form.
func ParseASN(s string) (uint32, bool) {
	if hi, lo, dot := strings.Cut(s, "."); dot {
		h, ok1 := parseDecimal(hi, 65535)
		l, ok2 := parseDecimal(lo, 65535)
		if !ok1 || !ok2 || h<<16|l == 0 {
			return 0, false
		}
		return uint32(h<<16 | l), true
	}
	n, ok := parseDecimal(s, 4294967295)
	return uint32(n), ok && n != 0
}

func parseDecimal(s string, max uint64) (uint64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n <= max
}

// ParsePortName splits fpPort<N>[s<M>] into N and M (M is 0 for a front-panel port).
func ParsePortName(s string) (port, sub int, ok bool) {
	m := portNameRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	port, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		sub, _ = strconv.Atoi(m[2])
	}
	return port, sub, true
}

// ParseFileURI splits a file URI of the contract: "///abs/path" and
// "file:///abs/path" are local (host ""); "sftp://[user@]host[:port]/path" is
// remote, with host holding "[user@]host[:port]".
func ParseFileURI(s string) (host, path string, err error) {
	bad := fmt.Errorf("a file URI: ///abs/path, file:///abs/path or sftp://[user@]host[:port]/path")
	switch {
	case strings.HasPrefix(s, "///"):
		path = s[2:]
	case strings.HasPrefix(s, "file:///"):
		path = s[7:]
	case strings.HasPrefix(s, "sftp://"):
		rest := s[len("sftp://"):]
		i := strings.IndexByte(rest, '/')
		if i <= 0 {
			return "", "", bad
		}
		host, path = rest[:i], rest[i:]
		hp := host
		if at := strings.LastIndexByte(hp, '@'); at >= 0 {
			hp = hp[at+1:]
		}
		h := hp
		if hh, port, found := strings.Cut(hp, ":"); found && !strings.HasPrefix(hp, "[") {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return "", "", bad
			}
			h = hh
		}
		h = strings.Trim(h, "[]")
		if _, err := netip.ParseAddr(h); err != nil && !isHostname(h, false) {
			return "", "", bad
		}
	default:
		return "", "", bad
	}
	if len(path) < 2 || strings.ContainsRune(path, 0) || strings.Contains(path+"/", "/../") {
		return "", "", bad
	}
	return host, path, nil
}
