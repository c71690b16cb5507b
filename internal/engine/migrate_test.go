package engine_test

import (
	"bytes"
	"context"
	"fmt"
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
	return openWatchedEngine(t, dir, reg, nil)
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

// openEngineErr is openEngine that returns Start's error instead of failing.
func openEngineErr(t *testing.T, dir string, reg *model.Registry) error {
	t.Helper()
	e, st, err := startEngine(t, dir, reg, sim.Options{Ports: 4, Version: "test"})
	e.Close()
	st.Close()
	return err
}

// startEngine starts an engine of model reg on the simulated switch of
// opts and the data directory dir, returning Start's error.
func startEngine(t *testing.T, dir string, reg *model.Registry, opts sim.Options) (*engine.Engine, *store.Store, error) {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(reg, st, sim.New(opts), box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return e, st, e.Start(context.Background())
}

// TestDeclaredMigrationRunsOnceFromItsVersion: a later model at schema
// version 2 declares that NtpServer's MaxPoll is now counted from MinPoll
// (a change of unit renames cannot say); the records written at version 1
// are migrated once at start, and the next start runs nothing.
func TestDeclaredMigrationRunsOnceFromItsVersion(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, st := openEngine(t, dir, model.Builtin())
	k := e.Registry().Lookup(model.Config, "NtpServer")
	if _, err := e.Apply(ctx, []engine.Edit{{Kind: k, Op: backend.Create, Fields: model.Object{"IpAddr": "192.0.2.1", "MinPoll": int64(4), "MaxPoll": int64(10)}}}, engine.Meta{Source: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st.Close()

	runs := 0
	later, err := model.Builtin().WithSchema(2, model.Migration{From: 1, Kind: "NtpServer", Doc: "MaxPoll counted from MinPoll", Migrate: func(o map[string]any) (map[string]any, error) {
		runs++
		o["MaxPoll"] = o["MaxPoll"].(float64) - o["MinPoll"].(float64)
		return o, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		e, st = openEngine(t, dir, later)
		body, _, err := e.GetByKey(ctx, e.Registry().Lookup(model.Config, "NtpServer"), model.Object{"IpAddr": "192.0.2.1"}, false, nil)
		if err != nil || !strings.Contains(string(body), `"MaxPoll":6`) {
			t.Errorf("after the migration: %s %v", body, err)
		}
		e.Close()
		st.Close()
	}
	if runs != 1 {
		t.Errorf("the migration ran %d times, want once", runs)
	}
	// An older swmgr does not start on records of a newer version.
	if err := openEngineErr(t, dir, model.Builtin()); err == nil || !strings.Contains(err.Error(), "schema version 2") {
		t.Errorf("version 1 on version 2's records: %v", err)
	}
}

// TestRecordThatDoesNotReadStopsTheStart: a stored object that no longer
// decodes in the current model stops the start, naming its kind and key;
// it is not dropped.
func TestRecordThatDoesNotReadStopsTheStart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, st := openEngine(t, dir, model.Builtin())
	k := e.Registry().Lookup(model.Config, "NtpServer")
	if _, err := e.Apply(ctx, []engine.Edit{{Kind: k, Op: backend.Create, Fields: model.Object{"IpAddr": "192.0.2.1"}}}, engine.Meta{Source: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st.Close()
	// A later model in which the field is a number: the stored text does
	// not decode.
	kinds := model.Builtin().Kinds()
	for _, k := range kinds {
		if k.Name == "NtpServer" {
			k.Field("IpAddr").Type, k.Field("IpAddr").Format = model.Int, nil
		}
	}
	err := openEngineErr(t, dir, registry(t, kinds))
	if err == nil || !strings.Contains(err.Error(), `stored NtpServer "192.0.2.1"`) {
		t.Fatalf("start on a record that does not read: %v", err)
	}
	// Nothing was dropped: the model it was written in still reads it.
	e, st = openEngine(t, dir, model.Builtin())
	if _, _, err := e.GetByKey(ctx, k, model.Object{"IpAddr": "192.0.2.1"}, false, nil); err != nil {
		t.Errorf("the object after the refused start: %v", err)
	}
	e.Close()
	// A record damaged on disk (not JSON) stops the start of a model that
	// must read it again.
	err = st.Update(func(tx store.Txn) error {
		rec, ok, err := tx.Get("NtpServer", "192.0.2.1")
		if err != nil || !ok {
			return fmt.Errorf("get: %v %v", ok, err)
		}
		rec.Public = []byte(`{"IpAddr":"192.0.2.1","MinPoll":`)
		return tx.Put(&rec, nil, nil)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	later, err := model.Builtin().WithSchema(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := openEngineErr(t, dir, later); err == nil || !strings.Contains(err.Error(), `stored NtpServer "192.0.2.1"`) {
		t.Errorf("start on a damaged record: %v", err)
	}
}

// openWatchedEngine starts an engine of model reg on the data directory
// dir, its simulated switch reporting every change it is given to applied
// (when set).
func openWatchedEngine(t *testing.T, dir string, reg *model.Registry, applied func(backend.Change)) (*engine.Engine, *store.Store) {
	t.Helper()
	opts := sim.Options{Ports: 4, Version: "test"}
	if applied != nil {
		opts.Fault = func(c backend.Change) error { applied(c); return nil }
	}
	e, st, err := startEngine(t, dir, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

// migratedWorld writes at schema version 1, through edits, the objects and
// revisions of a test, returning the revision to roll back to (after
// first's edits), then starts the model at version 2
// (enginetest.LaterSchema) on
// them, its simulated switch reporting every change it is given.
func migratedWorld(t *testing.T, first, then []engine.Edit, given func(backend.Change)) (*engine.Engine, *store.Store, uint64) {
	return migratedWorldOf(t, first, then, given, false)
}

// migratedWorldOf is migratedWorld; unversioned: the revision records
// written at version 1 are made as a swmgr before records named their
// version wrote them.
func migratedWorldOf(t *testing.T, first, then []engine.Edit, given func(backend.Change), unversioned bool) (*engine.Engine, *store.Store, uint64) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	e, st := openEngine(t, dir, model.Builtin())
	var to uint64
	for i, ed := range append(first, then...) {
		ed.Kind = e.Registry().Lookup(model.Config, ed.Kind.Name)
		out, err := e.Apply(ctx, []engine.Edit{ed}, engine.Meta{Source: "test"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == len(first)-1 {
			to = out.Revision
		}
	}
	e.Close()
	if unversioned {
		if err := st.Update(func(tx store.Txn) error {
			for rev := uint64(1); rev <= tx.Revision(); rev++ {
				if data := tx.GetRevision(rev); data != nil {
					tx.PutRevision(rev, bytes.Replace(data, []byte(`,"SchemaVersion":1`), nil, 1))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	e, st = openWatchedEngine(t, dir, enginetest.LaterSchema(t), given)
	t.Cleanup(func() { e.Close(); st.Close() })
	return e, st, to
}

// current is the one object of kind in e's running configuration.
func current(t *testing.T, e *engine.Engine, kind string) model.Object {
	t.Helper()
	var got model.Object
	if _, err := e.Snapshot(context.Background(), []string{kind}, nil, func(k *model.Kind, o model.Object) error {
		got = o
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRollbackAcrossAMigration: objects and revisions written at schema
// version 1, the start of a model at version 2 that counts NtpServer's
// MaxPoll from MinPoll (a change of unit), then a rollback to a revision
// from before: the revision records keep the version they were written in
// (one from before records named it is of version 1) and the rollback
// migrates what it restores, so the object (and what the switch is given)
// is in the new form and valid.
func TestRollbackAcrossAMigration(t *testing.T) {
	for _, tc := range []struct {
		name        string
		unversioned bool
	}{{"records of version 1", false}, {"records from before they named a version", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ntp := model.Builtin().Lookup(model.Config, "NtpServer")
			var given []backend.Change
			e, st, to := migratedWorldOf(t,
				[]engine.Edit{{Kind: ntp, Op: backend.Create, Fields: model.Object{"IpAddr": "192.0.2.1", "MinPoll": int64(5), "MaxPoll": int64(12)}}},
				[]engine.Edit{{Kind: ntp, Op: backend.Update, Target: engine.Target{Key: model.Object{"IpAddr": "192.0.2.1"}}, Fields: model.Object{"MaxPoll": int64(14)}}},
				func(c backend.Change) { given = append(given, c) }, tc.unversioned)
			if n := current(t, e, "NtpServer"); n.Int("MaxPoll") != 9 {
				t.Errorf("after the start's migration: MaxPoll %d, want 9", n.Int("MaxPoll"))
			}
			given = nil
			if _, err := history.New(e).Rollback(context.Background(), to, engine.Request{Meta: engine.Meta{Source: "test"}}); err != nil {
				t.Fatal(err)
			}
			n := current(t, e, "NtpServer")
			if n.Int("MaxPoll") != 7 {
				t.Errorf("rolled back across the migration: MaxPoll %d, want 7 (12 counted from 5)", n.Int("MaxPoll"))
			}
			if err := e.Registry().Lookup(model.Config, "NtpServer").Validate(n); err != nil {
				t.Errorf("the restored NtpServer: %v", err)
			}
			if len(given) != 1 || given[0].After.Int("MaxPoll") != 7 {
				t.Errorf("the switch was given %v, want MaxPoll 7", given)
			}
			// The records name the version they were written in.
			written := map[bool]int{false: 1, true: 0}[tc.unversioned]
			if err := st.View(func(tx store.Txn) error {
				for rev, want := range map[uint64]int{to + 1: written, tx.Revision(): 2} {
					r, err := engine.DecodeStoredRevision(tx.GetRevision(rev))
					if err != nil {
						return err
					}
					if r.Schema != want {
						t.Errorf("revision %d's record names schema version %d, want %d", rev, r.Schema, want)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMigrationOfASealedField: a migration of BGPv4Neighbor's sealed
// AuthPassword sees its value in clear (opened in memory) at start and in
// a rollback across it; the result is sealed again, never stored in clear.
func TestMigrationOfASealedField(t *testing.T) {
	nbr := model.Builtin().Lookup(model.Config, "BGPv4Neighbor")
	var given []backend.Change
	e, st, to := migratedWorld(t,
		[]engine.Edit{{Kind: nbr, Op: backend.Create, Fields: model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "AuthPassword": "first"}}},
		[]engine.Edit{{Kind: nbr, Op: backend.Update, Target: engine.Target{Key: model.Object{"NeighborAddress": "10.0.0.2"}}, Fields: model.Object{"AuthPassword": "second"}}},
		func(c backend.Change) { given = append(given, c) })
	if b := current(t, e, "BGPv4Neighbor"); b.Str("AuthPassword") != "md5:second" {
		t.Errorf("after the start's migration: AuthPassword %q, want md5:second", b.Str("AuthPassword"))
	}
	given = nil
	if _, err := history.New(e).Rollback(context.Background(), to, engine.Request{Meta: engine.Meta{Source: "test"}}); err != nil {
		t.Fatal(err)
	}
	if b := current(t, e, "BGPv4Neighbor"); b.Str("AuthPassword") != "md5:first" {
		t.Errorf("rolled back across the migration: AuthPassword %q, want md5:first", b.Str("AuthPassword"))
	}
	if len(given) != 1 || given[0].After.Str("AuthPassword") != "md5:first" {
		t.Errorf("the switch was given %v, want AuthPassword md5:first", given)
	}
	if pub := storedPublicOf(t, st, "BGPv4Neighbor"); strings.Contains(pub, "first") {
		t.Errorf("the migrated secret is stored in clear: %s", pub)
	}
}

// storedPublicOf is the public JSON of every stored object of kind.
func storedPublicOf(t *testing.T, st *store.Store, kind string) string {
	t.Helper()
	var out []string
	if err := st.View(func(tx store.Txn) error {
		_, _, err := tx.List(kind, 0, 100, func(r store.Record) error {
			out = append(out, string(r.Public))
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
