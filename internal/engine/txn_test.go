package engine

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

var bg = context.Background()

func (f *fixture) stage(id string, ed Edit) {
	f.t.Helper()
	if _, err := f.e.Stage(bg, id, ed); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) candidate() string {
	f.t.Helper()
	info, err := f.e.NewCandidate(bg, Meta{User: "tester"}, "test")
	if err != nil {
		f.t.Fatal(err)
	}
	return info.CandidateId
}

func (f *fixture) ntp(addr string) model.Object {
	f.t.Helper()
	var o model.Object
	f.st.View(func(tx store.Txn) error { o = f.e.current(tx, f.kind("NtpServer"), addr); return nil })
	return o
}

func TestCandidateCommitIsAtomic(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	f.stage(id, f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	f.stage(id, f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.1.0.1/24", "Vrf": "red"}))
	// A staged edit that is invalid is refused at once, with the same error
	// as a direct write, and not staged.
	if _, err := f.e.Stage(bg, id, f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.2.0.1/24", "Vrf": "blue"})); status(err) != 400 {
		t.Fatalf("staging a dangling reference: %v", err)
	}
	f.stage(id, f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	// Running changes under the candidate so that its third edit becomes
	// invalid: the whole commit must apply nothing.
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.9"}))
	before := f.dump()
	_, err := f.e.CommitCandidate(bg, id, Request{Force: true})
	if status(err) != http.StatusConflict {
		t.Fatalf("commit = %v; want a 409 (duplicate)", err)
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a failed candidate commit changed the store")
	}
}

func TestCandidateConflictForceAndIfMatch(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}), f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	id := f.candidate()
	f.stage(id, f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MinPoll": int64(4)}))
	// Another commit changes a different object: no conflict.
	f.mustApply(f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.2", "MinPoll": int64(5)}))
	// And then the same object: conflict, naming it.
	f.mustApply(f.edit(backend.Update, "NtpServer", model.Object{"IpAddr": "10.0.0.1", "MaxPoll": int64(12)}))
	before := f.dump()
	_, err := f.e.CommitCandidate(bg, id, Request{})
	if status(err) != http.StatusConflict || !strings.Contains(err.Error(), "NtpServer IpAddr=10.0.0.1") {
		t.Fatalf("commit = %v; want a 409 naming NtpServer 10.0.0.1", err)
	}
	// A stale If-Match is a 412.
	if _, err := f.e.CommitCandidate(bg, id, Request{Force: true, IfRevision: 2}); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("commit with a stale If-Match = %v; want 412", err)
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a refused commit changed the store")
	}
	out, err := f.e.CommitCandidate(bg, id, Request{Force: true, IfRevision: f.e.Revision()})
	if err != nil || out.Changes != 1 {
		t.Fatalf("forced commit = %+v, %v", out, err)
	}
	if o := f.ntp("10.0.0.1"); o.Int("MinPoll") != 4 || o.Int("MaxPoll") != 12 {
		t.Fatalf("after forced commit: %v", o)
	}
	if _, err := f.e.CandidateInfo(id); status(err) != 404 {
		t.Fatalf("candidate still there after its commit: %v", err)
	}
}

func TestDryRunsChangeNothing(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	id := f.candidate()
	f.stage(id, f.edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	before := f.dump()
	out, err := f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"})}, DryRun: true})
	if err != nil || !out.DryRun || len(out.Diffs) != 1 || out.Diffs[0].Op != "create" {
		t.Fatalf("dry-run create = %+v, %v", out, err)
	}
	if _, err := f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "Vrf", model.Object{"Vrf": "default"})}, DryRun: true}); status(err) != 409 {
		t.Fatalf("dry run of an invalid create = %v; want its 409", err)
	}
	if out, err := f.e.CommitCandidate(bg, id, Request{DryRun: true}); err != nil || len(out.Diffs) != 1 || out.Diffs[0].Op != "delete" {
		t.Fatalf("dry-run candidate commit = %+v, %v", out, err)
	}
	if out, err := f.e.Rollback(bg, 1, Request{DryRun: true}); err != nil || len(out.Diffs) != 1 {
		t.Fatalf("dry-run rollback = %+v, %v", out, err)
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a dry run changed the store")
	}
	if _, err := f.e.CandidateInfo(id); err != nil {
		t.Fatalf("a dry-run commit consumed the candidate: %v", err)
	}
}

func TestRollbackRestoresAnOldRevision(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.mustApply(
		f.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-one", "Interval": int64(60)}),
		f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}),
	)
	base := f.e.Revision()
	want := f.dump()
	// Many kinds of change after base.
	f.mustApply(f.edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-two", "Interval": int64(90)}))
	f.mustApply(f.edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	f.mustApply(f.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	f.mustApply(f.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort4", "BreakOutMode": "4x10", "AdminState": "UP"}))
	f.mustApply(f.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort4s2", "IpAddr": "10.4.0.1/24", "Vrf": "red"}))

	out, err := f.e.Rollback(bg, base, Request{Meta: Meta{User: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Revision != base+6 {
		t.Fatalf("rollback revision = %d", out.Revision)
	}
	if f.exists("Vrf", "red") || f.exists("Port", "fpPort4s1") || f.exists("IPv4Intf", "fpPort4s2") {
		t.Fatal("objects created after the revision survived the rollback")
	}
	o := f.ntp("10.0.0.1")
	if o == nil {
		t.Fatal("the deleted NtpServer was not restored")
	}
	var cas model.Object
	f.st.View(func(tx store.Txn) error {
		cas = f.e.current(tx, f.kind("ConfigArchiveServer"), "a.example.com")
		return nil
	})
	if cas.Int("Interval") != 60 || cas.Str("Password") != "pw-one" {
		t.Fatalf("archive server after rollback: %v", cas)
	}
	// Objects keep their ObjectIds; only records' revisions differ, so the
	// objects' public JSON must match what it was.
	gotObjs, wantObjs := objectLines(f.dump()), objectLines(want)
	if len(gotObjs) != len(wantObjs) {
		t.Fatalf("rollback left %d objects, want %d", len(gotObjs), len(wantObjs))
	}
	st, _ := f.sim.State(bg, f.kind("Port"), model.Object{"IntfRef": "fpPort4"})
	if st.Str("OperState") != "DOWN" {
		t.Fatal("the switch was not rolled back")
	}
	if _, err := f.e.Rollback(bg, 999, Request{}); status(err) != 404 {
		t.Fatalf("rollback to a future revision = %v", err)
	}
}

// objectLines keeps the dump lines of the object buckets.
func objectLines(dump []byte) []string {
	var out []string
	for _, l := range strings.Split(string(dump), "\n") {
		if strings.HasPrefix(l, "obj/") {
			out = append(out, l)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfirmedCommit(t *testing.T) {
	f := newFixture(t, t.TempDir())
	// Not confirmed: rolled back by its timer.
	out, err := f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.apply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})); status(err) != 409 || !strings.Contains(err.Error(), "awaits confirmation") {
		t.Fatalf("write while a commit awaits confirmation = %v; want 409", err)
	}
	waitFor(t, "the rollback", func() bool { return f.ntp("10.0.0.1") == nil })
	if _, _, ok := f.e.PendingConfirm(); ok {
		t.Fatal("still awaiting confirmation after the rollback")
	}
	if err := f.e.Confirm(bg, out.Revision, Meta{}, nil); status(err) != 409 {
		t.Fatalf("late confirm = %v; want 409", err)
	}
	// Confirmed in time: kept.
	out, err = f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.3"})}, Confirm: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.Confirm(bg, out.Revision, Meta{}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if f.ntp("10.0.0.3") == nil {
		t.Fatal("a confirmed commit was rolled back")
	}
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.4"}))
}

func TestConfirmedCommitAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	if _, err := f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	f.e.stopConfirmTimer()
	f.st.Close()
	time.Sleep(600 * time.Millisecond) // expires while swmgr is down

	g := newFixture(t, dir) // Start rolls it back
	if g.ntp("10.0.0.1") != nil {
		t.Fatal("an expired unconfirmed commit survived a restart")
	}
	// One still in time keeps its timer across a restart and can be confirmed.
	out, err := g.e.Commit(bg, Request{Edits: []Edit{g.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})}, Confirm: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g.e.stopConfirmTimer()
	g.st.Close()
	h := newFixture(t, dir)
	if rev, _, ok := h.e.PendingConfirm(); !ok || rev != out.Revision {
		t.Fatalf("pending confirmation lost across restart: %d %v", rev, ok)
	}
	if err := h.e.Confirm(bg, out.Revision, Meta{}, nil); err != nil {
		t.Fatal(err)
	}
	if h.ntp("10.0.0.2") == nil {
		t.Fatal("confirmed object missing")
	}
}

func TestCandidatesSurviveRestartAndExpire(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	keep, old := f.candidate(), f.candidate()
	f.stage(keep, f.edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "b.example.com", "Password": "staged-secret"}))
	if bytes.Contains(f.dump(), []byte("staged-secret")) {
		t.Fatal("a staged secret is stored in clear")
	}
	// Age one candidate past its time to live.
	f.st.Update(func(tx store.Txn) error {
		putCandidateMeta(tx, old, &candidateMeta{BaseRevision: 1, LastUsed: time.Now().Add(-CandidateTTL - time.Minute).UnixNano()})
		return nil
	})
	f.e.Close()
	f.st.Close()

	g := newFixture(t, dir)
	info, err := g.e.CandidateInfo(keep)
	if err != nil || info.Edits != 1 {
		t.Fatalf("candidate after restart: %+v, %v", info, err)
	}
	if _, err := g.e.CandidateInfo(old); status(err) != 404 {
		t.Fatalf("expired candidate: %v", err)
	}
	out, err := g.e.CommitCandidate(bg, keep, Request{})
	if err != nil || out.Changes != 1 {
		t.Fatalf("commit after restart: %+v, %v", out, err)
	}
	var cas model.Object
	g.st.View(func(tx store.Txn) error {
		cas = g.e.current(tx, g.kind("ConfigArchiveServer"), "b.example.com")
		return nil
	})
	if cas.Str("Password") != "staged-secret" {
		t.Fatalf("staged secret lost: %v", cas)
	}
}

func TestEventsAreOrderedAndSlowSubscribersDropped(t *testing.T) {
	f := newFixture(t, t.TempDir())
	fast, slow := f.e.Subscribe(), f.e.Subscribe()
	defer fast.Close()
	defer slow.Close()
	start := f.e.Revision()
	const n = 300
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := f.apply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.9." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250+1)}))
			errs <- err
		}()
	}
	var got []Event
	for len(got) < n {
		select {
		case <-fast.Notify:
			var err error
			if got, err = fast.Take(got); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d events", len(got), n)
		}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, ev := range got {
		if ev.Revision != start+uint64(i)+1 {
			t.Fatalf("event %d has revision %d; want %d (in order, none lost)", i, ev.Revision, start+uint64(i)+1)
		}
	}
	// The slow one has not read yet: it gets everything, then falls behind.
	if evs, err := slow.Take(nil); err != nil || len(evs) != n {
		t.Fatalf("slow subscriber: %d events, %v", len(evs), err)
	}
	for i := range EventBuffer + 1 {
		f.e.events.publish(uint64(i), nil)
	}
	if _, err := slow.Take(nil); err != ErrDropped {
		t.Fatalf("a subscriber %d events behind: %v; want ErrDropped", EventBuffer+1, err)
	}
}

func TestCandidatesNeverHoldTransientSecrets(t *testing.T) {
	f := newFixture(t, t.TempDir())
	id := f.candidate()
	before := f.dump()
	_, err := f.e.Stage(bg, id, f.edit(backend.Create, "User", model.Object{"Name": "dave", "Password": "dave-password"}))
	if status(err) != 400 || !strings.Contains(err.Error(), "cannot be staged") {
		t.Fatalf("staging a user with a password: %v; want a 400", err)
	}
	if !bytes.Equal(before, f.dump()) {
		t.Fatal("a refused staging changed the store")
	}
}
