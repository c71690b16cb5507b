package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

var bg = context.Background()

// fixture is a started engine with its history.
type fixture struct {
	*enginetest.Fixture
	h *History
}

func newFixture(t *testing.T, dir string) *fixture {
	t.Helper()
	f := &fixture{Fixture: enginetest.New(t, dir)}
	f.h = New(f.E)
	if err := f.h.Start(bg); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) ntp(addr string) model.Object { return f.Object("NtpServer", addr) }

func TestRollbackRestoresAnOldRevision(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.MustApply(
		f.Edit(backend.Create, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-one", "Interval": int64(60)}),
		f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}),
	)
	base := f.E.Revision()
	want := f.Dump()
	// Many kinds of change after base.
	f.MustApply(f.Edit(backend.Update, "ConfigArchiveServer", model.Object{"IpAddr": "a.example.com", "Password": "pw-two", "Interval": int64(90)}))
	f.MustApply(f.Edit(backend.Delete, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	f.MustApply(f.Edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}))
	f.MustApply(f.Edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort4", "BreakOutMode": "4x10", "AdminState": "UP"}))
	f.MustApply(f.Edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort4s2", "IpAddr": "10.4.0.1/24", "Vrf": "red"}))

	out, err := f.h.Rollback(bg, base, engine.Request{Meta: engine.Meta{User: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Revision != base+6 {
		t.Fatalf("rollback revision = %d", out.Revision)
	}
	if f.Exists("Vrf", "red") || f.Exists("Port", "fpPort4s1") || f.Exists("IPv4Intf", "fpPort4s2") {
		t.Fatal("objects created after the revision survived the rollback")
	}
	o := f.ntp("10.0.0.1")
	if o == nil {
		t.Fatal("the deleted NtpServer was not restored")
	}
	cas := f.Object("ConfigArchiveServer", "a.example.com")
	if cas.Int("Interval") != 60 || cas.Str("Password") != "pw-one" {
		t.Fatalf("archive server after rollback: %v", cas)
	}
	// Objects keep their ObjectIds; only records' revisions differ, so the
	// objects' public JSON must match what it was.
	gotObjs, wantObjs := objectLines(f.Dump()), objectLines(want)
	if len(gotObjs) != len(wantObjs) {
		t.Fatalf("rollback left %d objects, want %d", len(gotObjs), len(wantObjs))
	}
	st, _ := f.Sim.State(bg, f.Kind("Port"), model.Object{"IntfRef": "fpPort4"})
	if st.Str("OperState") != "DOWN" {
		t.Fatal("the switch was not rolled back")
	}
	if _, err := f.h.Rollback(bg, 999, engine.Request{}); enginetest.Status(err) != 404 {
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

func TestConfirmedCommit(t *testing.T) {
	f := newFixture(t, t.TempDir())
	// Not confirmed: rolled back by its timer.
	out, err := f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Apply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})); enginetest.Status(err) != 409 || !strings.Contains(err.Error(), "awaits confirmation") {
		t.Fatalf("write while a commit awaits confirmation = %v; want 409", err)
	}
	enginetest.WaitFor(t, "the rollback", func() bool { return f.ntp("10.0.0.1") == nil })
	if f.h.PendingConfirm() != nil {
		t.Fatal("still awaiting confirmation after the rollback")
	}
	if err := f.h.Confirm(bg, out.Revision, engine.Request{}); enginetest.Status(err) != 409 {
		t.Fatalf("late confirm = %v; want 409", err)
	}
	// Confirmed in time: kept.
	out, err = f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.3"})}, Confirm: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.h.Confirm(bg, out.Revision, engine.Request{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if f.ntp("10.0.0.3") == nil {
		t.Fatal("a confirmed commit was rolled back")
	}
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.4"}))
}

func TestConfirmedCommitAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	if _, err := f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	f.h.stopConfirmTimer()
	f.St.Close()
	time.Sleep(600 * time.Millisecond) // expires while swmgr is down

	g := newFixture(t, dir) // Start rolls it back
	if g.ntp("10.0.0.1") != nil {
		t.Fatal("an expired unconfirmed commit survived a restart")
	}
	// One still in time keeps its timer across a restart and can be confirmed.
	out, err := g.E.Commit(bg, engine.Request{Edits: []engine.Edit{g.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})}, Confirm: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g.h.stopConfirmTimer()
	g.St.Close()
	third := newFixture(t, dir)
	if p := third.h.PendingConfirm(); p == nil || p.Revision != out.Revision {
		t.Fatalf("pending confirmation lost across restart: %+v", p)
	}
	if err := third.h.Confirm(bg, out.Revision, engine.Request{}); err != nil {
		t.Fatal(err)
	}
	if third.ntp("10.0.0.2") == nil {
		t.Fatal("confirmed object missing")
	}
}

func TestOldestKept(t *testing.T) {
	for _, tc := range []struct{ cur, want uint64 }{
		{0, 1},
		{1, 1},
		{Kept, 1},
		{Kept + 1, 2},
		{100000, 100000 - Kept + 1},
	} {
		if got := OldestKept(tc.cur); got != tc.want {
			t.Errorf("OldestKept(%d) = %d; want %d", tc.cur, got, tc.want)
		}
	}
}
