package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// A confirmed commit is applied at once and rolled back unless confirmed in
// time. Its state is stored (engine.Confirmation), so a restart keeps the
// timer: one that expired while swmgr was down rolls back at Start.

// armConfirm (re)starts the timer of the commit awaiting confirmation.
func (h *History) armConfirm(rev uint64, after time.Duration) {
	h.confirmMu.Lock()
	defer h.confirmMu.Unlock()
	if h.confirmTimer != nil {
		h.confirmTimer.Stop()
	}
	h.confirmTimer = time.AfterFunc(after, func() { h.confirmExpired(rev) })
}

func (h *History) stopConfirmTimer() {
	h.confirmMu.Lock()
	defer h.confirmMu.Unlock()
	if h.confirmTimer != nil {
		h.confirmTimer.Stop()
		h.confirmTimer = nil
	}
}

var errNotPending = errors.New("no longer awaiting confirmation")

// confirmExpired rolls back an unconfirmed commit.
func (h *History) confirmExpired(rev uint64) {
	meta := engine.Meta{Source: "confirm-timeout", Comment: fmt.Sprintf("revision %d was not confirmed in time", rev)}
	out, err := h.rollbackPending(context.Background(), rev, engine.Request{Meta: meta}, "roll back")
	switch {
	case errors.Is(err, errNotPending), errors.Is(err, engine.ErrClosed):
	case err != nil:
		h.confirmStuck.Store(rev)
		h.log.Error("rollback of an unconfirmed commit failed; retrying in 10s (or confirm it to keep it)", "revision", rev, "err", err)
		h.armConfirm(rev, 10*time.Second)
	default:
		h.log.Warn("unconfirmed commit rolled back", "revision", rev, "rollback_revision", out.Revision)
	}
}

// rollbackPending rolls back the commit at rev that awaits confirmation,
// in one commit made with req's Meta, Log and Allow (mayDecide, for the
// decision named); errNotPending if rev no longer awaits confirmation.
func (h *History) rollbackPending(ctx context.Context, rev uint64, req engine.Request, decision string) (*engine.Outcome, error) {
	req.DuringConfirm, req.ClearConfirm = true, true
	req.Prepare = func(v *engine.View, req *engine.Request) error {
		p := v.Confirmation()
		if p == nil || p.Revision != rev {
			return errNotPending
		}
		if err := h.mayDecide(v, p, decision, req.Allow); err != nil {
			return err
		}
		edits, err := h.rollbackEdits(v, p.Restore)
		req.Edits = edits
		return err
	}
	return h.e.Commit(ctx, req)
}

// Cancel rolls back now the commit at rev that awaits confirmation, as its
// timer would (the commit-confirmed extension's cancel). req.Allow, the
// caller's rule (bind.Caller.MayChange), vets every change of that commit
// first: its fate is for who could have made it (mayDecide).
func (h *History) Cancel(ctx context.Context, rev uint64, req engine.Request) (*engine.Outcome, error) {
	out, err := h.rollbackPending(ctx, rev, req, "cancel")
	if errors.Is(err, errNotPending) {
		return nil, notPending(rev, h.e.Revision())
	}
	if err == nil {
		h.stopConfirmTimer()
	}
	return out, err
}

// notPending is the error of a confirm or cancel of rev, which does not
// await confirmation, while running is the running revision: 404 for a
// revision not made yet, 409 for one that was confirmed, rolled back, or
// committed without Confirm.
func notPending(rev, running uint64) error {
	if rev > running {
		return apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d; the running revision is %d", rev, running)
	}
	return apierr.Conflict(apierr.CodeConflict, "Revision", "revision %d is not awaiting confirmation (it was confirmed, rolled back, or committed without Confirm)", rev)
}

// Confirm keeps a commit that awaits confirmation, with req's Meta and
// Log; req.Allow vets every change of that commit first, as for Cancel:
// keeping a commit decides its fate as much as rolling it back does.
func (h *History) Confirm(ctx context.Context, rev uint64, req engine.Request) error {
	err := h.e.Submit(ctx, engine.Request{Meta: req.Meta, Log: req.Log, DuringConfirm: true, ClearConfirm: true,
		Prepare: func(v *engine.View, _ *engine.Request) error {
			p := v.Confirmation()
			if p == nil || p.Revision != rev {
				return notPending(rev, v.Revision())
			}
			if err := h.mayDecide(v, p, "confirm", req.Allow); err != nil {
				return err
			}
			// Late, it is normally being rolled back; but a rollback that keeps
			// failing would block every write for good, so then a confirmation
			// still keeps the commit.
			if time.Now().UnixNano() > p.Deadline && h.confirmStuck.Load() != rev {
				return apierr.Conflict(apierr.CodeConflict, "Revision", "the confirmation time of revision %d has passed; it is being rolled back", rev)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	h.stopConfirmTimer()
	return nil
}

// SetDeadline gives the commit at rev that awaits confirmation a new
// deadline, after from now (the commit-confirmed extension's
// set_rollback_duration), with req's Meta and Log; the deadline is
// stored, so a restart keeps it. after is in engine.ConfirmWait's range,
// and req.Allow vets every change of that commit first, as for Cancel: a
// deadline moved to now is a cancel.
func (h *History) SetDeadline(ctx context.Context, rev uint64, after time.Duration, req engine.Request) error {
	if _, err := engine.ConfirmWait("rollback duration", after.Seconds()); err != nil {
		return err
	}
	deadline := time.Now().Add(after)
	err := h.e.Submit(ctx, engine.Request{Meta: req.Meta, Log: req.Log, DuringConfirm: true,
		Prepare: func(v *engine.View, _ *engine.Request) error {
			p := v.Confirmation()
			if p == nil || p.Revision != rev {
				return apierr.Conflict(apierr.CodeConflict, "Revision", "revision %d is not awaiting confirmation (it was confirmed, rolled back, or committed without Confirm)", rev)
			}
			if err := h.mayDecide(v, p, "move the deadline of", req.Allow); err != nil {
				return err
			}
			if time.Now().UnixNano() > p.Deadline {
				return apierr.Conflict(apierr.CodeConflict, "Revision", "the confirmation time of revision %d has passed; it is being rolled back", rev)
			}
			return nil
		},
		AfterWrite: func(tx store.Txn) { engine.MoveConfirmDeadline(tx, deadline) },
	})
	if err != nil {
		return err
	}
	h.armConfirm(rev, time.Until(deadline))
	return nil
}

// mayDecide refuses a decision on the fate of the commit awaiting
// confirmation p (to confirm it, cancel it, move its deadline) to a
// caller whose allow refuses one of its changes: the decision is for the
// roles of the kinds it changed, as its rollback is (Rollback vets its
// edits with the same allow). A nil allow (an admin, the timer) may
// decide anything.
func (h *History) mayDecide(v *engine.View, p *engine.Confirmation, decision string, allow func(*model.Kind, model.Op, string) error) error {
	if allow == nil {
		return nil
	}
	refused := func(err error) error {
		e := *apierr.From(err)
		e.Message = fmt.Sprintf("may not %s revision %d, which awaits confirmation: %s", decision, p.Revision, e.Message)
		return &e
	}
	data := v.Txn().GetRevision(p.Revision)
	if data == nil {
		// Made earlier in the writer's batch, so not stored yet: no other
		// commit is made while one awaits confirmation, so the batch's
		// changes are its own (and perhaps those of a commit before it).
		for _, ref := range v.ChangedInBatch() {
			if k := h.reg.Lookup(model.Config, ref.Kind); k != nil {
				if err := allow(k, model.Update, ref.Key); err != nil {
					return refused(err)
				}
			}
		}
		return nil
	}
	r, err := engine.DecodeStoredRevision(data)
	if err != nil {
		return fmt.Errorf("revision %d: %w", p.Revision, err)
	}
	for _, d := range r.Changes {
		k := h.reg.Lookup(model.Config, d.Kind)
		if k == nil {
			continue
		}
		if err := allow(k, opOf(d.Op), h.e.RevisionKey(k, r, d)); err != nil {
			return refused(err)
		}
	}
	return nil
}

// opOf is the operation a revision record names.
func opOf(name string) model.Op {
	for _, op := range []model.Op{model.Create, model.Delete} {
		if name == op.String() {
			return op
		}
	}
	return model.Update
}

// resumeConfirm re-arms the timer of a commit that awaited confirmation when
// swmgr stopped, or rolls it back now if its time has passed.
func (h *History) resumeConfirm() {
	p, _ := h.e.PendingConfirm()
	if p == nil {
		return
	}
	left := time.Until(time.Unix(0, p.Deadline))
	if left <= 0 {
		h.confirmExpired(p.Revision)
		return
	}
	h.log.Info("a commit awaits confirmation", "revision", p.Revision, "left", left.Round(time.Second))
	h.armConfirm(p.Revision, left)
}

// PendingConfirm reports the commit awaiting confirmation, or nil.
func (h *History) PendingConfirm() *engine.Confirmation {
	p, _ := h.e.PendingConfirm()
	return p
}
