package sim

import (
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestFlexSwitchStateFields: the FlexSwitch fields of the state forms
// carry what the simulated switch simulates.
func TestFlexSwitchStateFields(t *testing.T) {
	reg := model.Builtin()
	pk := reg.Lookup(model.Config, "Port")
	ik := reg.Lookup(model.Config, "IPv4Intf")
	nk := reg.Lookup(model.Config, "BGPv4Neighbor")
	s := New(Options{Ports: 2})
	down, up := port(reg, "fpPort1", nil), port(reg, "fpPort1", model.Object{"AdminState": "UP"})
	intf := ik.Defaults()
	intf["IntfRef"], intf["IpAddr"] = "fpPort1", "10.1.1.1/30"
	nb := nk.Defaults()
	nb["NeighborAddress"], nb["PeerAS"], nb["BfdEnable"] = "10.1.1.2", "65002", true
	steps := []backend.Change{
		{Kind: pk, Op: backend.Create, Key: "fpPort1", After: down},
		{Kind: pk, Op: backend.Update, Key: "fpPort1", Before: down, After: up},
	}
	if err := s.Apply(ctx, steps); err != nil {
		t.Fatal(err)
	}
	st, err := s.State(ctx, pk, up)
	if err != nil {
		t.Fatal(err)
	}
	if st.Str("ConfigMode") != "L2" || st.Int("Pvid") != 1 {
		t.Errorf("port without an address: ConfigMode %q Pvid %d, want L2 and 1", st.Str("ConfigMode"), st.Int("Pvid"))
	}
	if err := s.Apply(ctx, []backend.Change{{Kind: ik, Op: backend.Create, Key: "fpPort1", After: intf}, {Kind: nk, Op: backend.Create, Key: nk.Key(nb), After: nb}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let the simulated traffic count
	st, err = s.State(ctx, pk, up)
	if err != nil {
		t.Fatal(err)
	}
	pkts := st.Int("IfInUcastPkts") + st.Int("IfOutUcastPkts")
	if st.Str("ConfigMode") != "L3" || pkts == 0 || st.Int("IfEtherPkts") != pkts || st.Int("IfEtherPkts256To511Octets") != pkts || st.Int("IfEtherCRCAlignError") != 0 {
		t.Errorf("port up with an address: %v", st)
	}
	ist, err := s.State(ctx, ik, intf)
	if err != nil {
		t.Fatal(err)
	}
	if ist.Str("OperState") != "UP" || ist.Str("LastUpEventTime") == "" {
		t.Errorf("interface on an up port: %v", ist)
	}
	nst, err := s.State(ctx, nk, nb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.ParseDuration(nst.Str("SessionStateDuration")); err != nil || nst.Str("BfdNeighborState") != "down" {
		t.Errorf("neighbor: SessionStateDuration %q (%v), BfdNeighborState %q", nst.Str("SessionStateDuration"), err, nst.Str("BfdNeighborState"))
	}
	if err := s.Apply(ctx, []backend.Change{{Kind: ik, Op: backend.Delete, Key: "fpPort1", Before: intf}}); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.State(ctx, pk, up); st.Str("ConfigMode") != "L2" {
		t.Errorf("after the address is removed: ConfigMode %q, want L2", st.Str("ConfigMode"))
	}
}
