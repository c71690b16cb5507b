package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/swmgr/swmgr/internal/model"
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

// StatePart adds fields to the state of one object of a config kind: a
// provider's share of the kind's state beside its config driver's (the
// archive scheduler's of ConfigArchiveServer, the saved revision of
// SystemParam).
type StatePart func(ctx context.Context, obj model.Object) (model.Object, error)

// AddStatePart binds part to the config kind named kind; call it before
// Start. A read of the kind's state merges the driver's State and then
// each part, in the order they were added.
func (e *Engine) AddStatePart(kind string, part StatePart) error {
	if e.started.Load() {
		return fmt.Errorf("state part of %s added after the engine started", kind)
	}
	k := e.reg.Lookup(model.Config, kind)
	if k == nil {
		return fmt.Errorf("state part of %s, which is not a declared config kind", kind)
	}
	e.stateParts[k.Name] = append(e.stateParts[k.Name], part)
	return nil
}

// StateParts says how many state parts each config kind has, for the
// service's table of bindings.
func (e *Engine) StateParts() map[string]int {
	out := map[string]int{}
	for name, ps := range e.stateParts {
		out[name] = len(ps)
	}
	return out
}

func (o *Outcome) changes() int {
	if o == nil {
		return 0
	}
	return o.Changes
}
