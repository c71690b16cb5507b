package gnmi

import (
	"encoding/json"
	"unicode/utf8"
)

// scanner reads JSON from b at i, for the change feed's records
// (parseRecord) and the stored objects a read takes one member of
// (memberOf), without decoding what it does not return and without
// allocating (but to unescape a string that has escapes, or to skip a
// value nested deeper than 64 arrays and objects). The strings it returns
// it reads as encoding/json would. value returns a value's text as it is:
// its strings (escapes, no control characters), literals and numbers are
// checked and its brackets must match, but not the rest of the grammar
// inside an object or array (a member without its colon): what it reads
// comes from swmgr's engine and model, which write valid JSON. On any
// input it moves forward and ends, or fails (ok false); it never panics.
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
// reads its value (or returns false to stop: object then returns false).
func (s *scanner) object(member func(key []byte) bool) bool {
	return s.items('{', '}', func() bool {
		key, ok := s.bytes()
		return ok && s.next(':') && member(key)
	})
}

// array reads an array, each element with elem.
func (s *scanner) array(elem func() bool) bool { return s.items('[', ']', elem) }

// items reads what stands between open and close, separated by commas,
// each with item.
func (s *scanner) items(open, close byte, item func() bool) bool {
	if !s.next(open) {
		return false
	}
	for n := 0; ; n++ {
		if s.next(close) {
			return true
		}
		if n > 0 && !s.next(',') {
			return false
		}
		if !item() {
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
	end, escaped := stringEnd(s.b, s.i)
	if end < 0 {
		return false, false
	}
	s.i = end
	return escaped, true
}

// stringEnd is the end of the string at i in b (after its closing quote),
// or -1, and whether it has escapes.
func stringEnd(b []byte, i int) (end int, escaped bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			return j + 1, escaped
		case '\\':
			escaped = true
			if j = escapeEnd(b, j); j < 0 {
				return -1, false
			}
		default:
			if c < 0x20 {
				return -1, false
			}
		}
	}
	return -1, false
}

// escapeEnd is the index of the last byte of the escape at i in b (a
// backslash), or -1 when it is not one of JSON's.
func escapeEnd(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1
	case 'u':
		if len(b)-i < 6 {
			return -1
		}
		for _, c := range b[i+2 : i+6] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return -1
			}
		}
		return i + 5
	}
	return -1
}

// value reads any value and returns its text.
func (s *scanner) value() ([]byte, bool) {
	s.space()
	end := valueEnd(s.b, s.i)
	if end < 0 {
		return nil, false
	}
	v := s.b[s.i:end]
	s.i = end
	return v, true
}

// valueEnd is the end of the value at i in b, or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
	default:
		return scalarEnd(b, i)
	}
	var awaited [64]byte
	open := awaited[:0] // the closing brackets awaited
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			if i, _ = stringEnd(b, i); i < 0 {
				return -1
			}
			continue
		case '{':
			open = append(open, '}')
		case '[':
			open = append(open, ']')
		case '}', ']':
			if len(open) == 0 || open[len(open)-1] != c {
				return -1
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return i + 1
			}
		case ' ', '\t', '\n', '\r', ',', ':':
		default:
			if i = scalarEnd(b, i); i < 0 {
				return -1
			}
			continue
		}
		i++
	}
	return -1
}

// scalarEnd is the end of the literal or number at i in b, which must end
// there (the input's end, space, or what may follow a value), or -1.
func scalarEnd(b []byte, i int) int {
	switch b[i] {
	case 't':
		i = literal(b, i, "true")
	case 'f':
		i = literal(b, i, "false")
	case 'n':
		i = literal(b, i, "null")
	default:
		i = number(b, i)
	}
	if i < 0 {
		return -1
	}
	if i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', '}', ']':
		default:
			return -1
		}
	}
	return i
}

// literal is the end of lit at i in b, or -1.
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number is the end of the JSON number at i in b, or -1.
func number(b []byte, i int) int {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i, _ = digits(i)
	default:
		return -1
	}
	var ok bool
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return -1
		}
	}
	return i
}

// memberOf is the value of the member name of the JSON object b (its
// first, were there two), found without decoding the object: the members
// before it are skipped (scanner), those after it not read.
func memberOf(b []byte, name string) (v []byte, found bool) {
	s := scanner{b: b}
	s.object(func(key []byte) bool {
		val, ok := s.value()
		if ok && string(key) == name {
			v, found = val, true
			return false // stop here
		}
		return ok
	})
	return v, found
}
