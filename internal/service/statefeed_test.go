package service

import (
	"encoding/json"
	"testing"

	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
)

// TestStateFeedPublishesTheStateObject: a backend's change of state goes
// to the feed as {"Kind", "Time", "Object"}, the object in its state
// form; before the feed is set (the engine not started) it is dropped.
func TestStateFeedPublishesTheStateObject(t *testing.T) {
	f := &stateFeed{reg: model.Builtin()}
	session := model.Object{"IpAddr": "10.0.0.2", "SessionState": "down", "ToDownCount": int64(1)}
	f.publish("BfdSessionState", session) // no feed yet
	b := feed.New(nil)
	client := b.Subscribe()
	f.broker.Store(b)
	f.publish("BfdSessionState", session)
	evs, err := client.Take(nil)
	if err != nil || len(evs) != 1 || !evs[0].State {
		t.Fatalf("took %+v %v, want one change of state", evs, err)
	}
	var got struct {
		Kind, Time string
		Object     map[string]any
	}
	if err := json.Unmarshal(evs[0].Data, &got); err != nil {
		t.Fatalf("%v: %s", err, evs[0].Data)
	}
	if got.Kind != "BfdSessionState" || got.Time == "" || got.Object["IpAddr"] != "10.0.0.2" || got.Object["SessionState"] != "down" || got.Object["ToDownCount"] != float64(1) {
		t.Errorf("event %s", evs[0].Data)
	}
}
