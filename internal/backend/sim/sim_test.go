package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

var ctx = context.Background()

func port(reg *model.Registry, name string, set model.Object) model.Object {
	o := reg.Lookup(model.Config, "Port").Defaults()
	o["IntfRef"] = name
	for k, v := range set {
		o[k] = v
	}
	return o
}

func TestHardwareLimits(t *testing.T) {
	reg := model.Builtin()
	pk := reg.Lookup(model.Config, "Port")
	sk := reg.Lookup(model.Config, "Span")
	s := New(Options{Ports: 4})
	var ports []backend.Change
	for _, n := range []string{"fpPort1", "fpPort2", "fpPort3", "fpPort4"} {
		ports = append(ports, backend.Change{Kind: pk, Op: backend.Create, Key: n, After: port(reg, n, nil)})
	}
	if err := s.Apply(ctx, ports); err != nil {
		t.Fatal(err)
	}
	upd := func(name string, before, after model.Object) backend.Change {
		return backend.Change{Kind: pk, Op: backend.Update, Key: name, Before: before, After: after}
	}
	p2 := port(reg, "fpPort2", nil)
	p2b := port(reg, "fpPort2", model.Object{"BreakOutMode": "4x10"})
	tests := []struct {
		name    string
		changes []backend.Change
		status  int // 0: success
	}{
		{"unsupported speed", []backend.Change{upd("fpPort1", port(reg, "fpPort1", nil), port(reg, "fpPort1", model.Object{"Speed": int64(12345)}))}, 400},
		{"faster than the lane", []backend.Change{upd("fpPort1", port(reg, "fpPort1", nil), port(reg, "fpPort1", model.Object{"Speed": int64(100000)}))}, 400},
		{"port beyond the switch", []backend.Change{{Kind: pk, Op: backend.Create, Key: "fpPort9", After: port(reg, "fpPort9", nil)}}, 400},
		{"sub-port without breakout", []backend.Change{{Kind: pk, Op: backend.Create, Key: "fpPort3s1", After: port(reg, "fpPort3s1", model.Object{"BreakOutMode": "4x10", "Speed": int64(10000)})}}, 400},
		{"breakout then sub-port", []backend.Change{upd("fpPort2", p2, p2b), {Kind: pk, Op: backend.Create, Key: "fpPort2s1", After: port(reg, "fpPort2s1", model.Object{"BreakOutMode": "4x10", "Speed": int64(10000)})}}, 0},
		{"un-breakout with a sub-port left", []backend.Change{upd("fpPort2", p2b, p2)}, 409},
	}
	for _, tt := range tests {
		err := s.Apply(ctx, tt.changes)
		got := 0
		if err != nil {
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("%s: %v is not an *apierr.Error", tt.name, err)
			}
			got = ae.Status
		}
		if got != tt.status {
			t.Errorf("%s: status %d (%v); want %d", tt.name, got, err, tt.status)
		}
	}
	// Four mirror sessions at most.
	span := func(name string) backend.Change {
		o := sk.Defaults()
		o["SpanSessionName"], o["DstIntfRef"], o["SrcIntfRefList"] = name, "fpPort1", []string{"fpPort3"}
		return backend.Change{Kind: sk, Op: backend.Create, Key: name, After: o}
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := s.Apply(ctx, []backend.Change{span(n)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(ctx, []backend.Change{span("e")}); err == nil {
		t.Fatal("a fifth mirror session was accepted")
	}
}

func TestApplyIsAllOrNothingAndStateFollowsConfig(t *testing.T) {
	reg := model.Builtin()
	pk := reg.Lookup(model.Config, "Port")
	fail := errors.New("injected")
	var armed bool
	s := New(Options{Ports: 2, Fault: func(c backend.Change) error {
		if armed && c.Key == "fpPort2" {
			return fail
		}
		return nil
	}})
	s.Apply(ctx, []backend.Change{
		{Kind: pk, Op: backend.Create, Key: "fpPort1", After: port(reg, "fpPort1", nil)},
		{Kind: pk, Op: backend.Create, Key: "fpPort2", After: port(reg, "fpPort2", nil)},
	})
	armed = true
	err := s.Apply(ctx, []backend.Change{
		{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: port(reg, "fpPort1", nil), After: port(reg, "fpPort1", model.Object{"AdminState": "UP"})},
		{Kind: pk, Op: backend.Update, Key: "fpPort2", Before: port(reg, "fpPort2", nil), After: port(reg, "fpPort2", model.Object{"AdminState": "UP"})},
	})
	if !errors.Is(err, fail) {
		t.Fatalf("Apply = %v; want the injected fault", err)
	}
	st, _ := s.State(ctx, pk, port(reg, "fpPort1", nil))
	if st.Str("OperState") != "DOWN" || st.Int("NumUpEvents") != 1 || st.Int("NumDownEvents") != 1 {
		t.Fatalf("fpPort1 after a failed Apply: %v; want DOWN again (up and down once)", st)
	}
	armed = false
	s.Apply(ctx, []backend.Change{{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: port(reg, "fpPort1", nil), After: port(reg, "fpPort1", model.Object{"AdminState": "UP"})}})
	st, _ = s.State(ctx, pk, port(reg, "fpPort1", nil))
	if st.Str("OperState") != "UP" || st.Str("PresentInHW") != "YES" {
		t.Fatalf("fpPort1 state: %v", st)
	}
	sys, _ := s.State(ctx, reg.Lookup(model.Config, "SystemParam"), model.Object{})
	if sys.Str("Kernel") == "" || sys.Str("Distro") == "" {
		t.Fatalf("SystemParamState: %v", sys)
	}
}

// TestPortLinkChangesAreTold: a port whose AdminState moves its link is
// told to OnStateChange with its configuration and state (OperState); a
// change that moves no link is not.
func TestPortLinkChangesAreTold(t *testing.T) {
	reg := model.Builtin()
	pk := reg.Lookup(model.Config, "Port")
	var told []model.Object
	s := New(Options{Ports: 2, OnStateChange: func(kind string, o model.Object) {
		if kind == "Port" {
			told = append(told, o)
		}
	}})
	down := port(reg, "fpPort1", nil)
	up := port(reg, "fpPort1", model.Object{"AdminState": "UP", "Description": "uplink"})
	for _, c := range []backend.Change{
		{Kind: pk, Op: backend.Create, Key: "fpPort1", After: down},
		{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: down, After: up},
		{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: up, After: port(reg, "fpPort1", model.Object{"AdminState": "UP", "Description": "renamed"})},
		{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: up, After: down},
	} {
		if err := s.Apply(ctx, []backend.Change{c}); err != nil {
			t.Fatal(err)
		}
	}
	if len(told) != 2 || told[0].Str("OperState") != "UP" || told[0].Str("Description") != "uplink" || told[0].Int("NumUpEvents") != 1 ||
		told[1].Str("OperState") != "DOWN" {
		t.Errorf("told %v; want fpPort1 UP (with its description), then DOWN", told)
	}
}
