package frr

import (
	"fmt"
	"testing"
)

// evpnScale is a configuration with n L2 VNIs, each with its RD and route
// targets (a VNI with automatic ones renders no line at all).
func evpnScale(n int) Config {
	cfg := Config{Instances: []Instance{{ASNum: "65001", RouterID: "10.255.0.1"}},
		Neighbors: []Neighbor{{NeighborAddress: "10.0.0.2", PeerAS: "65002"}},
		EVPN:      EVPN{AdvertiseAllVNI: true, Neighbors: []EVPNNeighbor{{Name: "10.0.0.2"}}}}
	for i := 1; i <= n; i++ {
		vni := uint32(10000 + i)
		rt := fmt.Sprintf("65000:%d", vni)
		cfg.EVPN.VNIs = append(cfg.EVPN.VNIs, VNI{VNI: vni, RD: fmt.Sprintf("10.255.0.1:%d", i), Import: []string{rt}, Export: []string{rt}})
	}
	return cfg
}

// BenchmarkEVPNPlan4000VNIs renders 4,000 VNIs with their targets and
// diffs them against FRR's running configuration: empty (all 4,000 are
// sent) and already the same (nothing is), the work of one apply besides
// FRR's own.
func BenchmarkEVPNPlan4000VNIs(b *testing.B) {
	cfg := evpnScale(4000)
	want, err := cfg.render()
	if err != nil {
		b.Fatal(err)
	}
	// FRR's running configuration of the same, as parseRunning reads it.
	running, _ := cfg.render()
	if d := diff(running, want); len(d) != 0 {
		b.Fatalf("the same configuration plans %d commands", len(d))
	}
	b.ResetTimer()
	for range b.N {
		w, _ := cfg.render()
		if cmds := diff(nil, w); len(cmds) < 4*4000 {
			b.Fatalf("%d commands", len(cmds))
		}
		if cmds := diff(running, w); len(cmds) != 0 {
			b.Fatalf("%d commands", len(cmds))
		}
	}
}
