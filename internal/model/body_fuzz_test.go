package model

import (
	"errors"
	"net/url"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// FuzzBodyParse feeds arbitrary bodies to the body parser and every kind's
// field parser and validator: they may refuse, always with an *apierr.Error
// of status 400, and never panic; what they accept encodes and parses back
// to the same object.
func FuzzBodyParse(f *testing.F) {
	for _, seed := range []string{
		`{"IpAddr":"10.0.0.1","MinPoll":6}`, `{"IntfRef":"fpPort1","speed":10000}`, `{"NAME":"bob","Password":"longenough"}`,
		`{"SrcIntfRefList":["fpPort1","fpPort2"]}`, `{"a":{"b":[1,2,{"c":null}]}}`, `[1,2]`, `"x"`, `{"x":1e400}`, `{"Mtu":-0}`,
		`{"Description":"\u2028\ud800"}`, `{"IpAddr":"10.0.0.1"} trailing`, ``, `{`, `{"Timezone":"Europe/Paris"}`,
	} {
		f.Add([]byte(seed))
	}
	reg := Builtin()
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := DecodeBody(data)
		if err != nil {
			checkBadRequest(t, err)
			return
		}
		for _, k := range reg.Kinds() {
			given, err := k.Parse(body)
			if err != nil {
				checkBadRequest(t, err)
				continue
			}
			obj := k.Defaults()
			for n, v := range given {
				obj[n] = v
			}
			if err := k.Validate(obj); err != nil {
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status >= 500 {
					t.Fatalf("%s: validation error %v is not a client error", k.Name, err)
				}
				continue
			}
			// What is valid round-trips through the canonical encoding.
			enc := k.AppendGivenJSON(nil, obj)
			back, err := DecodeBody(enc)
			if err != nil {
				t.Fatalf("%s: encoding %q does not decode: %v", k.Name, enc, err)
			}
			again, err := k.Parse(back)
			if err != nil {
				t.Fatalf("%s: encoding %q does not parse: %v", k.Name, enc, err)
			}
			if string(k.AppendGivenJSON(nil, again)) != string(enc) {
				t.Fatalf("%s: %q does not round-trip", k.Name, enc)
			}
		}
	})
}

// FuzzQueryKey feeds arbitrary query strings to the key parser.
func FuzzQueryKey(f *testing.F) {
	for _, seed := range []string{"IpAddr=10.0.0.1", "IntfRef=fpPort1&Count=3", "MinPoll=x", "Vrf=red&NeighborAddress=10.0.0.2", "%zz", "a=1&a=2"} {
		f.Add(seed)
	}
	reg := Builtin()
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, k := range reg.Kinds() {
			if _, err := k.ParseQuery(q); err != nil {
				checkBadRequest(t, err)
			}
		}
	})
}

func checkBadRequest(t *testing.T, err error) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Message == "" || ae.Code == "" {
		t.Fatalf("refusal %v is not a 400 *apierr.Error with a code and message", err)
	}
}
