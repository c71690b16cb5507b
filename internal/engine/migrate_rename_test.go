package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
)

// changedModel is the builtin model after a later version of swmgr renamed
// NtpServer.MinPoll to MinPollLog2 and removed NtpServer.Prefer.
func changedModel(t *testing.T) *model.Registry {
	t.Helper()
	kinds := model.Builtin().Kinds()
	for _, k := range kinds {
		if k.Name != "NtpServer" {
			continue
		}
		k.Fields = slices.DeleteFunc(k.Fields, func(f *model.Field) bool { return f.Name == "Prefer" })
		for _, f := range k.Fields {
			if f.Name == "MinPoll" {
				f.Name = "MinPollLog2"
			}
		}
		k.Renamed = map[string]string{"MinPoll": "MinPollLog2"}
		k.Check = nil // the old check read MinPoll
	}
	reg, err := model.NewRegistry(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Records written under an older model (a field renamed since, one removed)
// are migrated at start: old objects read, update and roll back, and a
// candidate staged before the change still commits.
func TestSchemaMigrationRenameAndRemoveAField(t *testing.T) {
	dir := t.TempDir()
	old := enginetest.New(t, dir)
	old.MustApply(old.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.1", "MinPoll": int64(5), "Prefer": true}))
	first := old.E.Revision()
	old.MustApply(old.Edit(backend.Update, "NtpServer", model.Object{"IpAddr": "192.0.2.1", "MinPoll": int64(7)}))
	oldCands := candidates.New(old.E)
	info, err := oldCands.Open(context.Background(), engine.Meta{User: "tester"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	cand := info.CandidateId
	if _, err := oldCands.Stage(context.Background(), cand, old.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.2", "MinPoll": int64(9), "Prefer": true})); err != nil {
		t.Fatal(err)
	}
	old.E.Close()
	old.St.Close()

	f := enginetest.NewWith(t, dir, changedModel(t))
	ctx := context.Background()
	k := f.Kind("NtpServer")
	read := func(addr string) string {
		t.Helper()
		got, _, err := f.E.GetByKey(ctx, k, model.Object{"IpAddr": addr}, false, nil)
		if err != nil {
			t.Fatalf("read %s after the migration: %v", addr, err)
		}
		return string(got)
	}
	wantFields := func(what, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %s lacks %s", what, got, w)
			}
		}
		for _, gone := range []string{`"MinPoll":`, `"Prefer"`} {
			if strings.Contains(got, gone) {
				t.Errorf("%s: %s still has %s", what, got, gone)
			}
		}
	}
	wantFields("read", read("192.0.2.1"), `"MinPollLog2":7`)
	// An update: the client sends only current fields, and the old record
	// must not make it fail ("no field Prefer").
	f.MustApply(f.Edit(backend.Update, "NtpServer", model.Object{"IpAddr": "192.0.2.1", "MaxPoll": int64(12)}))
	wantFields("update", read("192.0.2.1"), `"MinPollLog2":7`, `"MaxPoll":12`)
	// A rollback to a revision recorded under the old model.
	if _, err := history.New(f.E).Rollback(ctx, first, engine.Request{}); err != nil {
		t.Fatalf("rollback to revision %d (old model): %v", first, err)
	}
	wantFields("rollback", read("192.0.2.1"), `"MinPollLog2":5`, `"MaxPoll":10`)
	// A candidate staged under the old model.
	if _, err := candidates.New(f.E).Commit(ctx, cand, engine.Request{}); err != nil {
		t.Fatalf("commit of a candidate staged under the old model: %v", err)
	}
	wantFields("staged before", read("192.0.2.2"), `"MinPollLog2":9`)
}
