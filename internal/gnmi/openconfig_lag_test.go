package gnmi

import (
	"context"
	"slices"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/swmgr/swmgr/internal/model"
)

// A port's ethernet aggregate-id is the LAG whose IntfRefList holds it,
// in config and state; a write moves the port into that LAG's list and
// out of any other's, a delete takes it out; a LAG that does not exist,
// a value that is no name, or a LAG left without members is refused and
// changes nothing.
func TestOpenConfigAggregateID(t *testing.T) {
	fx := start(t, Options{})
	fx.f.MustApply(fx.f.Edit(model.Create, "LaPortChannel", model.Object{"IntfRef": "PortChannel1", "IntfRefList": []string{"fpPort1", "fpPort2"}}))
	fx.f.MustApply(fx.f.Edit(model.Create, "LaPortChannel", model.Object{"IntfRef": "PortChannel2", "IntfRefList": []string{"fpPort3"}}))
	const ifs = "/interfaces/interface"
	id := func(port string) string { return ifs + "[name=" + port + "]/ethernet/config/aggregate-id" }
	runOCSteps(t, fx, ifs, []ocStep{
		{name: "every port's LAG", get: ifs + "[name=*]/ethernet/config/aggregate-id", want: []string{
			`[name=fpPort1]/ethernet/config/aggregate-id="PortChannel1"`,
			`[name=fpPort2]/ethernet/config/aggregate-id="PortChannel1"`,
			`[name=fpPort3]/ethernet/config/aggregate-id="PortChannel2"`,
		}},
		{name: "in state too", get: ifs + "[name=fpPort3]/ethernet/state/aggregate-id", want: []string{
			`[name=fpPort3]/ethernet/state/aggregate-id="PortChannel2"`,
		}},
		{name: "a port joins a LAG", upd: [][2]string{{id("fpPort4"), `"PortChannel1"`}},
			get: ifs + "[name=PortChannel1]/aggregation/state/member", want: []string{
				`[name=PortChannel1]/aggregation/state/member=["fpPort1","fpPort2","fpPort4"]`,
			}},
		{name: "a port moves to another LAG", upd: [][2]string{{ifs + "[name=fpPort2]/ethernet/config", `{"aggregate-id":"PortChannel2"}`}},
			get: ifs + "[name=*]/ethernet/config/aggregate-id", want: []string{
				`[name=fpPort1]/ethernet/config/aggregate-id="PortChannel1"`,
				`[name=fpPort2]/ethernet/config/aggregate-id="PortChannel2"`,
				`[name=fpPort3]/ethernet/config/aggregate-id="PortChannel2"`,
				`[name=fpPort4]/ethernet/config/aggregate-id="PortChannel1"`,
			}},
		{name: "a LAG that does not exist", upd: [][2]string{{id("fpPort1"), `"PortChannel9"`}}, code: codes.InvalidArgument, msg: "no LaPortChannel with IntfRef PortChannel9"},
		{name: "a value that is no LAG's name", upd: [][2]string{{id("fpPort1"), `7`}}, code: codes.InvalidArgument, msg: "not a LAG's name"},
		{name: "a port leaves its LAG", del: []string{id("fpPort3")},
			get: ifs + "[name=PortChannel2]/aggregation/state/member", want: []string{
				`[name=PortChannel2]/aggregation/state/member=["fpPort2"]`,
			}},
		{name: "the last member leaving (the model's check)", del: []string{id("fpPort2")}, code: codes.InvalidArgument, msg: "at least one member"},
		{name: "state is not written", upd: [][2]string{{ifs + "[name=fpPort1]/ethernet/state/aggregate-id", `"PortChannel2"`}}, code: codes.InvalidArgument},
	})
	for lag, want := range map[string][]string{"PortChannel1": {"fpPort1", "fpPort4"}, "PortChannel2": {"fpPort2"}} {
		if got := fx.f.Object("LaPortChannel", lag).List("IntfRefList"); !slices.Equal(got, want) {
			t.Errorf("%s IntfRefList %v, want %v", lag, got, want)
		}
	}
}

// Capabilities names the models of the LAG's leaves: openconfig-if-aggregate
// (a LAG's aggregation, a port's aggregate-id) and openconfig-lacp.
func TestCapabilitiesListTheLAGModels(t *testing.T) {
	fx := start(t, Options{})
	r, err := fx.c.Capabilities(context.Background(), &gpb.CapabilityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"openconfig-if-aggregate", "openconfig-lacp"} {
		if !slices.ContainsFunc(r.GetSupportedModels(), func(m *gpb.ModelData) bool { return m.GetName() == want }) {
			t.Errorf("Capabilities lacks %s: %v", want, r.GetSupportedModels())
		}
	}
}
