package sim_test

import (
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

// BenchmarkCommit4000VNIs is one commit of 4,000 VxlanInstance creates
// (VNIs 10001..14000 on VLANs 1..4000, each with its route targets)
// through the engine on the simulated switch: parse, check (references,
// the one-VNI-per-VLAN and VTEP-source rules over the whole result),
// apply, store (fsync). The VLANs and the VTEP are there before; each
// round deletes the VNIs again, untimed.
func BenchmarkCommit4000VNIs(b *testing.B) {
	const n = 4000
	f := enginetest.New(b, b.TempDir())
	setup := []engine.Edit{
		f.Edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		f.Edit(backend.Update, "VxlanEndpoint", model.Object{"Vrf": "default", "SourceInterface": "Loopback1"}),
	}
	for v := int64(1); v <= n; v++ {
		setup = append(setup, f.Edit(backend.Create, "Vlan", model.Object{"VlanId": v}))
	}
	f.MustApply(setup...)
	creates, deletes := make([]engine.Edit, 0, n), make([]engine.Edit, 0, n)
	for v := int64(1); v <= n; v++ {
		creates = append(creates, f.Edit(backend.Create, "VxlanInstance", model.Object{"Vni": 10000 + v, "VlanId": v,
			"ImportRouteTargets": []string{"65000:100"}, "ExportRouteTargets": []string{"65000:100"}}))
		deletes = append(deletes, f.Edit(backend.Delete, "VxlanInstance", model.Object{"Vni": 10000 + v}))
	}
	b.ResetTimer()
	for range b.N {
		f.MustApply(creates...)
		b.StopTimer()
		f.MustApply(deletes...)
		b.StartTimer()
	}
}
