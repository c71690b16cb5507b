package model

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
)

// ParseQueryString parses a raw query string strictly. net/url's parser
// drops what it cannot decode ("dry_run=true%", "dry_run=true;",
// "dry_run%=true") and callers would silently act without that parameter —
// a dry run would write for real — so here any pair that does not decode,
// an empty or non-UTF-8 name or value, and a parameter given more than once
// (unless repeatable says it may be) is a 400. Nothing is ever "last one
// wins".
func ParseQueryString(raw string, repeatable func(name string) bool) (url.Values, error) {
	q := url.Values{}
	if raw == "" {
		return q, nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue // "a=1&&b=2": an empty pair says nothing
		}
		if strings.Contains(pair, ";") {
			return nil, badQuery("%q has a ';': parameters are separated by '&' (a literal ';' is written %%3B)", pair)
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return nil, badQuery("the parameter name %q is not valid percent-encoding (%v)", rawName, err)
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, badQuery("the value of %q, %q, is not valid percent-encoding (%v)", name, rawValue, err)
		}
		if name == "" {
			return nil, badQuery("%q has no parameter name", pair)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(value) {
			return nil, badQuery("parameter %q is not valid UTF-8", rawName)
		}
		if _, dup := q[name]; dup && (repeatable == nil || !repeatable(name)) {
			e := badQuery("%s is given more than once; give it once", name)
			e.Field = name
			return nil, e
		}
		q[name] = append(q[name], value)
	}
	return q, nil
}

func badQuery(format string, args ...any) *apierr.Error {
	e := apierr.BadRequest(apierr.CodeMalformedQuery, "", "", format, args...)
	e.Message = "malformed query string: " + e.Message
	return e
}
