package frr

import (
	"encoding/json"
	"testing"
)

// TestPrefixCountsFromFRR: a family's counts from FRR 8.4's neighbor JSON
// and its prefix-counts walk (both as a real bgpd printed them): received
// is the walk's Adj-in only where FRR keeps the Adj-RIB-In (soft
// reconfiguration), else the accepted count; installed is the walk's best
// paths; a family the neighbor does not carry has no walk.
func TestPrefixCountsFromFRR(t *testing.T) {
	walk := map[string]uint32{"Adj-in": 3, "Damped": 0, "Removed": 0, "History": 0, "Stale": 0, "Valid": 1, "All RIB": 1, "PfxCt counted": 1, "PfxCt Best Selected": 1, "Useable": 1}
	for _, c := range []struct {
		name                string
		neighbor            string
		active              bool
		received, installed uint32
	}{
		{"soft reconfiguration", `{"inboundSoftConfigPermit":true,"acceptedPrefixCounter":2,"sentPrefixCounter":1}`, true, 3, 1},
		{"no soft reconfiguration", `{"acceptedPrefixCounter":2,"sentPrefixCounter":1}`, true, 2, 1},
		{"family not carried", `{}`, false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f frrPrefixCounts
			if err := json.Unmarshal([]byte(c.neighbor), &f); err != nil {
				t.Fatal(err)
			}
			got := f.counts()
			if got.active != c.active {
				t.Fatalf("active %v, want %v", got.active, c.active)
			}
			if got.active {
				got.setWalk(walk)
			}
			if got.Received != c.received || got.Installed != c.installed {
				t.Errorf("received %d, installed %d; want %d, %d", got.Received, got.Installed, c.received, c.installed)
			}
		})
	}
}
