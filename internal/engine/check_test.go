package engine

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// lacking is a backend without the driver of one kind.
type lacking struct {
	backend.Backend
	kind string
}

func (l lacking) Drivers() map[string]*backend.Driver {
	ds := l.Backend.Drivers()
	delete(ds, l.kind)
	return ds
}

func TestStartFailsNamingAKindWithoutDriver(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := New(model.Builtin(), st, lacking{sim.New(sim.Options{Ports: 2}), "Vlan"}, box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer e.Close()
	err = e.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Vlan") {
		t.Fatalf("Start without a Vlan driver: %v; want an error naming Vlan", err)
	}
}

// A dry run runs the same check phase as the commit: a capability the
// switch lacks (a driver's check) and a rule across objects (a model
// constraint) answer the same error both ways, and the dry run changes
// nothing.
func TestDryRunAnswersWhatTheCommitWould(t *testing.T) {
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	f.mustApply(f.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": []string{"fpPort1"}}))
	for _, tc := range []struct {
		name string
		ed   Edit
	}{
		{"capability: unsupported speed", f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "Speed": int64(12345)})},
		{"cross-object: a second untagged VLAN on a port", f.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(20), "UntagIntfList": []string{"fpPort1"}})},
	} {
		rev := f.e.Revision()
		_, dryErr := f.e.Commit(ctx, Request{Edits: []Edit{tc.ed}, DryRun: true})
		_, err := f.e.Commit(ctx, Request{Edits: []Edit{tc.ed}})
		if dryErr == nil || err == nil {
			t.Errorf("%s: dry run %v, commit %v; want both refused", tc.name, dryErr, err)
			continue
		}
		d, c := apierr.From(dryErr), apierr.From(err)
		if d.Status != c.Status || d.Code != c.Code || d.Message != c.Message || d.Status >= 500 {
			t.Errorf("%s: dry run %d %s %q; commit %d %s %q", tc.name, d.Status, d.Code, d.Message, c.Status, c.Code, c.Message)
		}
		if f.e.Revision() != rev {
			t.Errorf("%s: the refused changes made a revision", tc.name)
		}
	}
}

// Integer keys work for create, read by key, update and delete.
func TestIntegerKeyCRUD(t *testing.T) {
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	out := f.mustApply(f.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(300), "Description": "a"}))
	f.mustApply(f.edit(backend.Update, "Vlan", model.Object{"VlanId": int64(300), "Description": "b"}))
	k := f.kind("Vlan")
	byID, _, err := f.e.GetByID(ctx, k, out.IDs[0], false, nil)
	byKey, _, kerr := f.e.GetByKey(ctx, k, model.Object{"VlanId": int64(300)}, false, nil)
	if err != nil || kerr != nil || !strings.Contains(string(byID), `"VlanId":300`) || !strings.Contains(string(byID), `"Description":"b"`) || string(byID) != string(byKey) {
		t.Fatalf("Vlan 300 after the update: by id %s %v; by key %s %v", byID, err, byKey, kerr)
	}
	f.mustApply(f.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(300)}))
	if _, _, err := f.e.GetByID(ctx, k, out.IDs[0], false, nil); err == nil {
		t.Fatal("Vlan 300 still there after its delete")
	}
}

// A write that names its object by ObjectId (or query string) leaves a
// config log entry whose Data gives the object's keys and ObjectId.
func TestConfigLogNamesTheObjectOfAWriteByID(t *testing.T) {
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	out := f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.7"}))
	id := out.IDs[0]
	k := f.kind("NtpServer")
	for _, tc := range []struct {
		ed   Edit
		data string
	}{
		{Edit{Kind: k, Op: backend.Update, Target: Target{ID: &id}, Fields: model.Object{"MinPoll": int64(5)}}, `{"MinPoll":5}`},
		{Edit{Kind: k, Op: backend.Delete, Target: Target{ID: &id}}, `{}`},
	} {
		info := &LogInfo{API: k.API(), Operation: tc.ed.Op.String(), Data: tc.data, Named: true}
		if _, err := f.e.Apply(ctx, []Edit{tc.ed}, Meta{Source: "test"}, info); err != nil {
			t.Fatal(err)
		}
		page, err := f.e.ListLog(0, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := string(page)
		last := s[strings.LastIndex(s, `{"Object":`):]
		for _, want := range []string{`\"IpAddr\":\"192.0.2.7\"`, `\"ObjectId\":\"` + id.String() + `\"`} {
			if !strings.Contains(last, want) {
				t.Errorf("%s by ObjectId: log entry %s lacks %s", tc.ed.Op, last, want)
			}
		}
	}
}
