package model

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlainJSONString(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"10.0.0.1"`, "10.0.0.1", true},
		{`""`, "", true},
		{`"a b/c:d"`, "a b/c:d", true},
		{`"a\"b"`, "", false},
		{`"a\u0041"`, "", false},
		{`"é"`, "", false},
		{"\"a\tb\"", "", false},
		{`"abc`, "", false},
		{`abc"`, "", false},
		{`"`, "", false},
		{`1`, "", false},
	} {
		got, ok := plainJSONString([]byte(tt.raw))
		if got != tt.want || ok != tt.ok {
			t.Errorf("plainJSONString(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzPlainJSONString: what the fast path accepts, encoding/json decodes
// to the same string.
func FuzzPlainJSONString(f *testing.F) {
	for _, seed := range []string{`"10.0.0.1"`, `""`, `"a\"b"`, `"\u00e9"`, `"`, "\"\x01\"", `"a"b"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainJSONString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("plainJSONString(%q) = %q, but encoding/json refuses it: %v", raw, got, err)
		}
		if got != want {
			t.Fatalf("plainJSONString(%q) = %q, encoding/json %q", raw, got, want)
		}
	})
}

// A field given under two spellings is refused naming both, whatever the
// order of the body.
func TestParseTwoSpellings(t *testing.T) {
	k := Builtin().Lookup(Config, "Port")
	for _, raw := range []string{`{"Speed":1000,"speed":10000}`, `{"speed":10000,"Speed":1000}`} {
		body, err := DecodeBody([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.Parse(body)
		if err == nil || !strings.Contains(err.Error(), "Speed and speed both set field Speed") {
			t.Errorf("Parse(%s): %v", raw, err)
		}
	}
}
