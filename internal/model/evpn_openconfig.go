package model

import "slices"

// The OpenConfig paths of the VXLAN and EVPN kinds (openconfig-evpn
// 0.11.0 of release v5.9.0, used by openconfig-network-instance). The
// VTEP is the default instance's one VXLAN endpoint, a connection point
// and endpoint of fixed names (swmgr has one VTEP, so no name of its
// own): its source interface and its local VNIs (local-endpoint-vnis: an
// L2 VNI bridged with a VLAN, the bridge domain; an L3 VNI of a VRF). An
// L3 VNI is also the EVPN instance of its VRF's network instance (an
// L3VRF): its RD and route targets. What does not map is in docs/gnmi.md.
const (
	ocVTEPPath     = "/network-instances/network-instance[name=default]/connection-points/connection-point[connection-point-id=VXLAN]/endpoints/endpoint[endpoint-id=VTEP]/vxlan"
	ocLocalVNIPath = ocVTEPPath + "/local-endpoint-vnis/local-endpoint-vni[vni=@Vni]"
	ocVNIStatePath = ocVTEPPath + "/endpoint-vnis/endpoint-vni[vni=@Vni]"
	ocL3EVIPath    = "/network-instances/network-instance[name=@Vrf]/evpn/evpn-instances/evpn-instance[evi=@Vni]"
)

func evpnOpenConfigLeaves() []OpenConfigLeaf {
	return slices.Concat(
		ocConfigState(ocVTEPPath, "source-interface", "VxlanEndpoint", "SourceInterface", "nonempty"),
		// An L2 VNI: read and written.
		ocConfigState(ocLocalVNIPath, "vni", "VxlanInstance", "Vni", ""),
		ocConfigState(ocLocalVNIPath, "vni-type", "VxlanInstance", "Vni", "vnil2"),
		ocConfigState(ocLocalVNIPath, "bridge-domain", "VxlanInstance", "VlanId", ""),
		[]OpenConfigLeaf{
			// An L3 VNI among the local ones: read only (a write to a
			// local-endpoint-vni is an L2 VNI's); written as its VRF's EVI.
			ocState(ocLocalVNIPath+"/state/vni", "EvpnL3Vni", "Vni", ""),
			ocState(ocLocalVNIPath+"/state/vni-type", "EvpnL3Vni", "Vni", "vnil3"),
			ocState(ocLocalVNIPath+"/state/l3-vrf-name", "EvpnL3Vni", "Vrf", ""),
			// The VNIs EVPN runs (EvpnVniState, from FRR on the Linux backend).
			ocState(ocVNIStatePath+"/state/vni", "EvpnVniState", "Vni", ""),
			ocState(ocVNIStatePath+"/state/vni-type", "EvpnVniState", "Type", ""),
			ocState(ocVNIStatePath+"/state/l3-vrf-name", "EvpnVniState", "Vrf", "nonempty"),
		},
		// The L3 VNI as its VRF's EVPN instance.
		ocConfigState(ocL3EVIPath, "evi", "EvpnL3Vni", "Vni", ""),
		ocConfigState(ocL3EVIPath, "route-distinguisher", "EvpnL3Vni", "RouteDistinguisher", "nonempty"),
		ocConfigState(ocL3EVIPath+"/vxlan", "vni", "EvpnL3Vni", "Vni", ""),
		ocConfigState(ocL3EVIPath+"/import-export-policy", "import-route-target", "EvpnL3Vni", "ImportRouteTargets", ""),
		ocConfigState(ocL3EVIPath+"/import-export-policy", "export-route-target", "EvpnL3Vni", "ExportRouteTargets", ""),
	)
}

// ocConfigState is a leaf of a kind's field in both of OpenConfig's
// containers under base: config (read and written) and state.
func ocConfigState(base, leaf, kind, field, conv string) []OpenConfigLeaf {
	return []OpenConfigLeaf{
		{Path: base + "/config/" + leaf, Kind: kind, Field: field, Conv: conv},
		ocState(base+"/state/"+leaf, kind, field, conv),
	}
}
