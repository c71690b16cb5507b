package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// An unconfirmed commit whose rollback keeps failing must not block every
// write for good: a late confirmation keeps it (issue 13 item 3).
func TestConfirmedCommitWhoseRollbackFailsCanBeKept(t *testing.T) {
	f := newFixture(t, t.TempDir())
	out, err := f.e.Commit(bg, Request{Edits: []Edit{f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"})}, Confirm: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.fault = func(backend.Change) error { return errors.New("the switch refuses everything") }
	waitFor(t, "the failed rollback", func() bool { return f.e.confirmStuck.Load() == out.Revision })
	if _, err := f.apply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"})); status(err) != 409 || !strings.Contains(err.Error(), "awaits confirmation") {
		t.Fatalf("write while the rollback fails = %v; want 409", err)
	}
	if err := f.e.Confirm(bg, out.Revision, Meta{}, nil); err != nil {
		t.Fatalf("confirming a commit whose rollback fails: %v", err)
	}
	if _, _, ok := f.e.PendingConfirm(); ok {
		t.Fatal("still awaiting confirmation after the late confirm")
	}
	f.fault = nil
	f.mustApply(f.edit(backend.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.2"}))
	if f.ntp("10.0.0.1") == nil {
		t.Fatal("the kept commit was rolled back after all")
	}
}
