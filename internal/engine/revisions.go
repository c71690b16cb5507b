package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Revision is one commit as clients see it.
type Revision struct {
	Revision uint64
	Time     string
	User     string
	Source   string // rest, cli, restore, rollback, confirm-timeout, system
	Comment  string
	Changes  []Diff
}

// Diff is one object's change. Before and After hold every field, each set
// secret as "******".
type Diff struct {
	Kind     string
	Key      string // "IntfRef=fpPort1"
	ObjectId string
	Op       string          // create, update, delete
	Before   json.RawMessage `json:",omitempty"`
	After    json.RawMessage `json:",omitempty"`
}

// storedDiff keeps the secrets too, sealed, so that a rollback can restore
// them. It is never sent to clients.
type storedDiff struct {
	Diff
	StoreKey     string
	BeforeSealed []byte `json:",omitempty"`
	AfterSealed  []byte `json:",omitempty"`
}

type storedRevision struct {
	Revision
	Changes []storedDiff
}

func (e *Engine) diff(c *change) Diff {
	k := c.Kind
	d := Diff{Kind: k.Name, Key: k.DescribeKey(c.Key), ObjectId: c.id.String(), Op: c.Op.String()}
	if c.Before != nil {
		d.Before = k.AppendRedactedJSON(nil, c.Before)
	}
	if c.After != nil && c.Op != model.Delete {
		d.After = k.AppendRedactedJSON(nil, c.After)
	}
	return d
}

func (e *Engine) diffs(changes []*change) []Diff {
	out := make([]Diff, len(changes))
	for i, c := range changes {
		out[i] = e.diff(c)
	}
	return out
}

func decodeStoredRevision(data []byte) (*storedRevision, error) {
	var r storedRevision
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("stored revision: %w", err)
	}
	return &r, nil
}

// publicRevision re-encodes a stored revision record without its sealed
// secrets.
func publicRevision(data []byte) ([]byte, error) {
	if out, ok := streamPublicRevision(bytes.NewReader(data), len(data)); ok {
		return out, nil
	}
	r, err := decodeStoredRevision(data)
	if err != nil {
		return nil, err
	}
	r.Revision.Changes = make([]Diff, len(r.Changes))
	for i, d := range r.Changes {
		r.Revision.Changes[i] = d.Diff
	}
	return json.Marshal(r.Revision)
}

// GetRevision appends one revision record.
func (e *Engine) GetRevision(rev uint64, dst []byte) ([]byte, error) {
	err := e.store.View(func(tx store.Txn) error {
		if pub, ok := streamPublicRevision(tx.RevisionReader(rev)); ok {
			dst = appendOrTake(dst, pub)
			return nil
		}
		data := tx.GetRevision(rev)
		if data == nil {
			return apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %d; the running revision is %d and the last %d are kept", rev, tx.Revision(), store.MaxRevisions)
		}
		pub, err := publicRevision(data)
		dst = append(dst, pub...)
		return err
	})
	return dst, err
}

// ListRevisions appends a page of revisions, newest first, in the get-all
// form; the marker is the revision to continue below (0: the newest).
func (e *Engine) ListRevisions(marker uint64, count int, dst []byte) ([]byte, error) {
	var p pageWriter
	err := e.store.View(func(tx store.Txn) error {
		var err error
		p.next, p.more, err = tx.Revisions(marker, count, func(rev uint64, data []byte) error {
			pub, err := publicRevision(data)
			if err == nil {
				p.add(pub, strconv.AppendUint(nil, rev, 10))
			}
			return err
		})
		return err
	})
	if err != nil {
		return dst, err
	}
	return p.appendTo(dst, marker), nil
}

// checkConflicts refuses a commit that changes an object some other commit
// changed after base.
func (v *view) checkConflicts(base uint64, changes []*change) error {
	tx := v.tx
	cur := tx.Revision()
	if v.revision() <= base {
		return nil
	}
	mine := map[string]bool{}
	for _, c := range changes {
		mine[c.Kind.Name+"\x00"+c.Key] = true
	}
	var clash []string
	seen := map[string]bool{}
	for id, rev := range v.touched {
		if mine[id] && rev > base {
			seen[id] = true
			kind, key, _ := strings.Cut(id, "\x00")
			clash = append(clash, fmt.Sprintf("%s %s (revision %d)", kind, key, rev))
		}
	}
	for rev := base + 1; rev <= cur; rev++ {
		data := tx.GetRevision(rev)
		if data == nil {
			return apierr.Conflict(apierr.CodeConflict, "", "the candidate is based on revision %d, older than the revisions kept; commit with Force, or start a new candidate", base)
		}
		r, err := decodeStoredRevision(data)
		if err != nil {
			return err
		}
		for _, d := range r.Changes {
			key := d.StoreKey
			if k := v.e.reg.Lookup(model.Config, d.Kind); k != nil {
				key = currentKey(k, d)
			}
			id := d.Kind + "\x00" + key
			if mine[id] && !seen[id] {
				seen[id] = true
				clash = append(clash, fmt.Sprintf("%s %s (revision %d by %q)", d.Kind, d.Key, rev, r.User))
			}
		}
	}
	if len(clash) > 0 {
		return apierr.Conflict(apierr.CodeConflict, "", "since revision %d, other commits changed objects this commit changes: %s; review and commit again with Force to overwrite them", base, joinList(clash))
	}
	return nil
}

func joinList(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// objectAt rebuilds an object's full state (secrets included) from one side
// of a stored diff.
func (e *Engine) objectAt(k *model.Kind, d storedDiff, before bool) (model.Object, error) {
	raw, sealed := d.After, d.AfterSealed
	if before {
		raw, sealed = d.Before, d.BeforeSealed
	}
	given, err := k.DecodeStored(raw)
	if err != nil {
		return nil, err
	}
	obj := k.Defaults()
	for n, v := range given {
		if f := k.Field(n); f != nil && f.Secret != model.Public {
			continue // "******" in the diff; the real value is sealed
		}
		obj[n] = v
	}
	if len(sealed) > 0 {
		id, err := parseUUID(d.ObjectId)
		if err != nil {
			return nil, err
		}
		plain, err := e.box.Unseal(sealed, sealAD(k, id))
		if err != nil {
			return nil, fmt.Errorf("revision secrets of %s %s: %w", k.Name, d.Key, err)
		}
		var sec map[string]string
		if err := json.Unmarshal(plain, &sec); err != nil {
			return nil, err
		}
		for n, v := range sec {
			obj[n] = v
		}
	}
	return obj, nil
}
