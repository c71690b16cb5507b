package gnmi

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/swmgr/swmgr/internal/model"
)

// An unnumbered interface over OpenConfig's ipv4/unnumbered: written with
// its interface-ref, read back in config and state, refused with the
// model's reason (no address to lend), enabled false refused, deleted with
// its container.
func TestOpenConfigUnnumbered(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		fx.f.Edit(model.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		fx.f.Edit(model.Create, "LogicalIntf", model.Object{"Name": "Loopback2"}))
	const un = "/interfaces/interface[name=fpPort1]/subinterfaces/subinterface[index=0]/ipv4/unnumbered"
	runOCSteps(t, fx, un, []ocStep{
		{name: "borrow Loopback1's address", upd: [][2]string{{un + "/config/enabled", `true`}, {un + "/interface-ref/config/interface", `"Loopback1"`}},
			get: un + "/interface-ref/config", want: []string{"/interface-ref/config/interface=\"Loopback1\"", "/interface-ref/config/subinterface=0"}},
		{name: "its state", get: un + "/state", want: []string{"/state/enabled=true"}},
		{name: "enabled false", upd: [][2]string{{un + "/config/enabled", `false`}}, code: codes.InvalidArgument, msg: "delete the unnumbered container"},
		{name: "a loopback with no address", upd: [][2]string{{un + "/interface-ref/config/interface", `"Loopback2"`}}, code: codes.InvalidArgument, msg: "Loopback2 has no IPv4 address"},
		{name: "another subinterface", upd: [][2]string{{un + "/interface-ref/config/subinterface", `1`}}, code: codes.InvalidArgument, msg: "subinterface 0"},
		{name: "delete the container", del: []string{un}, get: un + "/interface-ref/config"},
	})
	if o := fx.f.Object("IPv4Unnumbered", "fpPort1"); o != nil {
		t.Errorf("the IPv4Unnumbered is left after its container's delete: %v", o)
	}
}

// The VTEP, the local VNIs and an L3 VNI's EVPN instance over
// openconfig-evpn: an L2 VNI written as a local-endpoint-vni with its
// bridge domain, an L3 VNI read among the local ones and written as its
// VRF's evpn-instance (RD, route targets).
func TestOpenConfigEVPN(t *testing.T) {
	fx := start(t, Options{})
	makeVlans(fx, 10, 4000)
	fx.f.MustApply(fx.f.Edit(model.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		fx.f.Edit(model.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		fx.f.Edit(model.Create, "Vrf", model.Object{"Vrf": "red"}))
	const vtep = "/network-instances/network-instance[name=default]/connection-points/connection-point[connection-point-id=VXLAN]/endpoints/endpoint[endpoint-id=VTEP]/vxlan"
	const evi = "/network-instances/network-instance[name=red]/evpn/evpn-instances/evpn-instance[evi=5000]"
	runOCSteps(t, fx, vtep, []ocStep{
		{name: "the VTEP's source", upd: [][2]string{{vtep + "/config/source-interface", `"Loopback1"`}},
			get: vtep + "/state/source-interface", want: []string{"/state/source-interface=\"Loopback1\""}},
		{name: "an L2 VNI on VLAN 10", upd: [][2]string{{vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=100]/config/vni-type", `"L2"`},
			{vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=100]/config/bridge-domain", `10`}},
			get: vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=100]/config", want: []string{
				"/local-endpoint-vnis/local-endpoint-vni[vni=100]/config/bridge-domain=10",
				"/local-endpoint-vnis/local-endpoint-vni[vni=100]/config/vni=100",
				"/local-endpoint-vnis/local-endpoint-vni[vni=100]/config/vni-type=\"L2\"",
			}},
		{name: "an L3 VNI written as a local one", upd: [][2]string{{vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=200]/config/vni-type", `"L3"`}},
			code: codes.InvalidArgument, msg: "evpn-instance"},
		{name: "a second VNI on VLAN 10 (the model's check)", upd: [][2]string{{vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=101]/config/bridge-domain", `10`}},
			code: codes.FailedPrecondition, msg: "VLAN 10 would carry two VNIs"},
	})
	fx.f.MustApply(fx.f.Edit(model.Create, "EvpnL3Vni", model.Object{"Vrf": "red", "Vni": int64(5000), "VlanId": int64(4000)}))
	runOCSteps(t, fx, "", []ocStep{
		{name: "the L3 VNI's RD and route targets", upd: [][2]string{{evi + "/config/route-distinguisher", `"10.255.0.1:5"`},
			{evi + "/import-export-policy/config/import-route-target", `["65000:5000","65001:5000"]`}},
			get: evi + "/state", want: []string{
				evi + "/state/evi=5000",
				evi + "/state/route-distinguisher=\"10.255.0.1:5\"",
			}},
		{name: "its route targets", get: evi + "/import-export-policy/state", want: []string{
			evi + "/import-export-policy/state/export-route-target=[]",
			evi + "/import-export-policy/state/import-route-target=[\"65000:5000\",\"65001:5000\"]",
		}},
		{name: "the L3 VNI among the local ones", get: vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=5000]/state", want: []string{
			vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=5000]/state/l3-vrf-name=\"red\"",
			vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=5000]/state/vni=5000",
			vtep + "/local-endpoint-vnis/local-endpoint-vni[vni=5000]/state/vni-type=\"L3\"",
		}},
		{name: "a route target that is not one", upd: [][2]string{{evi + "/import-export-policy/config/export-route-target", `["red"]`}}, code: codes.InvalidArgument, msg: "route target"},
	})
	if o := fx.f.Object("VxlanInstance", "100"); o == nil || o.Int("VlanId") != 10 {
		t.Errorf("the L2 VNI written over OpenConfig: %v", o)
	}
}
