package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
)

func errorf(format string, args ...any) error { return fmt.Errorf("model: "+format, args...) }

// Body is a request body split into its top-level fields, not yet typed.
type Body map[string]json.RawMessage

// DecodeBody parses a request body that must be a single JSON object. An
// empty body is an empty object: GET and DELETE by key may carry the key in
// the query string instead.
func DecodeBody(data []byte) (Body, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil // an empty body is an empty object
	}
	if err := checkJSONText(data, "the body"); err != nil {
		return nil, err
	}
	if body, ok := decodeFlatObject(data); ok {
		return body, nil
	}
	return decodeBodySlow(data)
}

// DecodeValue checks one JSON value given for one field outside a body (a
// gNMI update of a field) as DecodeBody checks a body: valid UTF-8, whole
// surrogate pairs, one well-formed value and nothing after it. The members
// of an object in it are checked when the field parses it (a record's by
// DecodeBody: each given once).
func DecodeValue(data []byte) (json.RawMessage, error) {
	if err := checkJSONText(data, "the value"); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: the value is empty or ends before it is complete")
		}
		return nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: unexpected data after the value")
	}
	return raw, nil
}

// checkJSONText refuses what encoding/json would take and change without a
// word, invalid UTF-8 and unpaired surrogate escapes (it makes them
// U+FFFD): the stored text would not be what was sent. what names the
// text in the refusal.
func checkJSONText(data []byte, what string) error {
	if !utf8.Valid(data) {
		return apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "%s is not valid UTF-8", what)
	}
	if esc := unpairedSurrogate(data); esc != "" {
		return apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: %s is half of a UTF-16 surrogate pair; a string must hold whole characters", esc)
	}
	return nil
}

// decodeBodySlow is DecodeBody's general path: encoding/json's tokenizer,
// which also words every refusal.
func decodeBodySlow(data []byte) (Body, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "the body must be a JSON object ({...}), not %s", describeToken(tok))
	}
	body := Body{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		name := tok.(string) // inside an object the decoder only yields string keys here
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed(err)
		}
		if _, dup := body[name]; dup {
			return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", name, "field %q is given twice", name)
		}
		body[name] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: unexpected data after the object")
	}
	return body, nil
}

// decodeFlatObject is DecodeBody's fast path for the common body: one
// object whose names hold no escapes and whose values are strings, numbers,
// true, false or null, each name once. It returns what the general path
// returns for such a body (each value's bytes as sent, sharing data's
// memory), or false for anything else, valid or not, which the general
// path then decodes or refuses in its own words. A create's body is read
// by every write: encoding/json's tokenizer cost about a dozen
// allocations per body.
func decodeFlatObject(data []byte) (Body, bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return nil, false
	}
	body := Body{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return body, skipSpace(data, i+1) == len(data)
	}
	for {
		if i == len(data) || data[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(data) && data[end] != '"' && data[end] != '\\' && data[end] >= 0x20 {
			end++
		}
		if end == len(data) || data[end] != '"' {
			return nil, false // an escape, a control character or no end
		}
		name := string(data[i+1 : end])
		if _, dup := body[name]; dup {
			return nil, false
		}
		i = skipSpace(data, end+1)
		if i == len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		n := scalarLen(data[i:])
		if n == 0 {
			return nil, false
		}
		body[name] = json.RawMessage(data[i : i+n : i+n])
		i = skipSpace(data, i+n)
		if i == len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return body, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scalarLen returns the length of the JSON string, number, true, false or
// null at the start of b, or 0 if there is none.
func scalarLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch c := b[0]; {
	case c == '"':
		for i := 1; i < len(b); i++ {
			switch c := b[i]; {
			case c == '"':
				return i + 1
			case c < 0x20:
				return 0
			case c == '\\':
				i++
				if i == len(b) {
					return 0
				}
				switch b[i] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					if i+4 >= len(b) {
						return 0
					}
					for _, h := range b[i+1 : i+5] {
						if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
							return 0
						}
					}
					i += 4
				default:
					return 0
				}
			}
		}
		return 0
	case c == '-' || '0' <= c && c <= '9':
		i := 0
		if b[i] == '-' {
			i++
		}
		switch {
		case i < len(b) && b[i] == '0':
			i++
		case i < len(b) && '1' <= b[i] && b[i] <= '9':
			i = skipDigits(b, i)
		default:
			return 0
		}
		if i < len(b) && b[i] == '.' {
			end := skipDigits(b, i+1)
			if end == i+1 {
				return 0 // a fraction needs a digit
			}
			i = end
		}
		if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
			i++
			if i < len(b) && (b[i] == '+' || b[i] == '-') {
				i++
			}
			end := skipDigits(b, i)
			if end == i {
				return 0 // an exponent needs a digit
			}
			i = end
		}
		return i
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(b, []byte(lit)) {
			return len(lit)
		}
	}
	return 0
}

// unpairedSurrogate returns the first \uD800-\uDFFF escape in data that is
// not a high surrogate followed at once by a low one, or "".
func unpairedSurrogate(data []byte) string {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
		return rune(n), err == nil
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		if data[i+1] != 'u' {
			i++ // skip the escaped character (it may be a backslash)
			continue
		}
		r, ok := hex4(i)
		if !ok {
			continue // the JSON decoder reports it
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo < 0xE000 {
				i += 11
				continue
			}
			return string(data[i : i+6])
		case r >= 0xDC00 && r < 0xE000:
			return string(data[i : i+6])
		}
		i += 5
	}
	return ""
}

func malformed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: the body ends before the object is complete")
	}
	return apierr.BadRequest(apierr.CodeMalformedJSON, "", "", "malformed JSON: %v", err)
}

func describeToken(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// Parse turns a body into typed field values of kind k. Every name must be a
// field of k (or an alias); each value must have the field's JSON type. Values
// are not range-checked here: see Validate.
func (k *Kind) Parse(body Body) (Object, error) {
	out := make(Object, len(body))
	names := sortedNames(body)
	for _, name := range names {
		f := k.byName[name]
		if f == nil {
			return nil, k.unknownField(name)
		}
		if _, dup := out[f.Name]; dup { // two spellings (a name and an alias) of one field
			prev := names[slices.IndexFunc(names, func(n string) bool { return k.byName[n] == f })]
			return nil, apierr.BadRequest(apierr.CodeMalformedJSON, k.Name, f.Name, "%s and %s both set field %s; give it once", prev, name, f.Name)
		}
		v, err := f.decode(k.Name, body[name], true)
		if err != nil {
			return nil, err
		}
		out[f.Name] = f.canonicalValue(v)
	}
	return out, nil
}

// ParseQuery reads field values from a query string (keys of GET and DELETE
// by key). Paging parameters and dry_run are not fields and are skipped.
func (k *Kind) ParseQuery(q url.Values) (Object, error) {
	out := Object{}
	given := make(map[string]string, len(q)) // canonical name -> spelling used
	for _, name := range sortedNames(q) {
		if name == "CurrentMarker" || name == "Count" || name == "NextMarker" || name == "dry_run" {
			continue
		}
		f := k.byName[name]
		if f == nil {
			return nil, k.unknownField(name)
		}
		// A field given twice names two objects (or two values): refuse it
		// rather than silently act on one of them.
		if n := len(q[name]); n > 1 && f.Type != StringList {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, f.Name, "%s is given %d times in the query string; give it once", name, n)
		}
		if prev, dup := given[f.Name]; dup {
			return nil, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, f.Name, "%s and %s both set field %s in the query string; give it once", prev, name, f.Name)
		}
		given[f.Name] = name
		if f.Type == StringList {
			if err := f.CheckText(k.Name, q[name]); err != nil {
				return nil, err
			}
			out[f.Name] = f.canonicalValue(append([]string(nil), q[name]...))
			continue
		}
		v, err := k.ParseText(f, q.Get(name))
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}

// ParseText reads one value of a scalar field written as text, as a query
// string or a gNMI path key gives it: checked, and canonical.
func (k *Kind) ParseText(f *Field, text string) (any, error) {
	switch f.Type {
	case String:
		if err := f.checkText(k.Name, text, ""); err != nil {
			return nil, err
		}
		return f.canonical(text), nil
	case Int:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, wrongType(k.Name, f, "query value "+strconv.Quote(text))
		}
		return n, nil
	case Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, wrongType(k.Name, f, "query value "+strconv.Quote(text))
		}
		return b, nil
	}
	return nil, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, f.Name, "%s is %s and cannot be given in the query string; send it in the body", f.Name, article(f.Type))
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (k *Kind) unknownField(name string) error {
	msg := fmt.Sprintf("%s has no field %q", k.Name, name)
	if f := k.byLower[strings.ToLower(name)]; f != nil && k.byName[f.Name] == nil {
		// A state-only field (byName holds input fields only): suggesting
		// its own spelling would say nothing.
		msg = fmt.Sprintf("%s is a state field of %s: it is read (GET /public/v1/state/%s), never given; the fields a body or a query may hold are %s", f.Name, k.Name, k.Name, strings.Join(k.InputNames(), ", "))
	} else if s := k.suggest(name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; its fields are " + strings.Join(k.InputNames(), ", ")
	}
	return apierr.BadRequest(apierr.CodeUnknownField, k.Name, name, "%s", msg)
}

// InputNames lists the fields a client may send.
func (k *Kind) InputNames() []string {
	names := make([]string, 0, len(k.Fields))
	for _, f := range k.Fields {
		names = append(names, f.Name)
	}
	return names
}

// suggest finds the declared field closest to a misspelt name.
func (k *Kind) suggest(name string) string {
	if f := k.byLower[strings.ToLower(name)]; f != nil {
		return f.Name
	}
	best, bestDist := "", 4
	for _, f := range k.Fields {
		if d := editDistance(strings.ToLower(name), strings.ToLower(f.Name)); d < bestDist {
			best, bestDist = f.Name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// plainJSONString returns the value of a JSON string token without escapes
// (most are: names, addresses, numbers as text), which is its bytes between
// the quotes: what json.Unmarshal would return, without its reflection.
// ok is false for any other token, which the caller decodes in full.
func plainJSONString(raw []byte) (string, bool) {
	if !IsPlainJSONString(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// IsPlainJSONString reports whether raw is one JSON string token whose
// value is its bytes between the quotes: no escapes, no control
// characters, and ASCII only (the validity of other text is for
// encoding/json to judge). Such a token is also compact as it stands.
func IsPlainJSONString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decode reads a value of f's type. input says it is a client's, which
// the field's text class applies to (as each sub-field's of a record, before
// the record's own checks); stored values are read as they are.
func (f *Field) decode(kind string, raw json.RawMessage, input bool) (any, error) {
	v, err := f.decodeValue(kind, raw, input)
	if err == nil && input && f.Type != Record && f.Type != RecordList {
		err = f.CheckText(kind, v)
	}
	return v, err
}

func (f *Field) decodeValue(kind string, raw json.RawMessage, input bool) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, wrongType(kind, f, "nothing")
	}
	switch f.Type {
	case String:
		if raw[0] != '"' {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		if s, ok := plainJSONString(raw); ok {
			return s, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		return s, nil
	case Int:
		if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			// 1e3 and 10.0 are whole numbers written unusually; 10.5 is not.
			fl, ferr := strconv.ParseFloat(string(raw), 64)
			if ferr != nil || fl != math.Trunc(fl) || math.Abs(fl) > 1<<53 {
				return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s must be a whole number, not %s", f.Name, raw)
			}
			n = int64(fl)
		}
		return n, nil
	case Bool:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, wrongType(kind, f, jsonKind(raw))
	case StringList:
		if raw[0] != '[' {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s must be an array of strings", f.Name)
		}
		if l == nil {
			l = []string{}
		}
		return l, nil
	case Record:
		return f.decodeRecord(kind, raw, input)
	case RecordList:
		if raw[0] != '[' {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		return f.decodeRecordList(kind, raw, input)
	case Document:
		if raw[0] != '{' {
			return nil, wrongType(kind, f, jsonKind(raw))
		}
		return append(json.RawMessage(nil), raw...), nil
	}
	return nil, errorf("field %s has no type", f.Name)
}

func wrongType(kind string, f *Field, got string) error {
	return apierr.BadRequest(apierr.CodeWrongType, kind, f.Name, "%s must be %s, not %s", f.Name, article(f.Type), got)
}

func article(t Type) string {
	switch t {
	case Int:
		return "an integer"
	case StringList:
		return "an array of strings"
	case Record, Document:
		return "an object"
	case RecordList:
		return "an array of objects"
	}
	return "a " + t.String()
}

func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// DecodeStored reads an object that swmgr itself stored (a record, a side of
// a revision, a staged edit), unlike Parse which reads what a client sent:
// a field the model no longer has is dropped, one renamed since (Renamed)
// is read under its new name, and a value whose type no longer fits is left
// out so that the field's default applies. Stored data is never refused for
// what the model changed after it was written.
func (k *Kind) DecodeStored(raw []byte) (Object, error) {
	body, err := DecodeBody(raw)
	if err != nil {
		return nil, err
	}
	out := make(Object, len(body))
	for name, v := range body {
		f := k.byName[name]
		if f == nil {
			if to, ok := k.Renamed[name]; ok {
				f = k.byName[to]
			}
		}
		if f == nil {
			continue
		}
		if _, taken := out[f.Name]; taken && name != f.Name {
			continue // the current name wins over an old one
		}
		val, err := f.decode(k.Name, v, false)
		if err != nil {
			continue
		}
		out[f.Name] = val
	}
	return out, nil
}

// skipDigits returns the index just past the run of ASCII digits that
// starts at b[i] (i itself when there is none).
func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// ActionFields reads the fields of a run of action k from body: parsed,
// every required field given, the others defaulted, all validated. Every
// front door reads an action's fields through it.
func (k *Kind) ActionFields(body Body) (Object, error) {
	fields, err := k.Parse(body)
	if err != nil {
		return nil, err
	}
	if err := k.RequireFields(fields); err != nil {
		return nil, err
	}
	obj := k.Defaults()
	for n, v := range fields {
		obj[n] = v
	}
	if err := k.Validate(obj); err != nil {
		return nil, err
	}
	return obj, nil
}
