package history

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

// Confirm, Cancel and SetDeadline put every change of the commit awaiting
// confirmation through the caller's Allow: one it refuses leaves the
// commit as it is, awaiting confirmation with its deadline; a commit of
// kinds it allows is decided.
func TestDecidingAPendingCommitNeedsItsKinds(t *testing.T) {
	f := newFixture(t, t.TempDir())
	noTacacs := func(k *model.Kind, op model.Op, key string) error {
		if k.Name == "Tacacs" {
			return apierr.New(http.StatusForbidden, apierr.CodeForbidden, k.Name, "", "no %s %s %s", op, k.Name, key)
		}
		return nil
	}
	decisions := []struct {
		name   string
		decide func(rev uint64, req engine.Request) error
	}{
		{"confirm", func(rev uint64, req engine.Request) error { return f.h.Confirm(bg, rev, req) }},
		{"cancel", func(rev uint64, req engine.Request) error { _, err := f.h.Cancel(bg, rev, req); return err }},
		{"move the deadline of", func(rev uint64, req engine.Request) error { return f.h.SetDeadline(bg, rev, time.Second, req) }},
	}
	out, err := f.E.Commit(bg, engine.Request{Confirm: time.Hour, Edits: []engine.Edit{
		f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}),
		f.Edit(backend.Create, "Tacacs", model.Object{"ServerIp": "192.0.2.49"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	pending := *f.h.PendingConfirm()
	for _, d := range decisions {
		err := d.decide(out.Revision, engine.Request{Allow: noTacacs})
		if enginetest.Status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "may not "+d.name+" revision") || !strings.Contains(err.Error(), "no create Tacacs 192.0.2.49") {
			t.Errorf("%s of a commit with a Tacacs change refused: %v", d.name, err)
		}
		if now := f.h.PendingConfirm(); now == nil || *now != pending || !f.Exists("Tacacs", "192.0.2.49") {
			t.Fatalf("after the refused %s: awaiting %+v, was %+v", d.name, now, pending)
		}
	}
	if err := f.h.Confirm(bg, out.Revision, engine.Request{}); err != nil {
		t.Fatal(err)
	}
	// A commit of kinds the caller may change: each decision is taken.
	for i, d := range decisions {
		out, err := f.E.Commit(bg, engine.Request{Confirm: time.Hour, Edits: []engine.Edit{
			f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.1." + string(rune('1'+i))}),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.decide(out.Revision, engine.Request{Allow: noTacacs}); err != nil {
			t.Errorf("%s of a commit of NtpServers: %v", d.name, err)
		}
		if f.h.PendingConfirm() != nil {
			if err := f.h.Confirm(bg, out.Revision, engine.Request{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
