package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

type fixture struct {
	t     testing.TB
	dir   string
	e     *Engine
	sim   *sim.Sim
	st    *store.Store
	fault func(backend.Change) error
	// updateFault, if set, fails the store's next write (fixtures of
	// newAccountsFixture): the engine must undo what the batch applied.
	updateFault func() error
}

func newFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	return newFixtureWith(t, dir, model.Builtin())
}

// newFixtureWith starts an engine with the kinds of reg.
func newFixtureWith(t testing.TB, dir string, reg *model.Registry, wrap ...func(backend.Backend) backend.Backend) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: dir}
	f.sim = sim.New(sim.Options{Ports: 8, Version: "test", Fault: func(c backend.Change) error {
		if f.fault != nil {
			return f.fault(c)
		}
		return nil
	}})
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	box, err := secrets.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b backend.Backend = f.sim
	for _, w := range wrap {
		b = w(b)
	}
	f.e = New(reg, st, b, box, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := f.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.e.Close(); st.Close() })
	return f
}

func (f *fixture) kind(name string) *model.Kind { return f.e.reg.Lookup(model.Config, name) }

func (f *fixture) edit(op backend.Op, kind string, fields model.Object) Edit {
	k := f.kind(kind)
	ed := Edit{Kind: k, Op: op, Fields: fields}
	if op != backend.Create {
		ed.Target.Key = keyFields(k, fields)
		for _, kf := range k.Keys() {
			if _, ok := fields[kf.Name]; !ok {
				delete(ed.Target.Key, kf.Name)
			}
		}
	}
	if op == backend.Delete {
		ed.Fields = nil
	}
	return ed
}

func (f *fixture) apply(edits ...Edit) (*Outcome, error) {
	return f.e.Apply(context.Background(), edits, Meta{Source: "test"}, nil)
}

func (f *fixture) mustApply(edits ...Edit) *Outcome {
	f.t.Helper()
	out, err := f.apply(edits...)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) dump() []byte {
	var b bytes.Buffer
	if err := f.st.Dump(&b); err != nil {
		f.t.Fatal(err)
	}
	return b.Bytes()
}

func (f *fixture) exists(kind, key string) bool {
	var ok bool
	f.st.View(func(tx store.Txn) error { _, ok, _ = tx.Get(kind, key); return nil })
	return ok
}

func status(err error) int {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestMultiObjectCommitIsAtomic(t *testing.T) {
	f := newFixture(t, t.TempDir())
	before := f.dump()
	_, err := f.apply(
		f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
		f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.0.1/24", "Vrf": "red"}),
		f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9", "MinPoll": int64(99)}),
	)
	if status(err) != http.StatusBadRequest {
		t.Fatalf("err = %v; want a 400 for the third object", err)
	}
	if !bytes.Equal(before, f.dump()) || f.exists("Vrf", "red") {
		t.Fatal("a failed commit changed the store")
	}
	// The same commit without the bad object applies all, in one revision,
	// and may name the VRF it creates.
	out := f.mustApply(
		f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
		f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.0.1/24", "Vrf": "red"}),
	)
	if out.Changes != 2 || out.Revision != 2 {
		t.Fatalf("outcome %+v; want 2 changes in revision 2", out)
	}
}

func TestBackendFailureLeavesStoreAndSwitchUnchanged(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	before := f.dump()
	f.fault = func(c backend.Change) error {
		if c.Kind.Name == "NtpServer" {
			return errors.New("ASIC table full")
		}
		return nil
	}
	_, err := f.apply(
		f.edit(backend.Create, "BGPVrf", model.Object{"Name": "red"}),
		f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}),
	)
	if status(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), "ASIC table full") {
		t.Fatalf("err = %v; want the backend's failure", err)
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("the store changed")
	}
	// The switch was rolled back too: fpPort1 is down.
	st, _ := f.sim.State(context.Background(), f.kind("Port"), model.Object{"IntfRef": "fpPort1"})
	if st.Str("OperState") != "DOWN" {
		t.Fatalf("fpPort1 OperState = %s after the failed commit; want DOWN", st.Str("OperState"))
	}
	f.fault = nil
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}))
	st, _ = f.sim.State(context.Background(), f.kind("Port"), model.Object{"IntfRef": "fpPort1"})
	if st.Str("OperState") != "UP" {
		t.Fatal("fpPort1 did not come up")
	}
}

func TestBreakoutAndReferences(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "BreakOutMode": "4x10"}))
	for _, p := range []string{"fpPort2s1", "fpPort2s4"} {
		if !f.exists("Port", p) {
			t.Fatalf("%s missing after breakout", p)
		}
	}
	f.mustApply(f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2s3", "IpAddr": "10.9.0.1/31"}))
	_, err := f.apply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "BreakOutMode": "1x40"}))
	if status(err) != http.StatusConflict || !strings.Contains(err.Error(), "IPv4Intf IntfRef=fpPort2s3") {
		t.Fatalf("err = %v; want a 409 naming the IPv4Intf", err)
	}
	// Removing the user and the breakout in one commit works.
	f.mustApply(
		f.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort2s3"}),
		f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "BreakOutMode": "1x40"}),
	)
	if f.exists("Port", "fpPort2s1") {
		t.Fatal("sub-port survived 1x40")
	}
	// 4x10 -> 4x25 replaces the sub-ports with faster ones.
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "BreakOutMode": "4x10"}))
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "BreakOutMode": "4x25"}))
	var speed int64
	f.st.View(func(tx store.Txn) error {
		rec, _, _ := tx.Get("Port", "fpPort2s2")
		o, err := f.e.decode(f.kind("Port"), rec)
		speed = o.Int("Speed")
		return err
	})
	if speed != 25000 {
		t.Fatalf("fpPort2s2 speed = %d after 4x25", speed)
	}
	// Sub-ports cannot be deleted on their own.
	if _, err := f.apply(f.edit(backend.Delete, "Port", model.Object{"IntfRef": "fpPort2s2"})); status(err) != http.StatusMethodNotAllowed {
		t.Fatalf("delete of a sub-port: %v", err)
	}
}

func TestUpdateRules(t *testing.T) {
	f := newFixture(t, t.TempDir())
	out := f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	before := f.dump()
	// No-op: success, same ETag, no new revision.
	noop := f.mustApply(f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(6)}))
	if noop.Revision != 0 || noop.ETags[0] != out.Revision || !bytes.Equal(before, f.dump()) {
		t.Fatalf("no-op update: %+v", noop)
	}
	id := out.IDs[0]
	tests := []struct {
		name   string
		edit   Edit
		status int
	}{
		{"key change by id", Edit{Kind: f.kind("NtpServer"), Op: backend.Update, Target: Target{ID: &id}, Fields: model.Object{"IpAddr": "10.0.0.2"}}, 400},
		{"stale If-Match", Edit{Kind: f.kind("NtpServer"), Op: backend.Update, Target: Target{ID: &id}, Fields: model.Object{"MinPoll": int64(5)}, IfMatch: `"1"`}, 412},
		{"read-only field", f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "IfIndex": int64(77)}), 400},
		{"missing object", f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.3", "MinPoll": int64(5)}), 404},
		{"create a singleton", f.edit(backend.Create, "SystemParam", model.Object{"Vrf": "default"}), 405},
	}
	for _, tt := range tests {
		if _, err := f.apply(tt.edit); status(err) != tt.status {
			t.Errorf("%s: %v; want %d", tt.name, err, tt.status)
		}
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a refused update changed the store")
	}
	good := f.mustApply(Edit{Kind: f.kind("NtpServer"), Op: backend.Update, Target: Target{ID: &id}, Fields: model.Object{"MinPoll": int64(5)}, IfMatch: ETag(out.Revision)})
	if good.Revision != out.Revision+1 {
		t.Fatalf("update with the right If-Match: %+v", good)
	}
}

func TestUserPasswordIsNeverStored(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "User", model.Object{"Name": "alice", "Password": "correct horse"}))
	f.mustApply(f.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "archive.example.com", "Password": "s3cr3t-archive", "Nonce": "n1", "Passphrase": "pp-secret"}))
	if d := f.dump(); bytes.Contains(d, []byte("correct horse")) || bytes.Contains(d, []byte("s3cr3t-archive")) || bytes.Contains(d, []byte("pp-secret")) {
		t.Fatal("a secret is stored in clear")
	}
	_, err := f.apply(f.edit(backend.Update, "User", model.Object{"Name": "alice", "Password": "another one"}))
	if status(err) != 400 {
		t.Fatalf("password change by update: %v; want 400", err)
	}
	// A sealed secret survives an update that leaves it out (or sends "").
	f.mustApply(f.edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "archive.example.com", "Password": "", "Interval": int64(60)}))
	f.st.View(func(tx store.Txn) error {
		rec, _, _ := tx.Get("ConfigArchiveServer", "archive.example.com")
		o, err := f.e.decode(f.kind("ConfigArchiveServer"), rec)
		if err != nil || o.Str("Password") != "s3cr3t-archive" || o.Str("Passphrase") != "pp-secret" {
			t.Errorf("sealed secrets after update: %v %v", o, err)
		}
		return nil
	})
}

func TestRestartReplaysIntoBackend(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	f.mustApply(
		f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort3", "AdminState": "UP", "BreakOutMode": "4x10"}),
	)
	f.mustApply(f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort3s1", "IpAddr": "10.3.0.1/24"}))
	rev := f.e.Revision()
	f.st.Close()

	g := newFixture(t, dir)
	if g.e.Revision() != rev {
		t.Fatalf("restart made a commit: revision %d -> %d", rev, g.e.Revision())
	}
	st, err := g.sim.State(context.Background(), g.kind("Port"), model.Object{"IntfRef": "fpPort3"})
	if err != nil || st.Str("OperState") != "UP" {
		t.Fatalf("fpPort3 after restart: %v %v", st, err)
	}
	if _, err := g.sim.State(context.Background(), g.kind("Port"), model.Object{"IntfRef": "fpPort3s4"}); err != nil {
		t.Fatalf("sub-port unknown to the switch after restart: %v", err)
	}
}

func TestBrokenOutPortCannotBeUsed(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort5", "BreakOutMode": "4x10"}))
	_, err := f.apply(f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort5", "IpAddr": "10.5.0.1/24"}))
	if status(err) != 400 || !strings.Contains(err.Error(), "broken out") {
		t.Fatalf("address on a broken-out port: %v; want a 400", err)
	}
	f.mustApply(f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort6", "IpAddr": "10.6.0.1/24"}))
	_, err = f.apply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort6", "BreakOutMode": "4x25"}))
	if status(err) != 409 || !strings.Contains(err.Error(), "IPv4Intf IntfRef=fpPort6") {
		t.Fatalf("breakout of a used port: %v; want a 409 naming the user", err)
	}
}

// TestObjectIdsRiseWithinACommit: the creates of one commit get ObjectIds in
// ascending byte order, so that the store appends them to its id index (a
// restore of 100,000 objects with random ids spent seconds in bbolt moving
// its in-memory node; see BenchmarkRestore100k).
func TestObjectIdsRiseWithinACommit(t *testing.T) {
	f := newFixture(t, t.TempDir())
	var edits []Edit
	for i := range 300 {
		edits = append(edits, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.7.%d.%d", i/256, i%256)}))
	}
	f.mustApply(edits...)
	var ids []uuid.UUID
	f.st.View(func(tx store.Txn) error {
		_, _, err := tx.List("NtpServer", 0, 1000, func(r store.Record) error { ids = append(ids, r.ID); return nil })
		return err
	})
	if len(ids) != 300 {
		t.Fatalf("%d objects listed", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if bytes.Compare(ids[i-1][:], ids[i][:]) >= 0 {
			t.Fatalf("ObjectId %d (%s) is not above ObjectId %d (%s)", i, ids[i], i-1, ids[i-1])
		}
	}
}
