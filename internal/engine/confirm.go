package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/store"
)

// A confirmed commit is applied at once and rolled back unless confirmed in
// time. Its state is stored (meta "confirm"), so a restart keeps the timer:
// one that expired while swmgr was down rolls back at start.

type confirmState struct {
	Revision uint64 // the commit awaiting confirmation
	Restore  uint64 // the revision to roll back to
	Deadline int64  // unix nanoseconds
}

const metaConfirm = "confirm"

func pendingConfirm(tx store.Txn) *confirmState {
	data := tx.Meta(metaConfirm)
	if data == nil {
		return nil
	}
	var c confirmState
	if json.Unmarshal(data, &c) != nil {
		return nil
	}
	return &c
}

func setPendingConfirm(tx store.Txn, c *confirmState) {
	if c == nil {
		tx.SetMeta(metaConfirm, nil)
		return
	}
	data, _ := json.Marshal(c)
	tx.SetMeta(metaConfirm, data)
}

// armConfirm (re)starts the timer of the commit awaiting confirmation.
func (e *Engine) armConfirm(rev uint64, after time.Duration) {
	e.confirmMu.Lock()
	defer e.confirmMu.Unlock()
	if e.confirmTimer != nil {
		e.confirmTimer.Stop()
	}
	e.confirmTimer = time.AfterFunc(after, func() { e.confirmExpired(rev) })
}

func (e *Engine) stopConfirmTimer() {
	e.confirmMu.Lock()
	defer e.confirmMu.Unlock()
	if e.confirmTimer != nil {
		e.confirmTimer.Stop()
		e.confirmTimer = nil
	}
}

var errNotPending = errors.New("no longer awaiting confirmation")

// confirmExpired rolls back an unconfirmed commit.
func (e *Engine) confirmExpired(rev uint64) {
	meta := Meta{Source: "confirm-timeout", Comment: fmt.Sprintf("revision %d was not confirmed in time", rev)}
	out, err := e.commitWith(context.Background(), Request{Meta: meta, duringConfirm: true, clearConfirm: true}, func(v *view, req *Request) error {
		p := v.confirm
		if p == nil || p.Revision != rev {
			return errNotPending
		}
		edits, err := e.rollbackEdits(v, p.Restore)
		req.Edits = edits
		return err
	})
	switch {
	case errors.Is(err, errNotPending):
	case err != nil:
		e.confirmStuck.Store(rev)
		e.log.Error("rollback of an unconfirmed commit failed; retrying in 10s (or confirm it to keep it)", "revision", rev, "err", err)
		e.armConfirm(rev, 10*time.Second)
	default:
		e.log.Warn("unconfirmed commit rolled back", "revision", rev, "rollback_revision", out.Revision)
	}
}

// Confirm keeps a commit that awaits confirmation.
func (e *Engine) Confirm(ctx context.Context, rev uint64, meta Meta, info *LogInfo) error {
	err := e.submit(ctx, &job{ctx: ctx, req: Request{Meta: meta, Log: info, duringConfirm: true, clearConfirm: true},
		prepare: func(v *view, req *Request) error {
			p := v.confirm
			if p == nil || p.Revision != rev {
				if r := v.tx.GetRevision(rev); r == nil && rev > v.revision() {
					return apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d", rev)
				}
				return apierr.Conflict(apierr.CodeConflict, "Revision", "revision %d is not awaiting confirmation (it was confirmed, rolled back, or committed without Confirm)", rev)
			}
			// Late, it is normally being rolled back; but a rollback that keeps
			// failing would block every write for good, so then a confirmation
			// still keeps the commit.
			if time.Now().UnixNano() > p.Deadline && e.confirmStuck.Load() != rev {
				return apierr.Conflict(apierr.CodeConflict, "Revision", "the confirmation time of revision %d has passed; it is being rolled back", rev)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	e.stopConfirmTimer()
	return nil
}

// resumeConfirm re-arms the timer of a commit that awaited confirmation when
// swmgr stopped, or rolls it back now if its time has passed.
func (e *Engine) resumeConfirm() {
	var p *confirmState
	_ = e.store.View(func(tx store.Txn) error { p = pendingConfirm(tx); return nil })
	if p == nil {
		return
	}
	left := time.Until(time.Unix(0, p.Deadline))
	if left <= 0 {
		e.confirmExpired(p.Revision)
		return
	}
	e.log.Info("a commit awaits confirmation", "revision", p.Revision, "left", left.Round(time.Second))
	e.armConfirm(p.Revision, left)
}

// PendingConfirm reports the commit awaiting confirmation, if any.
func (e *Engine) PendingConfirm() (rev uint64, deadline time.Time, ok bool) {
	_ = e.store.View(func(tx store.Txn) error {
		if p := pendingConfirm(tx); p != nil {
			rev, deadline, ok = p.Revision, time.Unix(0, p.Deadline), true
		}
		return nil
	})
	return
}
