package gnmi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// TestMemberStateApply: the objects membership leaves gather are read
// with their revision; a commit the read holds changes nothing; a later
// one gives, on its first change of the kind, the objects holding the
// members it moved before and after all its changes of the kind.
func TestMemberStateApply(t *testing.T) {
	fx := start(t, Options{})
	makeVlans(fx, 10, 20)
	fx.f.MustApply(fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort1"}}))
	ms, err := fx.srv.readMembers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ms.rev != fx.f.E.LastCommit() || len(ms.kinds["Vlan"].objs) != 2 {
		t.Fatalf("read %d VLANs at revision %d; want 2 at %d", len(ms.kinds["Vlan"].objs), ms.rev, fx.f.E.LastCommit())
	}
	diff := func(op, before, after string) *change {
		return &change{Diff: engine.Diff{Kind: "Vlan", Op: op, Before: json.RawMessage(before), After: json.RawMessage(after)}}
	}
	old := &decodedEvent{changes: []*change{diff("update", `{"VlanId":10}`, `{"VlanId":10,"UntagIntfList":["fpPort1"]}`)}}
	ms.apply(ms.rev, old)
	if old.changes[0].members != nil {
		t.Error("a commit the read holds was applied")
	}
	// One commit: fpPort1 leaves VLAN 10 and joins 20 tagged, fpPort2
	// joins 30, made with it.
	ev := &decodedEvent{changes: []*change{
		diff("update", `{"VlanId":10,"UntagIntfList":["fpPort1"]}`, `{"VlanId":10,"UntagIntfList":[]}`),
		diff("update", `{"VlanId":20}`, `{"VlanId":20,"IntfList":["fpPort1"]}`),
		diff("create", `null`, `{"VlanId":30,"IntfList":["fpPort2"]}`),
	}}
	ms.apply(ms.rev+1, ev)
	mc := ev.changes[0].members
	if mc == nil || ev.changes[1].members != nil || ev.changes[2].members != nil {
		t.Fatalf("members on the changes: %v %v %v; want on the first alone", mc, ev.changes[1].members, ev.changes[2].members)
	}
	ids := func(objs []map[string]json.RawMessage) (out []string) {
		for _, o := range objs {
			out = append(out, string(o["VlanId"]))
		}
		return out
	}
	if !mc.only["fpPort1"] || !mc.only["fpPort2"] || len(mc.only) != 2 {
		t.Errorf("members moved: %v; want fpPort1, fpPort2", mc.only)
	}
	if got := ids(mc.was); len(got) != 1 || got[0] != "10" {
		t.Errorf("before: VLANs %v hold them; want 10", got)
	}
	if got := ids(mc.is); len(got) != 2 || got[0] != "20" || got[1] != "30" {
		t.Errorf("after: VLANs %v hold them; want 20, 30", got)
	}
	if len(ms.kinds["Vlan"].objs) != 3 || ms.rev != fx.f.E.LastCommit()+1 {
		t.Errorf("%d VLANs at revision %d after the commit", len(ms.kinds["Vlan"].objs), ms.rev)
	}
}
