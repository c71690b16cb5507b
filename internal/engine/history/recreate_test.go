package history

import (
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// TestRollbackOfARecreate: a rollback over objects deleted and created
// again since brings them back with the ObjectIds they had, also when
// others name them.
func TestRollbackOfARecreate(t *testing.T) {
	vrf := model.Object{"Vrf": "red"}
	intf := model.Object{"IntfRef": "fpPort2", "IpAddr": "10.4.0.1/24", "Vrf": "red"}
	ntp := model.Object{"IpAddr": "10.0.0.1"}
	cases := []struct {
		name    string
		commits func(f *fixture) [][]engine.Edit
	}{
		{"in one commit", func(f *fixture) [][]engine.Edit {
			return [][]engine.Edit{{
				f.Edit(backend.Delete, "IPv4Intf", intf), f.Edit(backend.Delete, "Vrf", vrf), f.Edit(backend.Delete, "NtpServer", ntp),
				f.Edit(backend.Create, "Vrf", vrf), f.Edit(backend.Create, "IPv4Intf", intf), f.Edit(backend.Create, "NtpServer", ntp),
			}}
		}},
		{"in two commits", func(f *fixture) [][]engine.Edit {
			return [][]engine.Edit{
				{f.Edit(backend.Delete, "IPv4Intf", intf), f.Edit(backend.Delete, "Vrf", vrf), f.Edit(backend.Delete, "NtpServer", ntp)},
				{f.Edit(backend.Create, "Vrf", vrf), f.Edit(backend.Create, "IPv4Intf", intf), f.Edit(backend.Create, "NtpServer", ntp)},
			}
		}},
	}
	objects := []struct{ kind, key string }{{"Vrf", "red"}, {"IPv4Intf", "fpPort2"}, {"NtpServer", "10.0.0.1"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, t.TempDir())
			f.MustApply(f.Edit(backend.Create, "Vrf", vrf), f.Edit(backend.Create, "IPv4Intf", intf), f.Edit(backend.Create, "NtpServer", ntp))
			base := f.E.Revision()
			ids := map[string]string{}
			for _, o := range objects {
				ids[o.kind] = f.id(o.kind, o.key)
			}
			for _, edits := range tc.commits(f) {
				f.MustApply(edits...)
			}
			for _, o := range objects {
				if f.id(o.kind, o.key) == ids[o.kind] {
					t.Fatalf("%s %s kept its ObjectId through a delete and a create", o.kind, o.key)
				}
			}
			if _, err := f.h.Rollback(bg, base, engine.Request{}); err != nil {
				t.Fatal(err)
			}
			for _, o := range objects {
				if got := f.id(o.kind, o.key); got != ids[o.kind] {
					t.Errorf("after the rollback %s %s has ObjectId %s; want %s, the one it had", o.kind, o.key, got, ids[o.kind])
				}
			}
			if got := f.Object("IPv4Intf", "fpPort2"); got == nil || got["IpAddr"] != "10.4.0.1/24" {
				t.Errorf("after the rollback: %v", got)
			}
		})
	}
}

// id is the ObjectId of the stored object of kind with key, or "".
func (f *fixture) id(kind, key string) string {
	var id string
	f.St.View(func(tx store.Txn) error {
		if rec, ok, _ := tx.Get(kind, key); ok {
			id = rec.ID.String()
		}
		return nil
	})
	return id
}
