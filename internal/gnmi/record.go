package gnmi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/engine"
)

// parseRecord reads what subscriptions use of a change feed's revision
// record (engine.Revision as JSON): its time and its changes, each change's
// Before and After as they are in data (not copied; the feed's events are
// never modified). It scans the record once, without encoding/json's
// reflection, validation pass and copies, which cost 5x more (a commit
// changing one port: 8.5 us against 1.5), for every commit while anyone
// subscribes. ok is false for anything but a JSON object of that shape
// (or one that encoding/json would read differently: names in another
// case, Changes twice); the caller then decodes it with encoding/json.
func parseRecord(data []byte) (t string, changes []engine.Diff, ok bool) {
	s := &scanner{b: data}
	seen := false
	whole := s.object(func(key []byte) bool {
		switch string(key) {
		case "Time":
			t, ok = s.str()
			return ok
		case "Changes":
			if seen {
				return false
			}
			seen = true
			return s.array(func() bool {
				var d engine.Diff
				ok := s.object(func(key []byte) (ok bool) {
					switch string(key) {
					case "Kind":
						d.Kind, ok = s.str()
					case "Key":
						d.Key, ok = s.str()
					case "ObjectId":
						d.ObjectId, ok = s.str()
					case "Op":
						d.Op, ok = s.str()
					case "Before":
						d.Before, ok = s.value()
					case "After":
						d.After, ok = s.value()
					default:
						if foldsTo(key, "Kind", "Key", "ObjectId", "Op", "Before", "After") {
							return false
						}
						_, ok = s.value()
					}
					return ok
				})
				changes = append(changes, d)
				return ok
			})
		}
		if foldsTo(key, "Time", "Changes") {
			return false
		}
		_, ok := s.value()
		return ok
	})
	s.space()
	if !whole || s.i != len(s.b) {
		return "", nil, false
	}
	return t, changes, true
}

// foldsTo says whether key is one of names but for case, which
// encoding/json would read as that name: parseRecord leaves such a record
// to it.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// scanner reads JSON from b at i. It reads the values it returns as
// encoding/json would, and skips the others without validating them: the
// records come from swmgr's engine, which writes valid JSON.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c, after any space, if it comes next.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, handing each member's key to member, which
// reads its value.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	for n := 0; ; n++ {
		if s.next('}') {
			return true
		}
		if n > 0 && !s.next(',') {
			return false
		}
		key, ok := s.bytes()
		if !ok || !s.next(':') || !member(key) {
			return false
		}
	}
}

// array reads an array, each element with elem.
func (s *scanner) array(elem func() bool) bool {
	if !s.next('[') {
		return false
	}
	for n := 0; ; n++ {
		if s.next(']') {
			return true
		}
		if n > 0 && !s.next(',') {
			return false
		}
		if !elem() {
			return false
		}
	}
}

// str reads a string, unescaped.
func (s *scanner) str() (string, bool) {
	b, ok := s.bytes()
	return string(b), ok
}

// bytes reads a string, unescaped: a part of b when it has no escapes.
func (s *scanner) bytes() ([]byte, bool) {
	s.space()
	start := s.i
	escaped, ok := s.skipString()
	if !ok {
		return nil, false
	}
	tok := s.b[start:s.i]
	if !escaped && utf8.Valid(tok) {
		return tok[1 : len(tok)-1], true
	}
	var out string
	if json.Unmarshal(tok, &out) != nil {
		return nil, false
	}
	return []byte(out), true
}

// skipString moves past the string at i, saying whether it has escapes.
func (s *scanner) skipString() (escaped, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			s.i = j + 1
			return escaped, true
		case c < 0x20:
			return false, false
		}
	}
	return false, false
}

// value reads any value and returns its text.
func (s *scanner) value() ([]byte, bool) {
	s.space()
	start := s.i
	if s.i >= len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.skipString()
		return s.b[start:s.i], ok
	case '{', '[':
		var awaited [16]byte
		open := awaited[:0] // the closing brackets awaited
		for s.i < len(s.b) {
			switch c := s.b[s.i]; c {
			case '"':
				if _, ok := s.skipString(); !ok {
					return nil, false
				}
				continue
			case '{':
				open = append(open, '}')
			case '[':
				open = append(open, ']')
			case '}', ']':
				if len(open) == 0 || open[len(open)-1] != c {
					return nil, false
				}
				open = open[:len(open)-1]
				if len(open) == 0 {
					s.i++
					return s.b[start:s.i], true
				}
			}
			s.i++
		}
		return nil, false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if s.i == start {
				return nil, false
			}
			return s.b[start:s.i], json.Valid(s.b[start:s.i])
		}
		s.i++
	}
	return s.b[start:], start < len(s.b) && json.Valid(s.b[start:])
}
