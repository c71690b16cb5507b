package engine

import (
	"time"
)

// CommitObserver is told how long each commit took (resolution, backend,
// disk), how many objects it changed and whether it failed. Metrics use it.
type CommitObserver func(took time.Duration, changes int, err error)

// ObserveCommits sets the observer; call it before Start.
func (e *Engine) ObserveCommits(o CommitObserver) { e.observe = o }

// ApplyObserver is told how long each hand-over of commits to the backend
// took (one batch of grouped commits, or one commit) and whether it failed.
// Metrics use it.
type ApplyObserver func(took time.Duration, err error)

// ObserveApplies sets the observer of the backend's applies; call it
// before Start.
func (e *Engine) ObserveApplies(o ApplyObserver) { e.observeApply = o }

func (o *Outcome) changes() int {
	if o == nil {
		return 0
	}
	return o.Changes
}
