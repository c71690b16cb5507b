package sim

import (
	"slices"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// Every interface kind of the model has its resolution on the simulated
// switch; a kind declared without one is named.
func TestEveryInterfaceKindResolves(t *testing.T) {
	if missing := New(Options{}).intfs.Missing(); len(missing) != 0 {
		t.Errorf("interface kinds the simulated switch cannot resolve: %v", missing)
	}
	lag := &model.Kind{Name: "LagTest", Class: model.Config, Fields: []*model.Field{{Name: "Name", Type: model.String, Key: true}},
		Interface: &model.Interface{Prefix: "lag", Noun: "a LAG", Like: "a LAG like lag1", Form: "lag<N>",
			Key: func(name string) (string, bool, string) { return name, true, "" }}}
	reg, err := model.NewRegistry(append(model.Builtin().Kinds(), lag)...)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Model: reg})
	if missing := s.intfs.Missing(); !slices.Equal(missing, []string{"LagTest"}) {
		t.Errorf("missing %v; want [LagTest]", missing)
	}
	if _, err := s.intfs.Resolve("lag1"); err == nil {
		t.Error("an interface of a kind the dataplane cannot resolve resolved")
	}
}

// An address's state follows its interface, of each kind.
func TestAddressStateFollowsItsInterface(t *testing.T) {
	reg := model.Builtin()
	s := New(Options{Ports: 2})
	s.mu.Lock()
	s.ports["fpPort1"] = &portState{ifIndex: 7, operUp: true, lastUp: "t1", lastDown: "t0"}
	s.applied["Vlan"] = map[string]model.Object{"10": {"VlanId": int64(10), "AdminState": "UP", "AutoState": "DOWN"}}
	s.logical["Loopback1"] = 2
	s.mu.Unlock()
	ipv4 := reg.Lookup(model.Config, "IPv4Intf")
	for _, tt := range []struct {
		intf string
		want model.Object
	}{
		{"fpPort1", model.Object{"OperState": "UP", "IfIndex": int64(7), "L2IntfType": "Port", "L2IntfId": int64(1), "NumUpEvents": int64(1), "LastUpEventTime": "t1", "LastDownEventTime": "t0"}},
		{"fpPort2s1", model.Object{"OperState": "DOWN", "L2IntfType": "Port", "L2IntfId": int64(2)}},
		{"vlan10", model.Object{"OperState": "UP", "IfIndex": vlanIfIndex(10), "L2IntfType": "Vlan", "L2IntfId": int64(10), "NumUpEvents": int64(1)}},
		{"vlan20", model.Object{"OperState": "DOWN", "IfIndex": vlanIfIndex(20), "L2IntfType": "Vlan", "L2IntfId": int64(20)}},
		{"Loopback1", model.Object{"OperState": "UP", "IfIndex": logicalIfIndex(2), "L2IntfType": "Loopback", "L2IntfId": int64(0), "NumUpEvents": int64(1)}},
	} {
		o := ipv4.Defaults()
		o["IntfRef"], o["IpAddr"] = tt.intf, "10.1.1.1/24"
		st, err := s.Dataplane()["IPv4Intf"].State(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.want {
			if !model.EqualValue(st[k], v) {
				t.Errorf("%s: %s = %v; want %v (state %v)", tt.intf, k, st[k], v, st)
			}
		}
	}
}
