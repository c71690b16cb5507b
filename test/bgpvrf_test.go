package test

import (
	"fmt"
	"strings"
	"testing"
)

// TestBGPVrfRedistributesOverREST: a tenant VRF's BGP instance
// redistributes its connected subnets (what an EVPN L3 VNI advertises as
// type-5 routes), set over REST as BGPGlobal's are: the sources read back
// canonical; a source that is not one, or given twice, is refused with 400
// naming it (and BGPVrf as the object) and changes nothing.
func TestBGPVrfRedistributesOverREST(t *testing.T) {
	s := startServer(t, "", "--ports", "2")
	s.expect(t, 201, "POST", "/config/Vrf", `{"Vrf":"red"}`)
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001"}`)
	s.expect(t, 201, "POST", "/config/BGPVrf", `{"Name":"red","Redistribution":[{"Sources":"connected"}]}`)
	read := func() string {
		return fmt.Sprint(s.expect(t, 200, "GET", "/config/BGPVrf?Name=red", "").object()["Redistribution"])
	}
	if got := read(); got != "[map[Policy: Sources:CONNECTED]]" {
		t.Fatalf("BGPVrf red redistributes %s, want CONNECTED", got)
	}
	for _, c := range []struct{ body, says string }{
		{`{"Name":"red","Redistribution":[{"Sources":"RIP"}]}`, `RIP\" is not a source`},
		{`{"Name":"red","Redistribution":[{"Sources":"CONNECTED"},{"Sources":"STATIC,CONNECTED"}]}`, "CONNECTED is redistributed twice"},
	} {
		r := s.expect(t, 400, "PATCH", "/config/BGPVrf", c.body)
		if !strings.Contains(string(r.raw), c.says) || r.body["Error"].(map[string]any)["Object"] != "BGPVrf" {
			t.Errorf("PATCH %s: %s; want it to say %q", c.body, r.raw, c.says)
		}
		if got := read(); got != "[map[Policy: Sources:CONNECTED]]" {
			t.Errorf("a refused PATCH changed the redistribution to %s", got)
		}
	}
}
