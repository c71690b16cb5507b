package test

import (
	"strings"
	"testing"
)

// TestNDPGlobalThroughTheFrontDoors: NDPGlobal at FlexSwitch's defaults
// (the SDK's updateNDPGlobal sends every field) says the platform's own
// timers are in effect; a RetransmitInterval that would flood a link is a
// 400 naming the field that changes nothing; other values are in effect,
// on the simulated switch as on a Linux one.
func TestNDPGlobalThroughTheFrontDoors(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 200, "PATCH", "/config/NDPGlobal", `{"Vrf":"default","ReachableTime":10,"RetransmitInterval":1,"RouterAdvertisementInterval":5}`)
	inEffect := func(want ...string) {
		t.Helper()
		got := s.expect(t, 200, "GET", "/state/NDPGlobal", "")
		for _, w := range want {
			if !strings.Contains(string(got.raw), w) {
				t.Errorf("state lacks %s: %s", w, got.raw)
			}
		}
	}
	inEffect(`"ReachableTimeMsInEffect":30000`, `"RetransmitIntervalMsInEffect":1000`, `"RouterAdvertisementIntervalInEffect":10`)
	r := s.do(t, "PATCH", "/config/NDPGlobal", `{"RetransmitInterval":50}`)
	if r.code != 400 || !strings.Contains(string(r.raw), "RetransmitInterval") {
		t.Errorf("RetransmitInterval 50: %d %s, want a 400 naming the field", r.code, r.raw)
	}
	if got := s.expect(t, 200, "GET", "/config/NDPGlobal", ""); !strings.Contains(string(got.raw), `"RetransmitInterval":1`) {
		t.Errorf("a refused PATCH changed NDPGlobal: %s", got.raw)
	}
	s.expect(t, 200, "PATCH", "/config/NDPGlobal", `{"ReachableTime":2,"RetransmitInterval":500,"RouterAdvertisementInterval":3}`)
	inEffect(`"ReachableTimeMsInEffect":120000`, `"RetransmitIntervalMsInEffect":500`, `"RouterAdvertisementIntervalInEffect":3`)
}
