package service

import (
	"context"
	"fmt"
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

// feedPollEvery is how often the FeedPolled state kinds are read for the
// change feed.
const feedPollEvery = 2 * time.Second

// pollForFeed reads the FeedPolled state kinds every feedPollEvery until
// stop closes, and publishes each object whose state differs from the
// read before (the first read only remembers). A kind whose read fails
// is skipped until it reads again.
func (f *stateFeed) pollForFeed(read func(context.Context, *model.Kind) ([]model.Object, error), stop <-chan struct{}, every time.Duration) {
	var kinds []*model.Kind
	for _, k := range f.reg.Kinds() {
		if k.FeedPolled {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return
	}
	last := map[string]map[string]string{} // kind → key → the state form
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for _, k := range kinds {
			ctx, cancel := context.WithTimeout(context.Background(), every)
			objs, err := read(ctx, k)
			cancel()
			if err != nil {
				continue
			}
			now := map[string]string{}
			for _, o := range objs {
				key, enc := feedKey(k, o), string(k.AppendJSON(nil, o, true))
				now[key] = enc
				if before, seen := last[k.Name]; seen && before[key] != enc {
					f.publish(k.Name, o)
				}
			}
			last[k.Name] = now
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// feedKey tells a state kind's objects apart: its key, or for a kind that
// declares none (a LAG's members) its first field (the member port).
func feedKey(k *model.Kind, o model.Object) string {
	if len(k.Keys()) > 0 || len(k.Fields) == 0 {
		return k.Key(o)
	}
	return fmt.Sprint(o[k.Fields[0].Name])
}
