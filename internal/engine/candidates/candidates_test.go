package candidates

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

var bg = context.Background()

// fixture is a started engine with its candidates and its history (a dry
// run of a rollback is checked beside a candidate's).
type fixture struct {
	*enginetest.Fixture
	c *Staging
	h *history.History
}

func newFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	f := &fixture{Fixture: enginetest.New(t, dir)}
	f.c, f.h = New(f.E), history.New(f.E)
	if err := f.c.Start(bg); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Start(bg); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) stage(id string, ed engine.Edit) {
	f.T.Helper()
	if _, err := f.c.Stage(bg, id, ed); err != nil {
		f.T.Fatal(err)
	}
}

func (f *fixture) candidate() string {
	f.T.Helper()
	info, err := f.c.Open(bg, engine.Meta{User: "tester"}, "test")
	if err != nil {
		f.T.Fatal(err)
	}
	return info.CandidateId
}

func (f *fixture) ntp(addr string) model.Object { return f.Object("NtpServer", addr) }

func TestCandidateCommitIsAtomic(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	f.stage(id, f.Edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	f.stage(id, f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.1.0.1/24", "Vrf": "red"}))
	// A staged edit that is invalid is refused at once, with the same error
	// as a direct write, and not staged.
	if _, err := f.c.Stage(bg, id, f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.2.0.1/24", "Vrf": "blue"})); enginetest.Status(err) != 400 {
		t.Fatalf("staging a dangling reference: %v", err)
	}
	f.stage(id, f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	// Running changes under the candidate so that its third edit becomes
	// invalid: the whole commit must apply nothing.
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	before := f.Dump()
	_, err := f.c.Commit(bg, id, engine.Request{Force: true})
	if enginetest.Status(err) != http.StatusConflict {
		t.Fatalf("commit = %v; want a 409 (duplicate)", err)
	}
	if !bytes.Equal(before, f.Dump()) {
		t.Fatal("a failed candidate commit changed the store")
	}
}

func TestCandidateConflictForceAndIfMatch(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}), f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	id := f.candidate()
	f.stage(id, f.Edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(4)}))
	// Another commit changes a different object: no conflict.
	f.MustApply(f.Edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.2", "MinPoll": int64(5)}))
	// And then the same object: conflict, naming it.
	f.MustApply(f.Edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MaxPoll": int64(12)}))
	before := f.Dump()
	_, err := f.c.Commit(bg, id, engine.Request{})
	if enginetest.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "NtpServer IpAddr=10.0.0.1") {
		t.Fatalf("commit = %v; want a 409 naming NtpServer 10.0.0.1", err)
	}
	// A stale If-Match is a 412.
	if _, err := f.c.Commit(bg, id, engine.Request{Force: true, IfRevision: 2}); enginetest.Status(err) != http.StatusPreconditionFailed {
		t.Fatalf("commit with a stale If-Match = %v; want 412", err)
	}
	if !bytes.Equal(before, f.Dump()) {
		t.Fatal("a refused commit changed the store")
	}
	out, err := f.c.Commit(bg, id, engine.Request{Force: true, IfRevision: f.E.Revision()})
	if err != nil || out.Changes != 1 {
		t.Fatalf("forced commit = %+v, %v", out, err)
	}
	if o := f.ntp("10.0.0.1"); o.Int("MinPoll") != 4 || o.Int("MaxPoll") != 12 {
		t.Fatalf("after forced commit: %v", o)
	}
	if _, err := f.c.Info(id); enginetest.Status(err) != 404 {
		t.Fatalf("candidate still there after its commit: %v", err)
	}
}

func TestDryRunsChangeNothing(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	id := f.candidate()
	f.stage(id, f.Edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	before := f.Dump()
	out, err := f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "Vrf", model.Object{"Vrf": "red"})}, DryRun: true})
	if err != nil || !out.DryRun || len(out.Diffs) != 1 || out.Diffs[0].Op != "create" {
		t.Fatalf("dry-run create = %+v, %v", out, err)
	}
	if _, err := f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "Vrf", model.Object{"Vrf": "default"})}, DryRun: true}); enginetest.Status(err) != 409 {
		t.Fatalf("dry run of an invalid create = %v; want its 409", err)
	}
	if out, err := f.c.Commit(bg, id, engine.Request{DryRun: true}); err != nil || len(out.Diffs) != 1 || out.Diffs[0].Op != "delete" {
		t.Fatalf("dry-run candidate commit = %+v, %v", out, err)
	}
	if out, err := f.h.Rollback(bg, 1, engine.Request{DryRun: true}); err != nil || len(out.Diffs) != 1 {
		t.Fatalf("dry-run rollback = %+v, %v", out, err)
	}
	if !bytes.Equal(before, f.Dump()) {
		t.Fatal("a dry run changed the store")
	}
	if _, err := f.c.Info(id); err != nil {
		t.Fatalf("a dry-run commit consumed the candidate: %v", err)
	}
}

func TestCandidatesSurviveRestartAndExpire(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	keep, old := f.candidate(), f.candidate()
	f.stage(keep, f.Edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "b.example.com", "Password": "staged-secret"}))
	if bytes.Contains(f.Dump(), []byte("staged-secret")) {
		t.Fatal("a staged secret is stored in clear")
	}
	// Age one candidate past its time to live.
	f.St.Update(func(tx store.Txn) error {
		putCandidateMeta(tx, old, &candidateMeta{BaseRevision: 1, LastUsed: time.Now().Add(-TTL - time.Minute).UnixNano()})
		return nil
	})
	f.E.Close()
	f.St.Close()

	g := newFixture(t, dir)
	info, err := g.c.Info(keep)
	if err != nil || info.Edits != 1 {
		t.Fatalf("candidate after restart: %+v, %v", info, err)
	}
	if _, err := g.c.Info(old); enginetest.Status(err) != 404 {
		t.Fatalf("expired candidate: %v", err)
	}
	out, err := g.c.Commit(bg, keep, engine.Request{})
	if err != nil || out.Changes != 1 {
		t.Fatalf("commit after restart: %+v, %v", out, err)
	}
	cas := g.Object("ConfigArchiveServer", "b.example.com")
	if cas.Str("Password") != "staged-secret" {
		t.Fatalf("staged secret lost: %v", cas)
	}
}

func TestCandidatesNeverHoldTransientSecrets(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	before := f.Dump()
	_, err := f.c.Stage(bg, id, f.Edit(backend.Create, "User", model.Object{"Name": "dave", "Password": "dave-password"}))
	if enginetest.Status(err) != 400 || !strings.Contains(err.Error(), "cannot be staged") {
		t.Fatalf("staging a user with a password: %v; want a 400", err)
	}
	if !bytes.Equal(before, f.Dump()) {
		t.Fatal("a refused staging changed the store")
	}
}

// A staged edit that a later commit undid (its object deleted, or created
// by someone else) makes the commit, forced or not, dry run or not, the 409
// the candidate's diff answers, not the bare 404 or duplicate of a direct
// write, which a client reads as "no such candidate" on the commit's URL.
func TestCommitOfStaleEditSaysTheCandidateNoLongerApplies(t *testing.T) {
	type edit struct {
		op     backend.Op
		fields model.Object
	}
	tests := []struct {
		name           string
		staged, meddle edit
	}{
		{"update of an object deleted since",
			edit{backend.Update, model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(4)}},
			edit{backend.Delete, model.Object{"IpAddr": "10.0.0.1"}}},
		{"delete of an object deleted since",
			edit{backend.Delete, model.Object{"IpAddr": "10.0.0.1"}},
			edit{backend.Delete, model.Object{"IpAddr": "10.0.0.1"}}},
		{"create of an object created since",
			edit{backend.Create, model.Object{"IpAddr": "10.0.0.2"}},
			edit{backend.Create, model.Object{"IpAddr": "10.0.0.2"}}},
	}
	for _, tc := range tests {
		for _, req := range []engine.Request{{}, {Force: true}, {DryRun: true}, {Force: true, DryRun: true}} {
			t.Run(fmt.Sprintf("%s/force=%v/dry=%v", tc.name, req.Force, req.DryRun), func(t *testing.T) {
				f := newFixture(t, t.TempDir())
				f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
				id := f.candidate()
				f.stage(id, f.Edit(tc.staged.op, "NtpServer", tc.staged.fields))
				f.MustApply(f.Edit(tc.meddle.op, "NtpServer", tc.meddle.fields))
				diffErr := f.c.Read(id, func(r *Reader) error { return nil })
				before := f.Dump()
				_, err := f.c.Commit(bg, id, req)
				for what, err := range map[string]error{"diff": diffErr, "commit": err} {
					if enginetest.Status(err) != http.StatusConflict || !strings.Contains(err.Error(), "the candidate no longer applies") {
						t.Errorf("%s = %v; want a 409 saying the candidate no longer applies", what, err)
					}
				}
				if !bytes.Equal(before, f.Dump()) {
					t.Error("a refused commit changed the store")
				}
				if _, err := f.c.Info(id); err != nil {
					t.Errorf("a refused commit consumed the candidate: %v", err)
				}
			})
		}
	}
}
