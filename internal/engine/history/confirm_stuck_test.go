package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

// An unconfirmed commit whose rollback keeps failing must not block every
// write for good: a late confirmation keeps it.
func TestConfirmedCommitWhoseRollbackFailsCanBeKept(t *testing.T) {
	f := newFixture(t, t.TempDir())
	out, err := f.E.Commit(bg, engine.Request{Edits: []engine.Edit{f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.SetFault(func(backend.Change) error { return errors.New("the switch refuses everything") })
	enginetest.WaitFor(t, "the failed rollback", func() bool { return f.h.confirmStuck.Load() == out.Revision })
	if _, err := f.Apply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})); enginetest.Status(err) != 409 || !strings.Contains(err.Error(), "awaits confirmation") {
		t.Fatalf("write while the rollback fails = %v; want 409", err)
	}
	if err := f.h.Confirm(bg, out.Revision, engine.Request{}); err != nil {
		t.Fatalf("confirming a commit whose rollback fails: %v", err)
	}
	if f.h.PendingConfirm() != nil {
		t.Fatal("still awaiting confirmation after the late confirm")
	}
	f.SetFault(nil)
	f.MustApply(f.Edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	if f.ntp("10.0.0.1") == nil {
		t.Fatal("the kept commit was rolled back after all")
	}
}
