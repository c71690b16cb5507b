package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Nested records. FlexSwitch nests a few structures inside objects: a list
// of {Sources, Policy} in BGPGlobal.Redistribution, a list of next hops in
// IPv4Route.NextHop, and in state forms Messages{Sent{Update,...}} and the
// daemons of SystemStatus. A field of type Record holds one such structure
// (an Object of its Sub fields), RecordList an array of them ([]Object).
// Sub fields are declared like any field (type, default, enum, range,
// format), so parsing, defaults, validation, canonical forms, JSON and docs
// follow from the declaration as for flat fields.

// subField finds a sub-field by its exact name, or nil.
func (f *Field) subField(name string) *Field {
	for _, s := range f.Sub {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// unknownSub is the error of a member name that is no sub-field of f. A
// name that differs from one only in case (FlexSwitch's JSON decoding
// ignored case) is told the sub-field's spelling, and for a value a
// not-yet-supported sub-field cannot take, why: what the client meant
// would be refused for that reason anyway.
func (f *Field) unknownSub(kind, name string, raw json.RawMessage) error {
	for _, s := range f.Sub {
		if !strings.EqualFold(s.Name, name) {
			continue
		}
		if v, err := s.decode(kind, raw, false); s.NotYet != "" && err == nil && !EqualValue(s.canonicalValue(v), s.zero()) {
			return apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s.%s (sent as %q): not supported yet (%s); leave it out", f.Name, s.Name, name, s.NotYet)
		}
		return apierr.BadRequest(apierr.CodeUnknownField, kind, f.Name, "%s has no field %q; did you mean %q?", f.Name, name, s.Name)
	}
	return apierr.BadRequest(apierr.CodeUnknownField, kind, f.Name, "%s has no field %q; its fields are %s", f.Name, name, f.subNames())
}

func (f *Field) subNames() string {
	names := make([]string, len(f.Sub))
	for i, s := range f.Sub {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// recordDefaults is a record with every sub-field at its default.
func (f *Field) recordDefaults() Object {
	o := make(Object, len(f.Sub))
	for _, s := range f.Sub {
		o[s.Name] = s.zero()
	}
	return o
}

// decodeRecord parses one JSON object of f's sub-fields; what it leaves out
// takes the sub-field's default, as a field left out of a create does.
func (f *Field) decodeRecord(kind string, raw json.RawMessage, input bool) (Object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "each element of %s must be an object with fields %s", f.Name, f.subNames())
	}
	body, err := DecodeBody(raw)
	if err != nil {
		return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s: %v", f.Name, apierr.From(err).Message)
	}
	o := f.recordDefaults()
	for _, name := range sortedNames(body) {
		s := f.subField(name)
		if s == nil {
			return nil, f.unknownSub(kind, name, body[name])
		}
		v, err := s.decode(kind, body[name], input)
		if err != nil {
			prefixRecordError(err, f.Name)
			return nil, err
		}
		o[s.Name] = s.canonicalValue(v)
	}
	for _, s := range f.Sub {
		if _, given := body[s.Name]; s.Required && !given {
			return nil, apierr.BadRequest(apierr.CodeMissingField, kind, f.Name, "%s.%s is required in each element of %s", f.Name, s.Name, f.Name)
		}
	}
	return o, nil
}

func (f *Field) decodeRecordList(kind string, raw json.RawMessage, input bool) ([]Object, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s must be an array of objects with fields %s", f.Name, f.subNames())
	}
	out := make([]Object, 0, len(elems))
	for _, e := range elems {
		o, err := f.decodeRecord(kind, e, input)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// validateRecord checks every sub-field of one record, returning it in
// canonical form (enum spellings as declared).
func (f *Field) validateRecord(kind string, o Object) (Object, error) {
	c := make(Object, len(f.Sub))
	for _, s := range f.Sub {
		v, ok := o[s.Name]
		if !ok {
			v = s.zero()
		}
		nv, err := s.validate(kind, v)
		if err != nil {
			prefixRecordError(err, f.Name)
			return nil, err
		}
		c[s.Name] = nv
	}
	for name := range o {
		if f.subField(name) == nil {
			return nil, apierr.BadRequest(apierr.CodeUnknownField, kind, f.Name, "%s has no field %q; its fields are %s", f.Name, name, f.subNames())
		}
	}
	if f.CheckRecord != nil {
		if err := f.CheckRecord(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (f *Field) validateRecordList(kind string, l []Object) ([]Object, error) {
	out := make([]Object, 0, len(l))
	for i, o := range l {
		c, err := f.validateRecord(kind, o)
		if err != nil {
			return nil, err
		}
		for j := range out {
			if EqualValue(out[j], c) {
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: element %d repeats element %d", f.Name, i+1, j+1)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// EqualValue reports whether two field values are equal: scalars, lists
// and nested records alike.
func EqualValue(a, b any) bool {
	switch x := a.(type) {
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case json.RawMessage:
		y, ok := b.(json.RawMessage)
		return ok && bytes.Equal(x, y)
	case Object:
		y, ok := b.(Object)
		if !ok || len(x) != len(y) {
			return false
		}
		for n, v := range x {
			w, ok := y[n]
			if !ok || !EqualValue(v, w) {
				return false
			}
		}
		return true
	case []Object:
		y, ok := b.([]Object)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	switch b.(type) {
	case []string, Object, []Object:
		return false
	}
	return a == b
}

// cloneValue copies lists and records so that the copy shares nothing
// mutable with v.
func cloneValue(v any) any {
	switch x := v.(type) {
	case []string:
		return append([]string(nil), x...)
	case json.RawMessage:
		return append(json.RawMessage(nil), x...)
	case Object:
		return x.Clone()
	case []Object:
		c := make([]Object, len(x))
		for i, o := range x {
			c[i] = o.Clone()
		}
		return c
	}
	return v
}

// appendRecord writes a record with its sub-fields in declaration order.
func (f *Field) appendRecord(dst []byte, o Object) []byte {
	dst = append(dst, '{')
	for i, s := range f.Sub {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s.Name)
		dst = append(dst, ':')
		v, ok := o[s.Name]
		if !ok {
			v = s.zero()
		}
		dst = s.appendValue(dst, v)
	}
	return append(dst, '}')
}

// appendValue writes one value of field f.
func (f *Field) appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case Object:
		return f.appendRecord(dst, x)
	case []Object:
		dst = append(dst, '[')
		for i, o := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = f.appendRecord(dst, o)
		}
		return append(dst, ']')
	}
	return appendValue(dst, v)
}

// Records returns a RecordList field, or nil.
func (o Object) Records(name string) []Object { l, _ := o[name].([]Object); return l }

// Record returns a Record field, or nil.
func (o Object) Record(name string) Object { r, _ := o[name].(Object); return r }

// DecodeElements reads elements of a list field, given as a JSON array or
// as one element (the FlexSwitch SDK's patch form sends either), checked
// and in canonical form: []string for a StringList, []Object for a
// RecordList.
func (f *Field) DecodeElements(kind string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '[' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	switch f.Type {
	case StringList, RecordList:
	default:
		return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s is %s, not a list: a patch adds to and removes from lists only", f.Name, article(f.Type))
	}
	v, err := f.decode(kind, raw, true)
	if err != nil {
		return nil, err
	}
	return f.validate(kind, f.canonicalValue(v))
}

// AppendElement writes one record of a RecordList, for messages.
func (f *Field) AppendElement(dst []byte, o Object) []byte { return f.appendRecord(dst, o) }
