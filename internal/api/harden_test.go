package api

import (
	"testing"
)

// TestCanonicalKeySpellings: every spelling of an address or name is the one
// object; it is found by any spelling and returned in the canonical one.
func TestCanonicalKeySpellings(t *testing.T) {
	s := newTxnServer(t)
	for _, tc := range []struct {
		kind, field, canonical string
		spellings              []string
	}{
		{"NtpServer", "IpAddr", "2001:db8::1", []string{"2001:db8::1", "2001:DB8::1", "2001:0db8::1", "2001:db8:0:0:0:0:0:1"}},
		{"NtpServer", "IpAddr", "192.0.2.77", []string{"192.0.2.77", "::ffff:192.0.2.77"}},
		{"NtpServer", "IpAddr", "ntp.example.com", []string{"ntp.example.com", "NTP.EXAMPLE.COM", "ntp.example.com."}},
		{"ConfigArchiveServer", "IpAddr", "arc.example.com", []string{"ARC.example.com.", "arc.example.com", "Arc.Example.Com"}},
	} {
		var id string
		for i, sp := range tc.spellings {
			code, body, _ := s.do("POST", "/config/"+tc.kind, `{"`+tc.field+`":"`+sp+`"}`)
			if i == 0 {
				if code != 201 {
					t.Fatalf("create %s %q: %d %v", tc.kind, sp, code, body)
				}
				id, _ = body["ObjectId"].(string)
				continue
			}
			if code != 409 || body["ObjectId"] != id {
				t.Fatalf("create %s %q after %q: %d %v; want 409 naming %s", tc.kind, sp, tc.spellings[0], code, body, id)
			}
		}
		for _, sp := range tc.spellings {
			code, body, _ := s.do("GET", "/config/"+tc.kind, `{"`+tc.field+`":"`+sp+`"}`)
			obj, _ := body["Object"].(map[string]any)
			if code != 200 || body["ObjectId"] != id || obj[tc.field] != tc.canonical {
				t.Fatalf("GET %s %q: %d %v; want %s with %s %q", tc.kind, sp, code, body, id, tc.field, tc.canonical)
			}
		}
		code, body, _ := s.do("GET", "/config/"+tc.kind+"s", ``)
		if code != 200 || body["ObjCount"] != float64(1) {
			t.Fatalf("list %s: %d %v; want one object", tc.kind, code, body)
		}
		if code, body, _ := s.do("DELETE", "/config/"+tc.kind, `{"`+tc.field+`":"`+tc.spellings[len(tc.spellings)-1]+`"}`); code != 200 {
			t.Fatalf("delete %s by another spelling: %d %v", tc.kind, code, body)
		}
	}
}

// TestSameAddressOtherVRF: the address rule is per VRF; another VRF (or the
// same port after its address moved) may hold the address.
func TestSameAddressOtherVRF(t *testing.T) {
	s := newTxnServer(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort2","IpAddr":"10.0.0.1/24","Vrf":"red"}`},
		{"PATCH", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.0.1.1/24"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort3","IpAddr":"10.0.0.1/24"}`},
	} {
		if code, body, _ := s.do(c.method, c.path, c.body); code != 200 && code != 201 {
			t.Fatalf("%s %s %s: %d %v", c.method, c.path, c.body, code, body)
		}
	}
	// Swapping two addresses in one candidate is fine: the rule looks at
	// the result, not at each step.
	code, body, _ := s.do("POST", "/candidates", `{}`)
	if code != 201 {
		t.Fatalf("candidate: %d %v", code, body)
	}
	cand := "/candidates/" + body["CandidateId"].(string)
	for _, c := range []string{
		`{"IntfRef":"fpPort1","IpAddr":"10.0.9.1/24"}`,
		`{"IntfRef":"fpPort3","IpAddr":"10.0.1.1/24"}`,
		`{"IntfRef":"fpPort1","IpAddr":"10.0.0.1/24"}`,
	} {
		if code, body, _ := s.do("PATCH", cand+"/config/IPv4Intf", c); code != 200 {
			t.Fatalf("stage %s: %d %v", c, code, body)
		}
	}
	if code, body, _ := s.do("POST", cand+"/commit", `{}`); code != 200 {
		t.Fatalf("commit of a swap: %d %v", code, body)
	}
}
