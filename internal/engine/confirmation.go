package engine

import (
	"encoding/json"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/store"
)

// A confirmed commit (Request.Confirm) is applied at once and rolled back
// unless confirmed in time. The core keeps what the writer needs of it: the
// commit awaiting confirmation, stored (meta "confirm") so that a restart
// keeps it, and the gate that refuses every other change meanwhile. The
// timer, the rollback when it expires, and the confirmation itself are
// package history's, which the core tells of each commit that starts a wait
// (OnConfirmPending).

// Confirmation is the commit awaiting confirmation.
type Confirmation struct {
	Revision uint64 // the commit awaiting confirmation
	Restore  uint64 // the revision to roll back to
	Deadline int64  // unix nanoseconds
	// Who made the commit and why (its Meta), so that a read of what
	// awaits confirmation need not decode the revision record (a commit
	// of thousands of changes makes one of megabytes). Absent in a
	// confirmation stored by a swmgr before them.
	User    string `json:",omitempty"`
	Comment string `json:",omitempty"`
}

// The wait of a commit for its confirmation, from its commit or from a new
// deadline, is one range whatever the front door (REST's Confirm, gNMI's
// rollback_duration and set_rollback_duration): every other write waits
// as long as it does, and a deadline beyond what a time.Time holds in
// nanoseconds would never come.
const (
	MinConfirmWait = time.Second
	MaxConfirmWait = 24 * time.Hour
)

// ConfirmWait is a wait for confirmation of the seconds given, refused
// (400, naming field as the request spelled it) out of MinConfirmWait ..
// MaxConfirmWait. Seconds, not a Duration, so that no value given
// overflows before it is checked.
func ConfirmWait(field string, seconds float64) (time.Duration, error) {
	if !(seconds >= MinConfirmWait.Seconds() && seconds <= MaxConfirmWait.Seconds()) {
		return 0, apierr.BadRequest(apierr.CodeInvalidValue, "Commit", field, "%s: %v seconds is out of range; a commit awaits its confirmation %v..%v seconds", field, seconds, MinConfirmWait.Seconds(), MaxConfirmWait.Seconds())
	}
	return time.Duration(seconds * float64(time.Second)), nil
}

// newConfirmation is the wait a commit at revision rev with req.Confirm
// starts now.
func newConfirmation(rev uint64, req *Request) *Confirmation {
	return &Confirmation{Revision: rev, Restore: rev - 1, Deadline: time.Now().Add(req.Confirm).UnixNano(), User: req.Meta.User, Comment: req.Meta.Comment}
}

const metaConfirm = "confirm"

// PendingConfirm reads the commit awaiting confirmation, or nil.
func (e *Engine) PendingConfirm() (*Confirmation, error) {
	var p *Confirmation
	err := e.store.View(func(tx store.Txn) error { p = pendingConfirm(tx); return nil })
	return p, err
}

func pendingConfirm(tx store.Txn) *Confirmation {
	data := tx.Meta(metaConfirm)
	if data == nil {
		return nil
	}
	var c Confirmation
	if json.Unmarshal(data, &c) != nil {
		return nil
	}
	return &c
}

func setPendingConfirm(tx store.Txn, c *Confirmation) {
	if c == nil {
		tx.SetMeta(metaConfirm, nil)
		return
	}
	data, _ := json.Marshal(c)
	tx.SetMeta(metaConfirm, data)
}

// OnConfirmPending sets who keeps the timer of a commit that awaits
// confirmation: fn is called, after the commit is stored and published,
// with its revision and how long the wait is. Package history sets it.
func (e *Engine) OnConfirmPending(fn func(rev uint64, after time.Duration)) {
	e.confirmHook.Store(&fn)
}

// armConfirm tells the keeper of the confirmation timer of a new wait.
func (e *Engine) armConfirm(rev uint64, after time.Duration) {
	if fn := e.confirmHook.Load(); fn != nil {
		(*fn)(rev, after)
	}
}

// MoveConfirmDeadline, in the AfterWrite of a request, sets the deadline
// of the commit awaiting confirmation (package history: a new rollback
// duration); false when none awaits confirmation.
func MoveConfirmDeadline(tx store.Txn, deadline time.Time) bool {
	c := pendingConfirm(tx)
	if c == nil {
		return false
	}
	c.Deadline = deadline.UnixNano()
	setPendingConfirm(tx, c)
	return true
}
