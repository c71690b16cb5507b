package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Port lists. Every list field whose elements are port names (a StringList
// of FormatPortName or FormatSwitchPort: Vlan.IntfList and UntagIntfList,
// Span.SrcIntfRefList, LaPortChannel.IntfRefList)
// also accepts, in each element, the spellings FlexSwitch's switch daemon
// read: several names joined by commas ("fpPort1,fpPort2s1") and numeric
// ranges ("fpPort1-4" is fpPort1 to fpPort4, "fpPort2s1-4" fpPort2s1 to
// fpPort2s4). The element is replaced by the names it stands for as soon
// as it is read (canonicalValue), so one name per element is what is
// validated, stored, compared and returned. An element that does not expand
// cleanly is kept as sent, and validation says why (portListProblem).

// PortListNote is what the docs say about a port-list field's input.
const PortListNote = "an element may also join names with commas and give numeric ranges (fpPort1,fpPort3-4, fpPort2s1-4); they are stored one name per element"

// PortList reports whether f is a list of port names, which takes the
// comma-joined and ranged spellings.
func (f *Field) PortList() bool { return f.Type == StringList && f.PortNames() }

// PortNames reports whether f (or each of its elements) names a port: of
// FormatPortName, or of FormatSwitchPort (a port or a LAG), whose bound
// copy the registry holds.
func (f *Field) PortNames() bool {
	return f.Format != nil && (f.Format == FormatPortName || f.Format.Name == FormatSwitchPort.Name)
}

// maxPortRange bounds the names one range may stand for: more than a switch
// has ports, few enough that a range cannot make a list of millions.
const maxPortRange = 512

// expandPortElement returns the port names one element stands for; ok is
// false (and why says what is wrong) when the element is neither a port
// name nor a clean list of names and ranges.
func expandPortElement(s string) (names []string, why string) {
	if !strings.ContainsAny(s, ",-") {
		return []string{s}, ""
	}
	for _, part := range strings.Split(s, ",") {
		p := strings.TrimSpace(part)
		if p == "" {
			return nil, "an empty name between commas"
		}
		first, last, isRange := strings.Cut(p, "-")
		if !isRange {
			if !portNameRE.MatchString(p) {
				return nil, fmt.Sprintf("%q, which is not a port name", p)
			}
			names = append(names, p)
			continue
		}
		m := portNameRE.FindStringSubmatch(first)
		if m == nil {
			return nil, fmt.Sprintf("the range %q, whose start %q is not a port name", p, first)
		}
		prefix, from := "fpPort", m[1]
		if m[2] != "" {
			prefix, from = "fpPort"+m[1]+"s", m[2]
		}
		// The end is a number, or the whole name again (fpPort1-fpPort4).
		to := strings.TrimPrefix(last, prefix)
		a, _ := strconv.Atoi(from)
		b, err := strconv.Atoi(to)
		if err != nil || to == "" || to[0] == '+' || to[0] == '-' || !portNameRE.MatchString(prefix+to) {
			return nil, fmt.Sprintf("the range %q, whose end %q is not a number of the same kind of port as %s", p, last, first)
		}
		if b < a {
			return nil, fmt.Sprintf("the range %q, which runs backwards; write %s%d-%d", p, prefix, b, a)
		}
		if b-a+1 > maxPortRange {
			return nil, fmt.Sprintf("the range %q of %d ports, more than a switch has (at most %d in one range)", p, b-a+1, maxPortRange)
		}
		for n := a; n <= b; n++ {
			names = append(names, prefix+strconv.Itoa(n))
		}
	}
	return names, ""
}

// expandPortList replaces each element that expands cleanly by its names;
// it returns l itself when no element is comma-joined or ranged.
func expandPortList(l []string) []string {
	var out []string
	for i, s := range l {
		if !strings.ContainsAny(s, ",-") {
			if out != nil {
				out = append(out, s)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(l)+4), l[:i]...)
		}
		names, why := expandPortElement(s)
		if why != "" {
			out = append(out, s) // validation says why
			continue
		}
		out = append(out, names...)
	}
	if out == nil {
		return l
	}
	return out
}

// portListProblem says what is wrong with an element of a port list that
// is not a port name; "" when it is not comma-joined or ranged either.
func portListProblem(s string) string {
	if !strings.ContainsAny(s, ",-") {
		return ""
	}
	_, why := expandPortElement(s)
	return why
}
