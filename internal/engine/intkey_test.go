package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// withDrivers is a backend with extra (do-nothing) drivers, for test kinds.
type withDrivers struct {
	backend.Backend
	extra []string
}

func (w withDrivers) Drivers() map[string]*backend.Driver {
	ds := w.Backend.Drivers()
	for _, name := range w.extra {
		ds[name] = &backend.Driver{Apply: func(context.Context, backend.Change) (model.Object, error) { return nil, nil }}
	}
	return ds
}

// Integer keys page like string keys, and are the targets and sources of
// references: a test kind refers to a Vlan by its integer VlanId.
func TestIntegerKeyPagingAndReferences(t *testing.T) {
	note := &model.Kind{Name: "VlanNote", Class: model.Config, Fields: []*model.Field{
		{Name: "Name", Type: model.String, Key: true},
		{Name: "Vlan", Type: model.Int, Ref: "Vlan"},
	}}
	reg, err := model.NewRegistry(append(model.Builtin().Kinds(), note)...)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, t.TempDir(), reg, func(b backend.Backend) backend.Backend { return withDrivers{b, []string{"VlanNote"}} })
	ctx := context.Background()
	var edits []Edit
	for _, id := range []int64{4000, 7, 300, 1, 25, 4094, 2, 99, 1000, 3, 17, 42, 8} {
		edits = append(edits, f.edit(backend.Create, "Vlan", model.Object{"VlanId": id}))
	}
	f.mustApply(edits...)
	f.mustApply(f.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(5)}))

	// Pages of 4 give every VLAN once, in creation order.
	k := f.kind("Vlan")
	var got []int64
	for marker, pages := uint64(0), 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		page, err := f.e.List(ctx, k, marker, 4, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Objects    []struct{ Object struct{ VlanId int64 } }
			MoreExist  bool
			NextMarker uint64
		}
		if err := json.Unmarshal(page, &p); err != nil {
			t.Fatalf("%v: %s", err, page)
		}
		for _, o := range p.Objects {
			got = append(got, o.Object.VlanId)
		}
		if !p.MoreExist {
			break
		}
		marker = p.NextMarker
	}
	if want := "[4000 7 300 1 25 4094 2 99 1000 3 17 42 8 5]"; fmt.Sprint(got) != want {
		t.Fatalf("paged VlanIds %v; want %s", got, want)
	}

	// References by an integer key.
	f.mustApply(f.edit(backend.Create, "VlanNote", model.Object{"Name": "uplink", "Vlan": int64(300)}))
	if _, err := f.apply(f.edit(backend.Create, "VlanNote", model.Object{"Name": "nowhere", "Vlan": int64(301)})); status(err) != http.StatusBadRequest {
		t.Errorf("a note on the missing VLAN 301: %v; want a 400 (dangling reference)", err)
	}
	if _, err := f.apply(f.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(300)})); status(err) != http.StatusConflict {
		t.Errorf("deleting VLAN 300 while a note refers to it: %v; want a 409", err)
	}
	// Deleting both in one commit, and moving a reference, is fine.
	f.mustApply(f.edit(backend.Update, "VlanNote", model.Object{"Name": "uplink", "Vlan": int64(7)}))
	f.mustApply(f.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(300)}))
	f.mustApply(f.edit(backend.Delete, "VlanNote", model.Object{"Name": "uplink"}), f.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(7)}))
}
