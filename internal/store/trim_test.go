package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// historyOf lists the revision records and the config log (each entry's
// SeqNum, text and whether it is a failure) that a store keeps.
func historyOf(t *testing.T, s *Store) string {
	t.Helper()
	var out []byte
	err := s.View(func(tx Txn) error {
		if _, _, err := tx.Revisions(0, 1<<20, func(rev uint64, data []byte) error {
			out = fmt.Appendf(out, "rev %d %s\n", rev, data)
			return nil
		}); err != nil {
			return err
		}
		_, _, err := tx.Log(0, 1<<20, func(seq uint64, entry []byte) error {
			failed := tx.(*Tx).bucket(iLogMeta).Get(failedKey(seq)) != nil
			out = fmt.Appendf(out, "log %d %s failed=%v\n", seq, entry, failed)
			return nil
		})
		if err != nil {
			return err
		}
		n, nf := tx.(*Tx).logCounts()
		out = fmt.Appendf(out, "counts %d %d\n", n, nf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The history a batch trims once at its end (trimHistory) is the history
// the same writes leave one transaction each: the last MaxRevisions
// revision records, and the config log's rule for failures, whatever the
// mix of successes and failures and however they are batched.
func TestBatchedTrimKeepsWhatSingleCommitsKeep(t *testing.T) {
	type write = struct {
		failed bool
		read   bool // a read of the history inside the batch, after the write
	}
	for _, mix := range []struct {
		name     string
		failures float64 // share of failed log entries
	}{
		{"successes only", 0},
		{"few failures", 0.05},
		{"many failures", 0.7},
	} {
		t.Run(mix.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(mix.failures*100)))
			var writes []write
			for range 3*MaxLogEntries + 77 {
				writes = append(writes, write{failed: rng.Float64() < mix.failures, read: rng.IntN(50) == 0})
			}
			apply := func(tx Txn, w write) {
				if w.failed {
					tx.AppendFailedLog(func(seq uint64) []byte { return fmt.Appendf(nil, "failed %d", seq) })
				} else {
					rev := tx.NextRevision()
					tx.PutRevision(rev, fmt.Appendf(nil, "r%d", rev))
					tx.AppendLog(func(seq uint64) []byte { return fmt.Appendf(nil, "ok %d", seq) })
				}
				if w.read {
					tx.Log(0, 3, func(uint64, []byte) error { return nil })
					tx.GetRevision(1)
				}
			}
			// What is compared is what the transactions leave, not its
			// durability: no fsyncs, or the thousands of commits take long.
			single := Must(Open(t.TempDir()))
			defer single.Close()
			single.db.NoSync = true
			for _, w := range writes {
				if err := single.Update(func(tx Txn) error { apply(tx, w); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			batched := Must(Open(t.TempDir()))
			defer batched.Close()
			batched.db.NoSync = true
			for rest := writes; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(200))
				if err := batched.Update(func(tx Txn) error {
					for _, w := range rest[:n] {
						apply(tx, w)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			want := expectedHistory(writes)
			for name, st := range map[string]*Store{"single commits": single, "batched commits": batched} {
				if got := historyOf(t, st); got != want {
					wl, gl := splitLines(want), splitLines(got)
					i := 0
					for i < min(len(wl), len(gl)) && wl[i] == gl[i] {
						i++
					}
					t.Errorf("%s: the history differs from the rules' at line %d (of %d, want %d): got %q, want %q", name, i, len(gl), len(wl), at(gl, i), at(wl, i))
				}
			}
		})
	}
}

// expectedHistory is what the retention rules keep of writes, one by one:
// the last MaxRevisions revision records; a log entry past MaxLogEntries
// pushes out the oldest failure while there are more than MaxLogFailures,
// else the oldest entry.
func expectedHistory(writes []struct{ failed, read bool }) string {
	type entry struct {
		seq    uint64
		failed bool
	}
	var log []entry
	var revs []uint64
	var seq, rev uint64
	for _, w := range writes {
		seq++
		if w.failed {
			log = append(log, entry{seq, true})
		} else {
			rev++
			revs = append(revs, rev)
			log = append(log, entry{seq, false})
		}
		for len(log) > MaxLogEntries {
			failures := 0
			for _, e := range log {
				if e.failed {
					failures++
				}
			}
			i := 0
			if failures > MaxLogFailures {
				i = slices.IndexFunc(log, func(e entry) bool { return e.failed })
			}
			log = slices.Delete(log, i, i+1)
		}
	}
	var out []byte
	for i := len(revs) - 1; i >= 0 && i >= len(revs)-MaxRevisions; i-- {
		out = fmt.Appendf(out, "rev %d r%d\n", revs[i], revs[i])
	}
	failures := 0
	for _, e := range log {
		text := "ok"
		if e.failed {
			text = "failed"
			failures++
		}
		out = fmt.Appendf(out, "log %d %s %d failed=%v\n", e.seq, text, e.seq, e.failed)
	}
	return string(fmt.Appendf(out, "counts %d %d\n", len(log), failures))
}

func splitLines(s string) []string {
	return slices.Collect(func(yield func(string) bool) {
		for len(s) > 0 {
			i := 0
			for i < len(s) && s[i] != '\n' {
				i++
			}
			if !yield(s[:i]) {
				return
			}
			s = s[min(i+1, len(s)):]
		}
	})
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "(none)"
}

func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
