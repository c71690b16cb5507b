package service

import (
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// stateFeed hands the changes of state a backend makes on its own (a BFD
// session going down) to the change feed's clients, as `event: state`
// with {"Kind", "Time", "Object"} (docs/api.md). The backend starts
// before the engine whose feed carries them: until the feed is set, a
// change is only logged by the backend.
type stateFeed struct {
	reg    *model.Registry
	broker atomic.Pointer[feed.Broker]
}

// publish is the backend's OnStateChange.
func (f *stateFeed) publish(kind string, o model.Object) {
	b := f.broker.Load()
	k := f.reg.Named(kind)
	if b == nil || k == nil {
		return
	}
	b.PublishState(k.AppendStateEvent(nil, o, time.Now()))
}
