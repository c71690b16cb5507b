package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/store"
)

// TestCandidatesExpireWhileRunning: the sweep that runs every
// CandidateSweep drops a candidate unused for CandidateTTL and keeps the
// others, without a restart.
func TestCandidatesExpireWhileRunning(t *testing.T) {
	f := newFixture(t, t.TempDir())
	old, fresh := f.candidate(), f.candidate()
	// Back-date one candidate as if unused for longer than CandidateTTL.
	err := f.e.submit(bg, &job{ctx: bg, req: Request{duringConfirm: true, after: func(tx store.Txn) {
		var m candidateMeta
		if err := json.Unmarshal(tx.Candidate(old), &m); err != nil {
			t.Error(err)
			return
		}
		m.LastUsed = time.Now().Add(-CandidateTTL - time.Minute).UnixNano()
		putCandidateMeta(tx, old, &m)
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.expireCandidates(bg); err != nil {
		t.Fatal(err)
	}
	f.st.View(func(tx store.Txn) error {
		if tx.Candidate(old) != nil {
			t.Error("a candidate unused for longer than CandidateTTL is still stored")
		}
		if tx.Candidate(fresh) == nil {
			t.Error("a candidate in use was dropped")
		}
		return nil
	})
}
