package candidates

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/store"
)

// TestCandidatesExpireWhileRunning: the sweep that runs every
// Sweep drops a candidate unused for TTL and keeps the
// others, without a restart.
func TestCandidatesExpireWhileRunning(t *testing.T) {
	f := newFixture(t, t.TempDir())
	old, fresh := f.candidate(), f.candidate()
	// Back-date one candidate as if unused for longer than TTL.
	err := f.E.Submit(bg, engine.Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) {
		var m candidateMeta
		if err := json.Unmarshal(tx.Candidate(old), &m); err != nil {
			t.Error(err)
			return
		}
		m.LastUsed = time.Now().Add(-TTL - time.Minute).UnixNano()
		putCandidateMeta(tx, old, &m)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.expire(bg); err != nil {
		t.Fatal(err)
	}
	f.St.View(func(tx store.Txn) error {
		if tx.Candidate(old) != nil {
			t.Error("a candidate unused for longer than TTL is still stored")
		}
		if tx.Candidate(fresh) == nil {
			t.Error("a candidate in use was dropped")
		}
		return nil
	})
}
