// Package history is the engine's past: the revision records of the
// commits (read as /public/v1/revisions), the rollback to an earlier
// revision, and confirmed commits, which roll back unless confirmed in
// time.
//
// It sits on top of the core's commit path (package engine) and adds
// nothing to it: a rollback is an ordinary commit whose edits are computed
// in the writer, on the running configuration (engine.Request.Prepare),
// from the stored revision records, so it is resolved and checked like any
// other write and a dry run of it reports what it would change. The core
// writes the revision records and keeps the commit awaiting confirmation
// with its gate (engine.Confirmation); this package keeps its timer, rolls
// it back when the timer expires, and takes the confirmation.
package history

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Kept is how many of the latest revision records are kept (the store's
// MaxRevisions): older ones cannot be read, rolled back to, or replayed to
// a change-feed subscriber.
const Kept = store.MaxRevisions

// OldestKept is the oldest revision whose record is kept when the running
// revision is cur: revisions are gapless and the last Kept are kept.
func OldestKept(cur uint64) uint64 {
	if cur < Kept {
		return 1
	}
	return cur - Kept + 1
}

// History reads the revisions of an engine, rolls it back, and keeps the
// timer of its confirmed commits. Make one per engine, before the first
// commit that asks for a confirmation, and Start it after the engine.
type History struct {
	e     *engine.Engine
	reg   *model.Registry
	store store.Config
	log   *slog.Logger

	confirmMu    sync.Mutex
	confirmTimer *time.Timer
	confirmStuck atomic.Uint64 // the unconfirmed commit whose rollback failed: a late confirm may keep it
}

// New attaches the history to e: it keeps the timer of every commit that
// awaits confirmation from now on, until e closes.
func New(e *engine.Engine) *History {
	h := &History{e: e, reg: e.Registry(), store: e.Store(), log: e.Logger()}
	e.OnConfirmPending(h.armConfirm)
	go func() {
		<-e.Closing()
		h.stopConfirmTimer()
	}()
	return h
}

// Start resumes the wait of a commit that awaited confirmation when swmgr
// stopped, or rolls it back now if its time has passed. Call it once the
// engine started.
func (h *History) Start(ctx context.Context) error {
	h.resumeConfirm()
	return nil
}

// GetRevision appends one revision record.
func (h *History) GetRevision(rev uint64, dst []byte) ([]byte, error) {
	err := h.store.View(func(tx store.Txn) error {
		pub, err := engine.ReadPublicRevision(tx, rev)
		if err == nil && pub == nil {
			return apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d; the running revision is %d and the last %d are kept", rev, tx.Revision(), store.MaxRevisions)
		}
		if len(dst) == 0 {
			dst = pub // a restore's is tens of MiB: no second copy
		} else {
			dst = append(dst, pub...)
		}
		return err
	})
	return dst, err
}

// ListRevisions appends a page of revisions, newest first, in the get-all
// form; the marker is the revision to continue below (0: the newest).
func (h *History) ListRevisions(marker uint64, count int, dst []byte) ([]byte, error) {
	var p engine.Page
	err := h.store.View(func(tx store.Txn) error {
		var err error
		p.Next, p.More, err = tx.Revisions(marker, count, func(rev uint64, data []byte) error {
			pub, err := engine.PublicRevision(data)
			if err == nil {
				p.Add(pub, strconv.AppendUint(nil, rev, 10))
			}
			return err
		})
		return err
	})
	if err != nil {
		return dst, err
	}
	return p.AppendTo(dst, marker), nil
}

// Name names the history as a provider.
func (h *History) Name() string { return "history" }

// Bindings are the history's rows: the rollback to an earlier revision
// (model.ActionRollback), a commit the caller may make only if its roles
// cover every kind it changes.
func (h *History) Bindings() []bind.Binding {
	return []bind.Binding{{Kind: model.ActionRollback, Action: &bind.Action{Run: h.rollbackAction}}}
}

func (h *History) rollbackAction(ctx context.Context, c bind.Call) (bind.Result, error) {
	out, err := h.Rollback(ctx, uint64(c.Fields.Int("Revision")), engine.Request{Meta: c.Meta, Log: c.Log, DryRun: c.DryRun, Allow: c.Caller.MayChange(c.Kind.Name)})
	if err != nil {
		return bind.Result{}, err // logged
	}
	changes := out.Diffs
	if changes == nil {
		changes = []engine.Diff{}
	}
	return bind.Result{Revision: out.Revision, Changes: changes, DryRun: c.DryRun}, nil
}
