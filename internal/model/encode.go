package model

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends o as one JSON object with k's fields in declaration
// order, so that equal objects encode to equal bytes. Write-only (secret)
// fields are written as "". With state, the state-only fields follow.
func (k *Kind) AppendJSON(dst []byte, o Object, state bool) []byte {
	return k.appendObject(dst, o, state, false)
}

// Redacted is what a set secret reads as in diffs and events.
const Redacted = "******"

// AppendRedactedJSON is AppendJSON with each set secret written as
// Redacted, the form secrets take in diffs and events.
func (k *Kind) AppendRedactedJSON(dst []byte, o Object) []byte {
	return k.appendObject(dst, o, false, true)
}

func (k *Kind) appendObject(dst []byte, o Object, state, redacted bool) []byte {
	dst = append(dst, '{')
	n := 0
	emit := func(f *Field) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, f.Name)
		dst = append(dst, ':')
		v, ok := o[f.Name]
		switch {
		case !ok:
			v = f.zero()
		case f.Secret != Public:
			if s, _ := v.(string); s != "" && redacted {
				v = Redacted
			} else {
				v = ""
			}
		}
		dst = f.appendValue(dst, v)
	}
	for _, f := range k.Fields {
		emit(f)
	}
	if state {
		for _, f := range k.StateOnly {
			emit(f)
		}
	}
	return append(dst, '}')
}

// AppendGivenJSON appends only the fields present in o, in declaration
// order, secrets included in clear. It is for data that is sealed before it
// is stored (a candidate's staged edits), never for clients.
func (k *Kind) AppendGivenJSON(dst []byte, o Object) []byte {
	dst = append(dst, '{')
	n := 0
	for _, f := range k.Fields {
		v, ok := o[f.Name]
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, f.Name)
		dst = append(dst, ':')
		dst = f.appendValue(dst, v)
	}
	return append(dst, '}')
}

// AppendSecretsJSON appends the Sealed fields of o that are set, as a JSON
// object; nil when there are none.
func (k *Kind) AppendSecretsJSON(dst []byte, o Object) []byte {
	n := 0
	for _, f := range k.Fields {
		if f.Secret != Sealed || o.Str(f.Name) == "" {
			continue
		}
		if n == 0 {
			dst = append(dst, '{')
		} else {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, f.Name)
		dst = append(dst, ':')
		dst = appendString(dst, o.Str(f.Name))
	}
	if n == 0 {
		return dst
	}
	return append(dst, '}')
}

// Redacted returns a copy of o with every set secret replaced by "******",
// the form secrets take in the config log, diffs and events.
func (k *Kind) Redacted(o Object) Object {
	c := o.Clone()
	for _, f := range k.Fields {
		if f.Secret != Public {
			if s, ok := c[f.Name].(string); ok && s != "" {
				c[f.Name] = "******"
			}
		}
	}
	return c
}

func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendString(dst, x)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case bool:
		return strconv.AppendBool(dst, x)
	case []string:
		dst = append(dst, '[')
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, s)
		}
		return append(dst, ']')
	case json.RawMessage:
		if len(x) == 0 {
			break
		}
		return append(dst, x...)
	}
	return append(dst, "null"...)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string, replacing invalid UTF-8.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// AppendJSONString is appendString for other packages that build JSON by hand.
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendPage appends a get-all page (FlexSwitch's envelope) around objects,
// the page's items already encoded and comma-separated.
func AppendPage(dst []byte, marker, next uint64, more bool, n int, objects []byte) []byte {
	dst = append(dst, `{"CurrentMarker":`...)
	dst = strconv.AppendUint(dst, marker, 10)
	dst = append(dst, `,"MoreExist":`...)
	dst = strconv.AppendBool(dst, more)
	dst = append(dst, `,"NextMarker":`...)
	dst = strconv.AppendUint(dst, next, 10)
	dst = append(dst, `,"ObjCount":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"Objects":[`...)
	dst = append(dst, objects...)
	return append(dst, "]}"...)
}

// AppendStateEvent appends the data of a change of state on the change
// feed (`event: state`, docs/api.md): {"Kind", "Time" (RFC 3339, UTC),
// "Object" (the object's state form)}, on one line.
func (k *Kind) AppendStateEvent(dst []byte, o Object, at time.Time) []byte {
	dst = append(dst, `{"Kind":`...)
	dst = AppendJSONString(dst, k.Name)
	dst = append(dst, `,"Time":`...)
	dst = AppendJSONString(dst, at.UTC().Format(time.RFC3339Nano))
	dst = append(dst, `,"Object":`...)
	dst = k.AppendJSON(dst, o, true)
	return append(dst, '}')
}
