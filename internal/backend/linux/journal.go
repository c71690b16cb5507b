package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// The apply journal makes a kill -9 in the middle of an apply converge at
// the next start. Before its kernel changes, Apply writes the batch's
// dataplane changes (kind, op, key, before, after) to the journal, which
// stays until the next apply overwrites it: the backend is not told when
// the engine's store write is durable. At the next start the engine's
// replay hands over what the store holds; every journaled change the store
// did not record (the stored object is not the change's result) is undone
// first, newest first, and the replay then ensures the stored objects. A
// recorded change is left alone, so a restart does not flap it.

type journalEntry struct {
	Kind   string       `json:"kind"`
	Op     backend.Op   `json:"op"`
	Key    string       `json:"key"`
	Before model.Object `json:"before,omitempty"`
	After  model.Object `json:"after,omitempty"`
}

func (b *Backend) writeJournal(changes []backend.Change) error {
	if b.opts.Journal == "" {
		return nil
	}
	var entries []journalEntry
	for _, c := range changes {
		if drivers[c.Kind.Name] != nil {
			entries = append(entries, journalEntry{Kind: c.Kind.Name, Op: c.Op, Key: c.Key, Before: c.Before, After: c.After})
		}
	}
	if len(entries) == 0 {
		return nil
	}
	data, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("apply journal: %w", err)
	}
	if err := atomicfile.Replace(b.opts.Journal, data, 0o600); err != nil {
		return fmt.Errorf("apply journal: %w", err)
	}
	return nil
}

// readJournal returns the entries of an apply that did not finish.
func (b *Backend) readJournal() ([]journalEntry, error) {
	if b.opts.Journal == "" {
		return nil, nil
	}
	data, err := os.ReadFile(b.opts.Journal)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("apply journal: %w", err)
	}
	var entries []journalEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("apply journal %s: %w", b.opts.Journal, err)
	}
	return entries, nil
}

// undoUnrecorded undoes the journaled changes the store did not record;
// stored holds the replayed objects by kind and key.
func (b *Backend) undoUnrecorded(tx *Tx, entries []journalEntry, stored map[string]map[string]model.Object) error {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		d := drivers[e.Kind]
		if d == nil {
			continue
		}
		before, after := fixNumbers(e.Before), fixNumbers(e.After)
		cur, ok := stored[e.Kind][e.Key]
		var err error
		switch {
		case e.Op == backend.Delete:
			// Not recorded: the replay makes the stored object again.
			// Recorded: the kernel has what the store says.
		case !ok: // a create (or an update of an object since deleted) the store does not have
			err = d.remove(b, tx, after)
		case fmt.Sprint(cur) != fmt.Sprint(after):
			// An update the store did not record: back to the stored
			// object, removing what the unrecorded one added.
			err = d.ensure(b, tx, cur, after)
		}
		if err != nil {
			return fmt.Errorf("undo unrecorded %s of %s %s: %w", e.Op, e.Kind, e.Key, err)
		}
		_ = before
	}
	return nil
}

func fixNumbers(o model.Object) model.Object {
	if o == nil {
		return nil
	}
	out := model.Object{}
	for k, v := range o {
		switch x := v.(type) {
		case float64:
			out[k] = int64(x)
		case []any:
			l := make([]string, len(x))
			for i, s := range x {
				l[i], _ = s.(string)
			}
			out[k] = l
		default:
			out[k] = v
		}
	}
	return out
}
