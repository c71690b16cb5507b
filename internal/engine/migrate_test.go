package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// earlierModel is the model as an earlier swmgr had it: BGPv4Neighbor keyed
// by Vrf and NeighborAddress only (IntfRef a plain field), with a field
// "Legacy" that the current model no longer has, and its Description
// called "Comment".
func earlierModel(t *testing.T) *model.Registry {
	t.Helper()
	kinds := model.Builtin().Kinds()
	for _, k := range kinds {
		if k.Name != "BGPv4Neighbor" {
			continue
		}
		k.Field("IntfRef").Key = false
		k.Field("Description").Name = "Comment"
		k.Fields = append(k.Fields, &model.Field{Name: "Legacy", Type: model.String})
	}
	return registry(t, kinds)
}

// currentModel is the builtin model, which knows that BGPv4Neighbor's
// Comment is now Description.
func currentModel(t *testing.T) *model.Registry {
	t.Helper()
	kinds := model.Builtin().Kinds()
	for _, k := range kinds {
		if k.Name == "BGPv4Neighbor" {
			k.Renamed = map[string]string{"Comment": "Description"}
		}
	}
	return registry(t, kinds)
}

func registry(t *testing.T, kinds []*model.Kind) *model.Registry {
	t.Helper()
	reg, err := model.NewRegistry(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func openEngine(t *testing.T, dir string, reg *model.Registry) (*engine.Engine, *store.Store) {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(reg, st, sim.New(sim.Options{Ports: 4, Version: "test"}), box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, st
}

// TestMigrationMovesObjectsToANewKey: a key field added to a kind (FlexSwitch's
// IntfRef of BGPv4Neighbor) moves every stored object to its new store key
// at start, keeping its ObjectId, creation order and references; a field
// the model dropped is dropped, a renamed one stored under its new name;
// revisions written before still roll back.
func TestMigrationMovesObjectsToANewKey(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	meta := engine.Meta{Source: "test"}

	old, st := openEngine(t, dir, earlierModel(t))
	ok := old.Registry().Lookup(model.Config, "BGPv4Neighbor")
	create := func(k *model.Kind, fields model.Object) *engine.Outcome {
		t.Helper()
		out, err := old.Apply(ctx, []engine.Edit{{Kind: k, Op: backend.Create, Fields: fields}}, meta, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	create(old.Registry().Lookup(model.Config, "Vrf"), model.Object{"Vrf": "red"})
	first := create(ok, model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2", "PeerAS": "65002", "Legacy": "x", "Comment": "before"})
	create(ok, model.Object{"NeighborAddress": "10.0.0.3", "PeerAS": "65003"})
	if _, err := old.Apply(ctx, []engine.Edit{{Kind: ok, Op: backend.Update, Target: engine.Target{Key: model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2"}}, Fields: model.Object{"Comment": "after"}}}, meta, nil); err != nil {
		t.Fatal(err)
	}
	old.Close()
	st.Close()

	e, st := openEngine(t, dir, currentModel(t))
	defer func() { e.Close(); st.Close() }()
	k := e.Registry().Lookup(model.Config, "BGPv4Neighbor")
	var keys []string
	err := st.View(func(tx store.Txn) error {
		_, _, err := tx.List("BGPv4Neighbor", 0, 10, func(r store.Record) error {
			keys = append(keys, strings.ReplaceAll(r.Key, "\x00", "|"))
			if strings.Contains(string(r.Public), "Legacy") || strings.Contains(string(r.Public), "Comment") {
				t.Errorf("a dropped or renamed field is still stored: %s", r.Public)
			}
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys, " "); got != "red|10.0.0.2| default|10.0.0.3|" {
		t.Errorf("stored keys in creation order: %q", got)
	}
	body, _, err := e.GetByKey(ctx, k, model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2"}, false, nil)
	if err != nil || !strings.Contains(string(body), first.IDs[0].String()) || !strings.Contains(string(body), `"Description":"after"`) {
		t.Fatalf("the neighbor by its keys after the migration: %s %v", body, err)
	}
	if _, _, err := e.GetByID(ctx, k, first.IDs[0], false, nil); err != nil {
		t.Errorf("by its ObjectId: %v", err)
	}
	// Its reference to VRF red moved with it.
	vrf := e.Registry().Lookup(model.Config, "Vrf")
	_, err = e.Apply(ctx, []engine.Edit{{Kind: vrf, Op: backend.Delete, Target: engine.Target{Key: model.Object{"Vrf": "red"}}}}, meta, nil)
	if enginetest.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "NeighborAddress=10.0.0.2, IntfRef=") {
		t.Errorf("deleting a VRF a migrated neighbor uses: %v", err)
	}
	// A revision written before the migration rolls back onto the new keys:
	// back to after the first neighbor's creation.
	if _, err := history.New(e).Rollback(ctx, first.Revision, engine.Request{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	body, _, err = e.GetByKey(ctx, k, model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2"}, false, nil)
	if err != nil || !strings.Contains(string(body), `"Description":"before"`) {
		t.Errorf("after the rollback: %s %v", body, err)
	}
	if _, _, err := e.GetByKey(ctx, k, model.Object{"NeighborAddress": "10.0.0.3"}, false, nil); enginetest.Status(err) != http.StatusNotFound {
		t.Errorf("the neighbor created after the revision rolled back to: %v", err)
	}
	// Deleting the neighbor drops its reference: the VRF can go.
	for _, ed := range []engine.Edit{
		{Kind: k, Op: backend.Delete, Target: engine.Target{Key: model.Object{"Vrf": "red", "NeighborAddress": "10.0.0.2", "IntfRef": ""}}},
		{Kind: vrf, Op: backend.Delete, Target: engine.Target{Key: model.Object{"Vrf": "red"}}},
	} {
		if _, err := e.Apply(ctx, []engine.Edit{ed}, meta, nil); err != nil {
			t.Fatal(err)
		}
	}
}
