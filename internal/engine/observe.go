package engine

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/swmgr/swmgr/internal/store"
)

// CommitObserver is told how long each commit took (resolution, backend,
// disk), how many objects it changed and whether it failed. Metrics use it.
type CommitObserver func(took time.Duration, changes int, err error)

// ObserveCommits sets the observer; call it before Start.
func (e *Engine) ObserveCommits(o CommitObserver) { e.observe = o }

// Candidates lists the candidates that keep reports true for, oldest first.
func (e *Engine) Candidates(keep func(CandidateInfo) bool) ([]CandidateInfo, error) {
	var out []CandidateInfo
	err := e.store.View(func(tx store.Txn) error {
		return tx.Candidates(func(id string, meta []byte) error {
			var m candidateMeta
			if json.Unmarshal(meta, &m) != nil {
				return nil // expired on the next sweep
			}
			info := m.info(id, tx.CandidateEditCount(id))
			if keep == nil || keep(info) {
				out = append(out, info)
			}
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created < out[j].Created })
	return out, err
}

func (o *Outcome) changes() int {
	if o == nil {
		return 0
	}
	return o.Changes
}
