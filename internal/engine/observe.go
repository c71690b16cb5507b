package engine

import "time"

// CommitObserver is told how long each commit took (resolution, backend,
// disk), how many objects it changed and whether it failed. Metrics use it.
type CommitObserver func(took time.Duration, changes int, err error)

// ObserveCommits sets the observer; call it before Start.
func (e *Engine) ObserveCommits(o CommitObserver) { e.observe = o }

func (o *Outcome) changes() int {
	if o == nil {
		return 0
	}
	return o.Changes
}
