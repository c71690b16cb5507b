package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
)

// checkRefusal fails unless err is a client error (*apierr.Error, 4xx, with
// a code and a message).
func checkRefusal(t *testing.T, what string, err error) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Code == "" || ae.Message == "" {
		t.Fatalf("%s: refusal %#v is not a client *apierr.Error with a code and a message", what, err)
	}
}

// FuzzDecodeBody feeds arbitrary bytes to DecodeBody and what it accepts to
// every config kind's Parse. Nothing may panic; refusals are 400s. What a
// kind parses is merged over its defaults, encoded with AppendJSON (which
// must be valid JSON that decodes and parses back to the same public
// values) and validated.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `{}`, `{`, `}`, `[]`, `null`, `"s"`, `1`, `{"a":1}{}`, `{"a":1,"a":2}`,
		`{"IpAddr":"192.0.2.1","MinPoll":6,"MaxPoll":10,"SourceIntf":"ma1","Prefer":true}`,
		`{"IntfRef":"fpPort1","speed":10000,"Mtu":9216,"BreakOutMode":"4x10","AdminState":"up"}`,
		`{"IntfRef":"fpPort1s2","IpAddr":"10.0.0.1/24","Vrf":"red"}`,
		`{"SpanSessionName":"m","DstIntfRef":"fpPort2","SrcIntfRefList":["fpPort3",null,"fpPort3"]}`,
		`{"NAME":"bob","Name":"bob","Password":"longenough","Group":"admin"}`,
		`{"IpAddr":"archive.example.com","UserName":"u","Password":"p","Nonce":"n","Passphrase":"pp","TimeStamp":"append"}`,
		`{"ASNum":"1.10","RouterId":"10.0.0.1","EBGPMaxPaths":64}`,
		`{"NeighborAddress":"10.0.0.2","PeerAS":"4294967295","HoldTime":3,"KeepaliveTime":1}`,
		`{"Timezone":"Europe/Paris","Hostname":"sw-1.example","MgmtIp":"10.0.0.5"}`,
		`{"Mtu":1e3,"Speed":-0,"IfIndex":9007199254740993,"Description":"\u2028\ud800\u0000"}`,
		`{"Description":"` + "\xff\xfe" + `"}`, `{"Vrf":{"a":[1,{"b":null}]}}`, `{"x":1e400}`,
		`{"Redistribution":[{"Sources":"connected, STATIC","Policy":""},{"Sources":"x"},null,[],{"Sources":1}]}`,
		`{"DestinationNw":"10.0.0.0","NetworkMask":"255.0.0.0","NextHop":[{"NextHopIp":"10.0.0.1","Weight":1,"NextHopIntRef":"Loopback1"},{}]}`,
		`{"IntfRef":"","NeighborAddress":"10.0.0.2","PeerAS":"1","UpdateSource":"Loopback1","MultiHopEnable":true,"MultiHopTTL":255,"BfdSessionParam":"default"}`,
		`{"Name":"Loopback1","Type":"loopback"}`, `{"Enable":true,"TranmitInterval":5,"TxRxMode":"txrx"}`,
	} {
		f.Add([]byte(seed))
	}
	reg := Builtin()
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := DecodeBody(data)
		if err != nil {
			checkRefusal(t, "DecodeBody", err)
			return
		}
		for _, k := range reg.Kinds() {
			if k.Class != Config {
				continue
			}
			given, err := k.Parse(body)
			if err != nil {
				checkRefusal(t, k.Name+".Parse", err)
				continue
			}
			for n, v := range given {
				fl := k.Field(n)
				if fl == nil || fl.Name != n {
					t.Fatalf("%s.Parse returned field %q, which is not a canonical field name", k.Name, n)
				}
				if err := fl.checkType(v); err != nil {
					t.Fatalf("%s.Parse: %s: %v", k.Name, n, err)
				}
			}
			obj := k.Defaults()
			for n, v := range given {
				obj[n] = v
			}
			enc := k.AppendJSON(nil, obj, false)
			if !json.Valid(enc) {
				t.Fatalf("%s: AppendJSON wrote invalid JSON %q", k.Name, enc)
			}
			back, err := DecodeBody(enc)
			if err != nil {
				t.Fatalf("%s: AppendJSON output %q does not decode: %v", k.Name, enc, err)
			}
			again, err := k.Parse(back)
			if err != nil {
				t.Fatalf("%s: AppendJSON output %q does not parse: %v", k.Name, enc, err)
			}
			for _, fl := range k.Fields {
				want := obj[fl.Name]
				if fl.Secret != Public {
					want = ""
				}
				if !sameValue(again[fl.Name], want) {
					t.Fatalf("%s.%s: %#v encodes as %q and parses back as %#v", k.Name, fl.Name, obj[fl.Name], enc, again[fl.Name])
				}
			}
			if err := k.Validate(obj); err != nil {
				checkRefusal(t, k.Name+".Validate", err)
				continue
			}
			if err := k.RequireFields(given); err != nil {
				checkRefusal(t, k.Name+".RequireFields", err)
			}
			// A valid object stays valid: Validate canonicalises, so a
			// second pass changes nothing.
			canon := k.AppendJSON(nil, obj, false)
			if err := k.Validate(obj); err != nil {
				t.Fatalf("%s: valid object %q is invalid on a second pass: %v", k.Name, canon, err)
			}
			if again := k.AppendJSON(nil, obj, false); string(again) != string(canon) {
				t.Fatalf("%s: Validate is not idempotent: %q then %q", k.Name, canon, again)
			}
		}
	})
}

func sameValue(a, b any) bool { return EqualValue(a, b) }

// FuzzParseQuery feeds arbitrary query strings to every kind's ParseQuery:
// nothing panics, refusals are 400s, and what is accepted has the field's
// type under its canonical name.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"", "IpAddr=192.0.2.1", "IntfRef=fpPort1&Count=3&CurrentMarker=0&NextMarker=1", "MinPoll=x", "MinPoll=-9223372036854775809",
		"Prefer=T&Prefer=0", "NAME=bob", "speed=10000", "Vrf=red&NeighborAddress=10.0.0.2", "SrcIntfRefList=a&SrcIntfRefList=b",
		"%zz", "a=1;b=2", "Name=a&NAME=b", "IpAddr=a&IpAddr=a", "dry_run=maybe", "SeqNum=7", "=", "&&&", "Name=%00",
		// The malformed forms the strict parser must refuse.
		"dry_run=true%", "dry_run=true;", "dry_run%=true", "dry_run=true&dry_run=false", "Count=0;", "Count=%zz",
		"%zz=1", "dry_run=%ff", "IpAddr=%C0%80", "=1", "NextMarker=1&NextMarker=2", "a=1&&b=2&",
	} {
		f.Add(seed)
	}
	reg := Builtin()
	f.Fuzz(func(t *testing.T, raw string) {
		strict, serr := ParseQueryString(raw, func(name string) bool { return name == "NextMarker" })
		q, err := url.ParseQuery(raw)
		if serr != nil {
			checkRefusal(t, "ParseQueryString", serr)
			return
		}
		// What the strict parser accepts, net/url reads the same way (so
		// handlers that use r.URL.Query() see exactly it), and no
		// parameter but NextMarker is given twice.
		if err != nil {
			t.Fatalf("ParseQueryString(%q) accepted what url.ParseQuery refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(strict, q) && !(len(strict) == 0 && len(q) == 0) {
			t.Fatalf("ParseQueryString(%q) = %v, url.ParseQuery = %v", raw, strict, q)
		}
		for name, vals := range strict {
			if name == "" || !utf8.ValidString(name) {
				t.Fatalf("ParseQueryString(%q) accepted the name %q", raw, name)
			}
			if len(vals) > 1 && name != "NextMarker" {
				t.Fatalf("ParseQueryString(%q) accepted %s %d times", raw, name, len(vals))
			}
			for _, v := range vals {
				if !utf8.ValidString(v) {
					t.Fatalf("ParseQueryString(%q) accepted the value %q", raw, v)
				}
			}
		}
		for _, k := range reg.Kinds() {
			got, err := k.ParseQuery(q)
			if err != nil {
				checkRefusal(t, k.Name+".ParseQuery", err)
				continue
			}
			// A field given twice (or by its name and an alias) would name
			// two objects: it must have been refused.
			spellings := map[string]int{}
			for name, vals := range q {
				if fl := k.Field(name); fl != nil && fl.Type != StringList && name != "Count" && name != "CurrentMarker" && name != "NextMarker" && name != "dry_run" {
					spellings[fl.Name] += len(vals)
				}
			}
			for n, c := range spellings {
				if c > 1 {
					t.Fatalf("%s.ParseQuery(%q) accepted %s given %d times", k.Name, raw, n, c)
				}
			}
			for n, v := range got {
				fl := k.Field(n)
				if fl == nil || fl.Name != n {
					t.Fatalf("%s.ParseQuery(%q) returned field %q, not a canonical name", k.Name, raw, n)
				}
				if err := fl.checkType(v); err != nil {
					t.Fatalf("%s.ParseQuery(%q): %s: %v", k.Name, raw, n, err)
				}
			}
			// What a query gives is checked like a body's fields.
			obj := k.Defaults()
			for n, v := range got {
				obj[n] = v
			}
			if err := k.Validate(obj); err != nil {
				checkRefusal(t, k.Name+".Validate", err)
			}
			_ = k.DescribeKey(k.Key(obj))
		}
	})
}

// FuzzDecodeFlatObject: whatever DecodeBody's fast path accepts, its
// general path (encoding/json) accepts too, with the same names and the
// same value bytes; and a body of the common form takes the fast path.
func FuzzDecodeFlatObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"a":1}`, "{\"a\" :\t\"x\" ,\n\"b\":null,\"c\":true,\"d\":false}\r\n",
		`{"IpAddr":"10.0.0.1","MinPoll":6,"MaxPoll":10}`, `{"a":-0.5e+10,"b":0,"c":-12.25E3}`,
		`{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}`, `{"":""}`, `{"é":"ü"}`,
		`{"a":1,"a":2}`, `{"a\u0062":1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`,
		`{"a":tru}`, `{"a":truex}`, `{"a":1x}`, `{"a":[1]}`, `{"a":{}}`, `{"a":1,}`, `{,}`, `{"a"}`,
		`{"a":1}x`, `{"a":1}{}`, `{"a":"x`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `[1]`, `1`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeFlatObject(data)
		if !ok {
			return
		}
		if !utf8.Valid(data) || unpairedSurrogate(data) != "" {
			return // DecodeBody refuses those before either path
		}
		slow, err := decodeBodySlow(data)
		if err != nil {
			t.Fatalf("%q: the fast path accepts what encoding/json refuses: %v", data, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: fast path %d names, encoding/json %d", data, len(fast), len(slow))
		}
		for name, raw := range slow {
			if got, ok := fast[name]; !ok || !bytes.Equal(got, raw) {
				t.Fatalf("%q: %q is %q on the fast path, %q by encoding/json", data, name, got, raw)
			}
		}
	})
}

func TestDecodeBodyFastPathTaken(t *testing.T) {
	for _, body := range []string{`{"IpAddr":"10.0.0.1","MinPoll":6,"MaxPoll":10}`, `{}`, ` {"Name":"bob","Prefer":true,"X":null,"Y":-1.5e3} `} {
		if _, ok := decodeFlatObject([]byte(body)); !ok {
			t.Errorf("%s: not on the fast path", body)
		}
	}
	for _, body := range []string{`{"a":{"b":1}}`, `{"a":[1]}`, `{"a\n":1}`, `{"a":1,"a":1}`, `{"a":1}]`} {
		if _, ok := decodeFlatObject([]byte(body)); ok {
			t.Errorf("%s: on the fast path", body)
		}
	}
}
