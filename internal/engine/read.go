package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Reads append the response body to dst straight from the stored JSON, so a
// config read costs one index lookup and a copy. A state read also asks the
// backend for the object's operational fields.

// GetByID appends {"Object": ..., "ObjectId": ...} for the object with id,
// returning the object's ETag revision.
func (e *Engine) GetByID(ctx context.Context, k *model.Kind, id uuid.UUID, state bool, dst []byte) ([]byte, uint64, error) {
	if !state {
		if c, ok := e.objects.get(id); ok {
			if c.deleted || c.kind != k.Name {
				return dst, 0, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s has ObjectId %s", k.Name, id)
			}
			return appendObject(dst, c.public, id), c.modRev, nil
		}
	}
	return e.getStoredByID(ctx, k, id, state, dst)
}

// getStoredByID is GetByID from the store (the cache missed, or a state
// read). Apart so that GetByID's id stays on the stack: the closure below
// takes its address.
func (e *Engine) getStoredByID(ctx context.Context, k *model.Kind, id uuid.UUID, state bool, dst []byte) ([]byte, uint64, error) {
	var rev uint64
	err := e.store.View(func(tx store.Txn) error {
		rec, ok, err := tx.GetByID(id)
		if err != nil {
			return e.damagedStore(k, err)
		}
		if !ok || rec.Kind != k.Name {
			if !ok {
				e.objects.fill(id, cacheEntry{deleted: true, asOf: tx.Revision()})
			}
			return apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s has ObjectId %s", k.Name, id)
		}
		rev = rec.ModRev
		if dst, err = e.appendOne(ctx, dst, k, rec, state); err != nil {
			return err
		}
		if !state {
			e.objects.fill(id, cacheEntry{kind: k.Name, public: rec.Public, modRev: rec.ModRev, asOf: tx.Revision()})
		}
		return nil
	})
	return dst, rev, err
}

// GetByKey is GetByID for an object named by its key fields.
func (e *Engine) GetByKey(ctx context.Context, k *model.Kind, keyFields model.Object, state bool, dst []byte) ([]byte, uint64, error) {
	key, err := KeyOf(k, keyFields)
	if err != nil {
		return dst, 0, err
	}
	return e.GetByStoreKey(ctx, k, key, state, dst)
}

// GetByStoreKey is GetByKey for a key already in the store's form
// (model.Kind.Key, model.Kind.KeyFromText).
func (e *Engine) GetByStoreKey(ctx context.Context, k *model.Kind, key string, state bool, dst []byte) ([]byte, uint64, error) {
	var rev uint64
	err := e.store.View(func(tx store.Txn) error {
		rec, ok, err := tx.Get(k.Name, key)
		if err != nil {
			return e.damagedStore(k, err)
		}
		if !ok {
			return apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s with %s", k.Name, k.DescribeKey(key))
		}
		rev = rec.ModRev
		dst, err = e.appendOne(ctx, dst, k, rec, state)
		return err
	})
	return dst, rev, err
}

// appendOne appends {"Object": ..., "ObjectId": ...} for rec. A record
// whose stored object is not a JSON object, or does not decode, is never
// served: it is a damaged record (damagedRecord), and dst is returned as it
// was.
func (e *Engine) appendOne(ctx context.Context, dst []byte, k *model.Kind, rec store.Record, state bool) ([]byte, error) {
	if !isObject(rec.Public) {
		return dst, e.damagedRecord(k, rec, "its stored object is not a JSON object")
	}
	start := len(dst)
	dst = append(dst, `{"Object":`...)
	if state {
		obj, err := e.decode(k, rec)
		if err != nil {
			return dst[:start], e.damagedRecord(k, rec, err.Error())
		}
		if err := e.fillState(ctx, k, obj); err != nil {
			return dst, err
		}
		dst = k.AppendJSON(dst, obj, true)
	} else {
		dst = append(dst, rec.Public...)
	}
	dst = append(dst, `,"ObjectId":"`...)
	dst = appendUUID(dst, rec.ID)
	return append(dst, `"}`...), nil
}

// isObject reports whether a stored object is a JSON object: what every
// read hands out as it is.
func isObject(public []byte) bool {
	return len(public) > 1 && public[0] == '{' && json.Valid(public)
}

// damagedRecord is the answer to a read of a record that does not read
// (500, damaged_record), naming the record and how to recover; it is
// logged, as the operator must act on it.
func (e *Engine) damagedRecord(k *model.Kind, rec store.Record, what string) error {
	id := rec.ID.String()
	if rec.ID == uuid.Nil {
		id = "unreadable"
	}
	e.log.Error("damaged stored record: not served", "kind", k.Name, "key", rec.Key, "object_id", id, "err", what, "recovery", store.RecoverHint)
	return apierr.New(http.StatusInternalServerError, apierr.CodeDamagedRecord, k.Name, "",
		"the stored %s %q (ObjectId %s) is damaged: %s; swmgr serves none of it. To recover: %s", k.Name, rec.Key, id, what, store.RecoverHint)
}

// damagedStore is damagedRecord for a record the store could not read (its
// header): err, a *store.DamagedError, names it; any other err is returned
// as it is.
func (e *Engine) damagedStore(k *model.Kind, err error) error {
	var damaged *store.DamagedError
	if !errors.As(err, &damaged) {
		return err
	}
	return e.damagedRecord(k, store.Record{Key: damaged.Key}, damaged.What)
}

// appendObject appends {"Object": public, "ObjectId": "id"}.
func appendObject(dst, public []byte, id uuid.UUID) []byte {
	dst = append(dst, `{"Object":`...)
	dst = append(dst, public...)
	dst = append(dst, `,"ObjectId":"`...)
	dst = appendUUID(dst, id)
	return append(dst, `"}`...)
}

// appendUUID writes id in its canonical 8-4-4-4-12 form without allocating.
func appendUUID(dst []byte, id uuid.UUID) []byte {
	const hexd = "0123456789abcdef"
	for i, b := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexd[b>>4], hexd[b&15])
	}
	return dst
}

// List appends one page of k's objects in creation order.
func (e *Engine) List(ctx context.Context, k *model.Kind, marker uint64, count int, state bool, dst []byte) ([]byte, error) {
	var p pageWriter
	err := e.store.View(func(tx store.Txn) error {
		// A damaged record is left out (damagedRecord logs it) and the
		// list goes on: the kind's other objects stay readable. It counts
		// in the page's count, so that a page's size stays bounded.
		p.next = marker
		for listed := 0; ; {
			var err error
			p.next, p.more, err = tx.List(k.Name, p.next, count-listed, func(rec store.Record) error {
				listed++
				items := p.items
				var err error
				if p.items, err = e.appendOne(ctx, p.sep(), k, rec, state); err != nil && apierr.From(err).Code == apierr.CodeDamagedRecord {
					p.items, err = items, nil
					p.n--
				}
				return err
			})
			var damaged *store.DamagedError
			if !errors.As(err, &damaged) {
				return err
			}
			e.damagedStore(k, err)
			listed++
			p.next = damaged.Seq + 1
		}
	})
	if err != nil {
		return dst, err
	}
	return p.appendTo(dst, marker), nil
}

// pageWriter collects the Objects of a get-all page.
type pageWriter struct {
	items []byte
	n     int
	next  uint64
	more  bool
}

// sep counts one more item and returns the items with its separator.
func (p *pageWriter) sep() []byte {
	if p.n > 0 {
		p.items = append(p.items, ',')
	}
	p.n++
	return p.items
}

// add appends {"Object": object, "ObjectId": "id"}.
func (p *pageWriter) add(object, id []byte) {
	p.items = append(p.sep(), `{"Object":`...)
	p.items = append(p.items, object...)
	p.items = append(p.items, `,"ObjectId":"`...)
	p.items = append(p.items, id...)
	p.items = append(p.items, `"}`...)
}

func (p *pageWriter) appendTo(dst []byte, marker uint64) []byte {
	return model.AppendPage(dst, marker, p.next, p.more, p.n, p.items)
}

// ListLog appends one page of the config log, oldest first.
func (e *Engine) ListLog(marker uint64, count int, dst []byte) ([]byte, error) {
	err := e.store.View(func(tx store.Txn) error {
		var err error
		dst, err = e.clog.List(tx, marker, count, dst)
		return err
	})
	return dst, err
}

// GetLog appends one config log entry by SeqNum.
func (e *Engine) GetLog(seq uint64, dst []byte) ([]byte, error) {
	err := e.store.View(func(tx store.Txn) error {
		var err error
		dst, err = e.clog.Get(tx, seq, dst)
		return err
	})
	return dst, err
}

// State sources: a state-only kind answers from the source it declares
// (model.Kind.Source): the config log, or its backend driver's List.

// ListState appends a page of a state-only kind's objects.
func (e *Engine) ListState(ctx context.Context, k *model.Kind, marker uint64, count int, dst []byte) ([]byte, error) {
	if k.Source == model.SourceConfigLog {
		return e.ListLog(marker, count, dst)
	}
	objs, err := e.stateObjects(ctx, k)
	if err != nil {
		return dst, err
	}
	p := pageWriter{next: marker}
	for i := marker; i < uint64(len(objs)); i++ {
		if p.n == count {
			p.more = true
			break
		}
		p.add(k.AppendJSON(nil, objs[i], true), nil)
		p.next = i + 1
	}
	return p.appendTo(dst, marker), nil
}

// GetState appends the object of a state-only kind (not the config log)
// whose key fields are key.
func (e *Engine) GetState(ctx context.Context, k *model.Kind, key model.Object, dst []byte) ([]byte, error) {
	objs, err := e.stateObjects(ctx, k)
	if err != nil {
		return dst, err
	}
	for _, o := range objs {
		match := true
		for n, v := range key {
			match = match && equalValue(o[n], v)
		}
		if match {
			return appendObject(dst, k.AppendJSON(nil, o, true), uuid.Nil), nil
		}
	}
	return dst, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s matches the query", k.Name)
}

// fillState adds to obj the state its kind's driver gives (every
// provider's share, merged by the binding table).
func (e *Engine) fillState(ctx context.Context, k *model.Kind, obj model.Object) error {
	if d := e.drivers[k.Name]; d != nil && d.State != nil {
		st, err := d.State(ctx, obj)
		if err != nil {
			return e.backendError(err)
		}
		for n, v := range st {
			obj[n] = v
		}
	}
	return nil
}

// StateObjects returns the objects of a state-only kind that its backend
// driver lists (model.SourceBackend).
func (e *Engine) StateObjects(ctx context.Context, k *model.Kind) ([]model.Object, error) {
	return e.stateObjects(ctx, k)
}

func (e *Engine) stateObjects(ctx context.Context, k *model.Kind) ([]model.Object, error) {
	d := e.drivers[k.Name]
	if d == nil || d.List == nil {
		return nil, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, k.Name, "", "the %s backend does not provide %s", e.backend.Name(), k.Name)
	}
	objs, err := d.List(ctx)
	if err != nil {
		return nil, e.backendError(err)
	}
	return objs, nil
}

// LastCommit is the revision of the last commit this engine wrote, 0 when
// none since it started. It changes with every commit: a reader that keeps
// what it read (gNMI's Get cache) knows nothing changed while it stays the
// same. It is set once the commit is durable and visible to reads, before
// the commit is answered: a read that starts after a commit's answer sees
// that commit's revision or a later one. It costs an atomic load, where
// Revision opens a read transaction.
func (e *Engine) LastCommit() uint64 { return e.lastCommit.Load() }

// LastCommitOf is LastCommit for the commits that changed an object of
// kind k: the revision of the last of them, 0 when none since the start.
// What was read of k's objects after it was taken is still true while it
// stays the same.
func (e *Engine) LastCommitOf(k *model.Kind) uint64 {
	i, ok := e.order[k.Name]
	if !ok {
		return e.LastCommit()
	}
	return e.kindCommits[i].Load()
}

// Revision returns the number of the last commit.
func (e *Engine) Revision() uint64 {
	var rev uint64
	_ = e.store.View(func(tx store.Txn) error { rev = tx.Revision(); return nil })
	return rev
}
