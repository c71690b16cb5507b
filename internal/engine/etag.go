package engine

import (
	"strings"
)

// ifMatchAllows evaluates an If-Match header (RFC 9110 13.1.1) against the
// object's current entity tag: "*" matches any existing object; otherwise
// the header is a comma-separated list of entity tags and matches when any
// of them matches by the strong comparison that If-Match requires — so a
// weak tag (W/"5") never matches. ok is false when the header is not a
// valid list of entity tags.
func ifMatchAllows(header, current string) (match, ok bool) {
	h := strings.TrimSpace(header)
	if h == "*" {
		return true, true
	}
	rest := h
	seen := false
	for {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		if rest[0] == ',' { // empty list elements are allowed (RFC 9110 5.6.1)
			rest = rest[1:]
			continue
		}
		weak := strings.HasPrefix(rest, "W/")
		if weak {
			rest = rest[2:]
		}
		if rest == "" || rest[0] != '"' {
			return false, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return false, false
		}
		tag := rest[:end+2]
		if strings.ContainsAny(tag[1:len(tag)-1], " \t\x7f") {
			return false, false
		}
		seen = true
		if !weak && tag == current {
			match = true
		}
		rest = strings.TrimLeft(rest[end+2:], " \t")
		if rest != "" && rest[0] != ',' {
			return false, false
		}
	}
	return match, seen
}
