package gnmi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// scanValues: value's text of each input (want "" with ok false: refused)
// and where it stops (end; -1: the input's length).
var scanValues = []struct {
	in, want string
	ok       bool
	end      int
}{
	// strings, escapes
	{`"abc"`, `"abc"`, true, -1},
	{`  "a\"b" , 1`, `"a\"b"`, true, 8},
	{`"\\"`, `"\\"`, true, -1},
	{`"\\\"}"`, `"\\\"}"`, true, -1},
	{`"\u00e9\/\b\f\n\r\t"`, `"\u00e9\/\b\f\n\r\t"`, true, -1},
	{`"é"`, `"é"`, true, -1},
	{`"abc`, "", false, 0},
	{`"a\"`, "", false, 0},
	{`"a\`, "", false, 0},
	{`"\x"`, "", false, 0},
	{`"\u00g0"`, "", false, 0},
	{`"\u00e"`, "", false, 0},
	{"\"a\nb\"", "", false, 0},
	// objects and arrays, nested
	{`{}`, `{}`, true, -1},
	{`[]`, `[]`, true, -1},
	{`{"a":[1,{"b":"]}"}],"c":null}`, `{"a":[1,{"b":"]}"}],"c":null}`, true, -1},
	{`[[["}"]],{"x":{"y":[]}}] , 2`, `[[["}"]],{"x":{"y":[]}}]`, true, 24},
	{"{ \"a\" :\t[ 1 ,\n2 ] }", "{ \"a\" :\t[ 1 ,\n2 ] }", true, -1},
	{`[1]]`, `[1]`, true, 3},
	{strings.Repeat("[", 100) + strings.Repeat("]", 100), strings.Repeat("[", 100) + strings.Repeat("]", 100), true, -1},
	{`{"a":[1}`, "", false, 0},
	{`{"a":1]`, "", false, 0},
	{`{"a":1`, "", false, 0},
	{`[1,2`, "", false, 0},
	{`["a]`, "", false, 0},
	{`[tru]`, "", false, 0},
	{`[1x]`, "", false, 0},
	{`[@]`, "", false, 0},
	{strings.Repeat("[", 100), "", false, 0},
	// numbers
	{`0`, `0`, true, -1},
	{`-0`, `-0`, true, -1},
	{`12,`, `12`, true, 2},
	{`1.5e3}`, `1.5e3`, true, 5},
	{`-1.5E+3 `, `-1.5E+3`, true, 7},
	{`2e-7]`, `2e-7`, true, 4},
	{`01`, "", false, 0},
	{`1.`, "", false, 0},
	{`.5`, "", false, 0},
	{`-`, "", false, 0},
	{`-a`, "", false, 0},
	{`1e`, "", false, 0},
	{`1e+`, "", false, 0},
	{`1.e3`, "", false, 0},
	{`+1`, "", false, 0},
	// literals
	{`true`, `true`, true, -1},
	{`false,`, `false`, true, 5},
	{`null}`, `null`, true, 4},
	{`tru`, "", false, 0},
	{`truex`, "", false, 0},
	{`nul`, "", false, 0},
	{`False`, "", false, 0},
	// nothing
	{``, "", false, 0},
	{`   `, "", false, 0},
	{`}`, "", false, 0},
	{`,`, "", false, 0},
}

// TestScanValue: scanner.value returns a value's text and stops after it,
// and refuses what is not a value, whatever the input.
func TestScanValue(t *testing.T) {
	for _, c := range scanValues {
		s := scanner{b: []byte(c.in)}
		got, ok := s.value()
		if ok != c.ok || string(got) != c.want {
			t.Errorf("value(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
			continue
		}
		end := c.end
		if end < 0 {
			end = len(c.in)
		}
		if ok && s.i != end {
			t.Errorf("value(%q) stopped at %d; want %d", c.in, s.i, end)
		}
		// Every prefix: it ends (no panic, no loop), inside the input.
		for n := range len(c.in) {
			checkScan(t, []byte(c.in[:n]))
		}
	}
}

// checkScan: value on b ends without panicking, inside b, with a value
// encoding/json takes when it is not an object or array; on valid JSON it
// reads all of it.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	s := scanner{b: b}
	v, ok := s.value()
	if s.i < 0 || s.i > len(b) {
		t.Fatalf("value(%q) stopped at %d, outside the input", b, s.i)
	}
	if ok {
		if len(v) == 0 || !bytes.HasSuffix(b[:s.i], v) {
			t.Fatalf("value(%q) = %q, not the input before %d", b, v, s.i)
		}
		if v[0] != '{' && v[0] != '[' && !json.Valid(v) {
			t.Fatalf("value(%q) = %q, which encoding/json refuses", b, v)
		}
	}
	if json.Valid(b) {
		if !ok {
			t.Fatalf("value(%q) refused valid JSON", b)
		}
		s.space()
		if s.i != len(b) || !bytes.Equal(v, bytes.TrimSpace(b)) {
			t.Fatalf("value(%q) = %q, stopped at %d: not all of it", b, v, s.i)
		}
	}
}

func FuzzScanValue(f *testing.F) {
	for _, c := range scanValues {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}

// TestMemberOf: memberOf finds a member at the top of an object, its
// value as written, its first when there are two, never a nested one; it
// refuses what is not an object (what follows the member found is not
// read).
func TestMemberOf(t *testing.T) {
	obj := []byte(`{"A":"x,\"}","B":{"C":[1,{"D":"]"}]},"E":12,"F":true,"G":["a","b"],"H\"":null, "I" : -1.5e3 ,"E":13}`)
	for name, want := range map[string]string{"A": `"x,\"}"`, "B": `{"C":[1,{"D":"]"}]}`, "E": "12", "F": "true", "G": `["a","b"]`, `H"`: "null", "I": "-1.5e3"} {
		if got, ok := memberOf(obj, name); !ok || string(got) != want {
			t.Errorf("%s: got %s %v, want %s", name, got, ok, want)
		}
	}
	for _, name := range []string{"C", "D", "a", `H\"`, ""} {
		if v, ok := memberOf(obj, name); ok {
			t.Errorf("%q was found: %s", name, v)
		}
	}
	for _, b := range []string{``, `[]`, `"A"`, `{"A"}`, `{"A":}`, `{A:1}`, `{"B":[1,"A":2}`, `{"B":tru,"A":1}`} {
		if v, ok := memberOf([]byte(b), "A"); ok {
			t.Errorf("memberOf(%q) found %s", b, v)
		}
	}
	plain := []byte(`{"A":"x,\"}","B":{"C":[1,{"D":"]"}]},"E":12,"F":true,"G":["a","b"],"I":-1.5e3}`)
	if n := testing.AllocsPerRun(100, func() { memberOf(plain, "I") }); n != 0 {
		t.Errorf("memberOf allocates %v times; want none", n)
	}
}

// checkMemberOf: on a valid JSON object memberOf finds what encoding/json
// finds first under name; on anything it ends without panicking.
func checkMemberOf(t *testing.T, b []byte, name string) {
	t.Helper()
	got, found := memberOf(b, name)
	if !json.Valid(b) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		if found {
			t.Fatalf("memberOf(%q, %q) found %q in what is not an object", b, name, got)
		}
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if tok.(string) == name {
			if !found || !bytes.Equal(got, bytes.TrimSpace(raw)) {
				t.Fatalf("memberOf(%q, %q) = %q, %v; want %q", b, name, got, found, raw)
			}
			return
		}
	}
	if found {
		t.Fatalf("memberOf(%q, %q) found %q; encoding/json finds nothing", b, name, got)
	}
}

func FuzzMemberOf(f *testing.F) {
	f.Add([]byte(`{"A":"x,\"}","B":{"C":[1,{"D":"]"}]},"E":12}`), "E")
	f.Add([]byte(`{"H\"":null,"H\"":1}`), `H"`)
	f.Add([]byte(`{"a":[1,2,{"b":"c"}]}`), "b")
	f.Add([]byte(`{"\u0041":1}`), "A")
	f.Fuzz(func(t *testing.T, b []byte, name string) { checkMemberOf(t, b, name) })
}

// TestScannerAllocatesNothing: skipping a record's objects and arrays
// (up to 64 deep) and reading its unescaped strings allocates nothing.
func TestScannerAllocatesNothing(t *testing.T) {
	b := []byte(records[2])
	deep := []byte(strings.Repeat(`{"a":[`, 32) + `"x"` + strings.Repeat(`]}`, 32))
	plain := []byte(`"plain"`)
	n := testing.AllocsPerRun(100, func() {
		s := scanner{b: b}
		s.object(func([]byte) bool { _, ok := s.value(); return ok })
		s = scanner{b: deep}
		s.value()
		s = scanner{b: plain}
		s.bytes()
	})
	if n != 0 {
		t.Errorf("the scanner allocates %v times; want none", n)
	}
}
