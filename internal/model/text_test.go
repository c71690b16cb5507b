package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Runes no string field of any kind may hold, with the code the refusal
// names: C0 controls, DEL, C1 controls (NEXT LINE, the 8-bit CSI), a bidi
// override, a zero-width space, the line separator.
var refusedRunes = []struct {
	r    string
	code string
}{
	{"\n", "U+000A"}, {"\r", "U+000D"}, {"\t", "U+0009"}, {"\x1b", "U+001B"}, {"\x00", "U+0000"},
	{"\x7f", "U+007F"}, {"\u0085", "U+0085"}, {"\u009b", "U+009B"}, {"\u202e", "U+202E"},
	{"\u200b", "U+200B"}, {"\u2028", "U+2028"},
}

// stringField is one string field (or string sub-field of a record) of a
// kind, and how to write a body that gives it a value.
type stringField struct {
	kind   *Kind
	field  *Field // the top-level field
	sub    *Field // the string sub-field of a record field, or nil
	target *Field // the field the value goes to: sub, else field
}

// body writes a request body giving the field value v.
func (sf stringField) body(v string) string {
	var val any = v
	if sf.target.Type == StringList {
		val = []string{v}
	}
	if sf.sub != nil {
		rec := map[string]any{sf.sub.Name: val}
		if sf.field.Type == RecordList {
			val = []any{rec}
		} else {
			val = rec
		}
	}
	b, _ := json.Marshal(map[string]any{sf.field.Name: val})
	return string(b)
}

func (sf stringField) String() string {
	if sf.sub != nil {
		return sf.kind.Name + "." + sf.field.Name + "." + sf.sub.Name
	}
	return sf.kind.Name + "." + sf.field.Name
}

// stringFields lists every string field of every kind of reg, sub-fields
// of records included.
func stringFields(reg *Registry) []stringField {
	var out []stringField
	for _, k := range reg.Kinds() {
		for _, f := range k.Fields {
			if f.Type == String || f.Type == StringList {
				out = append(out, stringField{kind: k, field: f, target: f})
			}
			for _, s := range f.Sub {
				if s.Type == String || s.Type == StringList {
					out = append(out, stringField{kind: k, field: f, sub: s, target: s})
				}
			}
		}
	}
	return out
}

// TestEveryStringFieldRefusesControlCharacters goes over every string
// field of every kind the model declares (a field added later is in the
// list by itself) and proves that Parse (a client's body) and Validate (a
// complete object) refuse each control character with a 400 naming the
// field and the character, never quoting a secret.
func TestEveryStringFieldRefusesControlCharacters(t *testing.T) {
	reg := Builtin()
	fields := stringFields(reg)
	if len(fields) < 40 {
		t.Fatalf("only %d string fields found", len(fields))
	}
	const marker = "Zq9"
	for _, sf := range fields {
		for _, bad := range refusedRunes {
			value := marker + bad.r + "x"
			check := func(how string, err error, field string) {
				t.Helper()
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != apierr.CodeInvalidValue || ae.Field != field {
					t.Fatalf("%s %s with %s: %#v", how, sf, bad.code, err)
				}
				if strings.ContainsFunc(ae.Message, IsLineBreaking) {
					t.Errorf("%s %s: the message holds the character: %q", how, sf, ae.Message)
				}
				if sf.target.Text == TextSecret {
					if strings.Contains(ae.Message, marker) || strings.Contains(ae.Message, "character 4") {
						t.Errorf("%s %s: the refusal of a secret tells of its value: %s", how, sf, ae.Message)
					}
				} else if !strings.Contains(ae.Message, bad.code) || !strings.Contains(ae.Message, sf.target.Name) {
					t.Errorf("%s %s: the message names neither the field nor %s: %s", how, sf, bad.code, ae.Message)
				}
			}
			body, err := DecodeBody([]byte(sf.body(value)))
			if err != nil {
				t.Fatalf("%s: %v", sf, err)
			}
			_, err = sf.kind.Parse(body)
			check("Parse", err, sf.field.Name)

			// The check Validate runs on each field (and each sub-field of a
			// record) of a complete object: a stored object merged with a
			// change.
			var v any = value
			if sf.target.Type == StringList {
				v = []string{value}
			}
			_, err = sf.target.validate(sf.kind.Name, v)
			check("Validate", err, sf.target.Name)
		}
	}
}

// TestTextClasses: free text takes printable text of any script and the
// characters that mean something to a shell or FRR's vty; a name takes a
// word; a secret anything printable.
func TestTextClasses(t *testing.T) {
	for _, tc := range []struct {
		text  Text
		value string
		ok    bool
	}{
		{TextLine, "uplink | core", true},
		{TextLine, "to spine 1 \"east\" \\ café ✓ 日本 😀", true},
		{TextLine, "a\u00a0b", true}, // no-break space: printable
		{TextLine, "", true},
		{TextLine, "a\nb", false},
		{TextLine, "\u202ecba", false},
		{TextName, "RM_in-1.v2:a/b@c+d", true},
		{TextName, "rm in", false},
		{TextName, "rm|x", false},
		{TextName, "é", false},
		{TextSecret, "pa ss!#\"word|x", true},
		{TextSecret, "pass\x00word", false},
	} {
		f := &Field{Name: "F", Type: String, Text: tc.text}
		err := f.checkText("K", tc.value, "")
		if (err == nil) != tc.ok {
			t.Errorf("%v %q: %v", tc.text, tc.value, err)
		}
	}
}

// TestTextDeclarations: a secret that declares no class is TextSecret; the
// registry refuses a secret of another class, a TextSecret that is no
// secret and a class on a non-string.
func TestTextDeclarations(t *testing.T) {
	plain := &Field{Name: "P", Type: String, Secret: Sealed}
	if _, err := NewRegistry(&Kind{Name: "K", Class: Action, Fields: []*Field{plain}}); err != nil || plain.Text != TextSecret {
		t.Errorf("a secret without a class: %v, %v", plain.Text, err)
	}
	for i, f := range []*Field{
		{Name: "P", Type: String, Secret: Sealed, Text: TextName},
		{Name: "P", Type: String, Text: TextSecret},
		{Name: "P", Type: Int, Text: TextName},
		{Name: "P", Type: String, Text: TextLines}, // a client could write lines
	} {
		k := &Kind{Name: fmt.Sprintf("K%d", i), Class: Action, Fields: []*Field{f}}
		if _, err := NewRegistry(k); err == nil {
			t.Errorf("%+v declared without an error", f)
		}
	}
	// Lines are for what the switch reports: a state-only field.
	lines := &Field{Name: "L", Type: String, Text: TextLines}
	k := &Kind{Name: "C", Class: Config, Singleton: true, Fields: []*Field{{Name: "Vrf", Type: String, Key: true}}, StateOnly: []*Field{lines}}
	if _, err := NewRegistry(k); err != nil {
		t.Errorf("TextLines on a state-only field: %v", err)
	}
	if n, _ := TextLines.badRune("a\nb\n"); n != 0 {
		t.Errorf("TextLines refuses a newline at %d", n)
	}
	if n, _ := TextLines.badRune("a\r\nb"); n != 2 {
		t.Errorf("TextLines takes a carriage return (%d)", n)
	}
}

// TestHostnameLength: the kernel keeps a host name of at most 64
// characters; a longer one is the client's error.
func TestHostnameLength(t *testing.T) {
	k := Builtin().Lookup(Config, "SystemParam")
	o := k.Defaults()
	o["Hostname"] = strings.Repeat("a", 31) + "." + strings.Repeat("b", 32)
	if err := k.Validate(o); err != nil {
		t.Fatal(err)
	}
	o["Hostname"] = strings.Repeat("a", 32) + "." + strings.Repeat("b", 32)
	var ae *apierr.Error
	if err := k.Validate(o); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("65 characters: %v", err)
	}
}

// TestTruncate: at most n bytes, cut at a character's start, marked.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer line", 10, "a longe..."},
		{"ééééé", 8, "éé..."}, // é is 2 bytes: the cut moves back to a character's start
		{"€€€", 7, "€..."},
	} {
		if got := Truncate(tc.in, tc.n); got != tc.want || len(got) > tc.n {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
