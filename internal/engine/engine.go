// Package engine is swmgr's one commit path.
//
// Every change — a REST create, update or delete, and later a candidate
// commit, a restore or a rollback — is a list of Edits handed to Apply. Apply
// runs inside one store transaction (group-committed with others):
//
//  1. resolve each edit against the running configuration plus the edits
//     before it: defaults, validation from the model, duplicate keys, key
//     changes, read-only and create-only fields, no-op detection;
//  2. add the objects derived from changed ones (breakout sub-ports);
//  3. check references on the result: nothing may name a missing object, and
//     nothing still named may be deleted;
//  4. apply the ordered changes to the backend, which does all or nothing;
//  5. write the objects, indexes, a revision record and the config log entry,
//     then sync to disk once for the whole group.
//
// A failure at any step leaves the store and the backend as they were. If the
// disk write itself fails, the backend changes are undone.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// Engine validates, applies and stores configuration.
type Engine struct {
	reg     *model.Registry
	store   *store.Store
	backend backend.Backend
	box     *secrets.Box
	log     *slog.Logger
	order   map[string]int // kind name -> position in the registry (apply order)
	logKind *model.Kind
	events  *broker

	confirmMu    sync.Mutex
	confirmTimer *time.Timer
	confirmStuck atomic.Uint64 // the unconfirmed commit whose rollback failed: a late confirm may keep it
	candCache    candidateCache
	objects      *objCache
	observe      CommitObserver // nil: none
}

// CachedObjects bounds the GET-by-ObjectId cache (about 400 bytes each).
const CachedObjects = 65536

// New wires an engine. Call Start before serving.
func New(reg *model.Registry, st *store.Store, be backend.Backend, box *secrets.Box, log *slog.Logger) *Engine {
	e := &Engine{reg: reg, store: st, backend: be, box: box, log: log, order: map[string]int{}, events: newBroker(), objects: newObjCache(CachedObjects)}
	for i, k := range reg.Kinds() {
		e.order[k.Name] = i
	}
	e.logKind = reg.Lookup(model.State, "ConfigLog")
	return e
}

// Registry returns the kinds the engine serves.
func (e *Engine) Registry() *model.Registry { return e.reg }

// Store returns the engine's store, for reads.
func (e *Engine) Store() *store.Store { return e.store }

// Meta says who made a change, from where and why.
type Meta struct {
	User    string // "" for unauthenticated local HTTP
	Addr    string // ip:port of the caller
	Source  string // rest, cli, restore, rollback, confirm-timeout, system
	Comment string
}

// LogInfo is what the config log records about a request besides its result.
type LogInfo struct {
	API       string // lower-case kind name
	Operation string // POST, PATCH or DELETE
	Data      string // the submitted body, compact, secrets redacted
}

// Target picks an existing object: by ObjectId, or by its key fields.
type Target struct {
	ID  *uuid.UUID
	Key model.Object
}

// Edit is one requested change.
type Edit struct {
	Kind    *model.Kind
	Op      backend.Op
	Target  Target       // update and delete
	Fields  model.Object // create and update: the fields given
	IfMatch string       // update and delete: the ETag the client holds, if any
	ID      *uuid.UUID   // create: the ObjectId to give the object (restores keep ids)

	bySwitch bool // made by the switch itself (discovery): may create any kind
}

// Outcome is what a successful commit did (or, in a dry run, would do).
type Outcome struct {
	Revision uint64      // 0 when nothing changed (or a dry run)
	IDs      []uuid.UUID // the ObjectId of each edit's object
	ETags    []uint64    // the revision that last changed each edit's object
	Changes  int
	Diffs    []Diff // what changed, secrets redacted
	DryRun   bool
}

// Request is one commit.
type Request struct {
	Edits []Edit
	Meta  Meta
	Log   *LogInfo // the config log entry to write with the result; nil for none
	// DryRun validates and reports what would change, changing nothing.
	DryRun bool
	// BaseRevision, when not 0, makes the commit a 409 if an object it
	// changes was changed by another commit after this revision, unless
	// Force.
	BaseRevision uint64
	Force        bool
	// IfRevision, when not 0, makes the commit a 412 unless the running
	// configuration is at this revision.
	IfRevision uint64
	// Confirm, when not 0, rolls the commit back after this long unless it
	// is confirmed.
	Confirm time.Duration
	// Allow, when set, vets every resolved change against what the caller
	// may do (a rollback by an operator may not touch users); an error
	// refuses the whole commit.
	Allow func(k *model.Kind, op backend.Op, key string) error

	duringConfirm bool               // a rollback or a confirmation: allowed while one is pending
	clearConfirm  bool               // the commit ends the wait for a confirmation
	after         func(tx *store.Tx) // more writes once the commit succeeded
}

// Apply commits edits: the common case of Commit.
func (e *Engine) Apply(ctx context.Context, edits []Edit, meta Meta, info *LogInfo) (*Outcome, error) {
	return e.Commit(ctx, Request{Edits: edits, Meta: meta, Log: info})
}

// Commit resolves, checks, applies and stores a request's edits as one
// commit.
func (e *Engine) Commit(ctx context.Context, req Request) (*Outcome, error) {
	return e.commitWith(ctx, req, nil)
}

// commitWith is Commit with a prepare step run inside the transaction to
// compute the edits from the running configuration (rollback, candidates).
func (e *Engine) commitWith(ctx context.Context, req Request, prepare func(tx *store.Tx, req *Request) error) (out *Outcome, err error) {
	if e.observe != nil && !req.DryRun {
		start := time.Now()
		defer func() { e.observe(time.Since(start), out.changes(), err) }()
	}
	err = e.store.Commit(ctx, func(tx *store.Tx) (func(), error) {
		if prepare != nil {
			if err := prepare(tx, &req); err != nil {
				return nil, err
			}
		}
		o, undo, err := e.commitIn(ctx, tx, &req)
		out = o
		return undo, err
	})
	if err != nil {
		if req.Log != nil {
			e.logFailure(ctx, req.Meta, req.Log, err)
		}
		return nil, err
	}
	return out, nil
}

// commitIn runs a commit inside tx. It writes nothing unless it succeeds.
func (e *Engine) commitIn(ctx context.Context, tx *store.Tx, req *Request) (*Outcome, func(), error) {
	if !req.duringConfirm && !req.DryRun {
		if p := pendingConfirm(tx); p != nil {
			return nil, nil, apierr.Conflict(apierr.CodeConflict, "", "revision %d awaits confirmation until %s: confirm it with POST /public/v1/revisions/%d/confirm, or wait for it to be rolled back; no other change is accepted until then",
				p.Revision, time.Unix(0, p.Deadline).UTC().Format(time.RFC3339), p.Revision)
		}
	}
	if req.IfRevision != 0 && tx.Revision() != req.IfRevision {
		return nil, nil, apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, "", "", "the running configuration is at revision %d, not %d", tx.Revision(), req.IfRevision)
	}
	v := newView(e, tx)
	out, changes, err := v.resolveAll(req.Edits)
	if err != nil {
		return nil, nil, err
	}
	if req.BaseRevision != 0 && !req.Force {
		if err := e.checkConflicts(tx, req.BaseRevision, changes); err != nil {
			return nil, nil, err
		}
	}
	if err := v.checkLastAdmin(changes); err != nil {
		return nil, nil, err
	}
	if req.Allow != nil {
		for _, c := range changes {
			if err := req.Allow(c.Kind, c.Op, c.Key); err != nil {
				return nil, nil, err
			}
		}
	}
	out.Diffs = e.diffs(changes)
	out.Changes = len(changes)
	if req.DryRun {
		out.DryRun = true
		return out, nil, nil
	}
	if len(changes) == 0 {
		if req.Log != nil {
			e.appendLog(tx, req.Meta, req.Log, "Success")
		}
		return out, nil, nil
	}
	if err := e.backend.Apply(ctx, backendChanges(changes)); err != nil {
		return nil, nil, e.backendError(err)
	}
	undo := func() {
		inv := backendChanges(changes)
		for i, j := 0, len(inv)-1; i < j; i, j = i+1, j-1 {
			inv[i], inv[j] = inv[j], inv[i]
		}
		for i := range inv {
			inv[i] = inv[i].Inverse()
		}
		if err := e.backend.Apply(context.WithoutCancel(ctx), inv); err != nil {
			e.log.Error("undo of backend changes failed; the switch may differ from the store", "err", err)
		}
	}
	out.Revision = tx.NextRevision()
	event, err := v.write(out.Revision, changes, req.Meta)
	if err != nil {
		undo()
		return nil, nil, err
	}
	for i := range out.ETags {
		if out.ETags[i] == 0 {
			out.ETags[i] = out.Revision
		}
	}
	if req.clearConfirm {
		setPendingConfirm(tx, nil)
	}
	if req.after != nil {
		req.after(tx)
	}
	if req.Confirm > 0 {
		setPendingConfirm(tx, &confirmState{Revision: out.Revision, Restore: out.Revision - 1, Deadline: time.Now().Add(req.Confirm).UnixNano()})
		rev, after := out.Revision, req.Confirm
		tx.OnCommit(func() { e.armConfirm(rev, after) })
	}
	if req.Log != nil {
		e.appendLog(tx, req.Meta, req.Log, "Success")
	}
	tx.OnCommit(func() {
		e.objects.commit(out.Revision, changes)
		e.events.publish(out.Revision, event)
	})
	return out, undo, nil
}

func (e *Engine) backendError(err error) error {
	if ae, ok := err.(*apierr.Error); ok {
		return ae
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "", "", "the switch failed to apply the change: %v", err)
}

func backendChanges(cs []*change) []backend.Change {
	out := make([]backend.Change, len(cs))
	for i, c := range cs {
		out[i] = c.Change
	}
	return out
}

// appendLog adds a config log entry inside tx.
func (e *Engine) appendLog(tx *store.Tx, meta Meta, info *LogInfo, result string) {
	now := nowString()
	tx.AppendLog(func(seq uint64) []byte {
		return e.logKind.AppendJSON(nil, model.Object{
			"SeqNum": int64(seq), "Time": now, "API": info.API, "Operation": info.Operation,
			"Data": info.Data, "Result": result, "UserAddr": meta.Addr, "UserName": meta.User,
		}, false)
	})
}

// logFailure records a failed request in a commit of its own.
func (e *Engine) logFailure(ctx context.Context, meta Meta, info *LogInfo, failure error) {
	result := "Error: " + apierr.From(failure).Message
	err := e.store.Commit(context.WithoutCancel(ctx), func(tx *store.Tx) (func(), error) {
		e.appendLog(tx, meta, info, result)
		return nil, nil
	})
	if err != nil {
		e.log.Error("config log write failed", "err", err)
	}
}

// Log records a request that failed before it reached the engine (a body
// that is not JSON, an unknown kind).
func (e *Engine) Log(ctx context.Context, meta Meta, info *LogInfo, failure error) {
	if info == nil {
		return
	}
	e.logFailure(ctx, meta, info, failure)
}

// ClearLog empties the config log; the clear is the first entry of the new one.
func (e *Engine) ClearLog(ctx context.Context, meta Meta, info *LogInfo) error {
	return e.store.Commit(ctx, func(tx *store.Tx) (func(), error) {
		tx.ClearLog()
		e.appendLog(tx, meta, info, "Success")
		return nil, nil
	})
}

// Start makes the backend match the store, then records what the backend
// discovered (new ports, read-only fields) and the singletons' defaults as a
// commit of its own.
func (e *Engine) Start(ctx context.Context) error {
	if err := e.replay(ctx); err != nil {
		return fmt.Errorf("replay stored configuration into the %s backend: %w", e.backend.Name(), err)
	}
	found, err := e.backend.Discover(ctx)
	if err != nil {
		return fmt.Errorf("discover the switch: %w", err)
	}
	var edits []Edit
	err = e.store.View(func(tx *store.Tx) error {
		for _, k := range e.reg.Kinds() {
			if !k.Singleton && !k.Discovered {
				continue
			}
			objs := found[k.Name]
			if k.Singleton && len(objs) == 0 {
				objs = []model.Object{{}}
			}
			for _, d := range objs {
				full := k.Defaults()
				for n, val := range d {
					full[n] = val
				}
				key := k.Key(full)
				rec, ok, err := tx.Get(k.Name, key)
				if err != nil {
					return err
				}
				if !ok {
					edits = append(edits, Edit{Kind: k, Op: backend.Create, Fields: full, bySwitch: true})
					continue
				}
				cur, err := e.decode(k, rec)
				if err != nil {
					return err
				}
				upd := model.Object{}
				for _, f := range k.Fields {
					if f.ReadOnly && d[f.Name] != nil && !equalValue(cur[f.Name], d[f.Name]) {
						upd[f.Name] = d[f.Name]
					}
				}
				if len(upd) > 0 {
					edits = append(edits, Edit{Kind: k, Op: backend.Update, Target: Target{Key: keyFields(k, cur)}, Fields: upd})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(edits) > 0 {
		req := Request{Edits: edits, Meta: Meta{Source: "system", Comment: "discovered from the switch"}, duringConfirm: true}
		if _, err := e.Commit(ctx, req); err != nil {
			return err
		}
	}
	if err := e.expireCandidates(ctx); err != nil {
		return fmt.Errorf("expire candidates: %w", err)
	}
	e.resumeConfirm()
	return nil
}

// replay applies every stored object to the backend, in apply order.
func (e *Engine) replay(ctx context.Context) error {
	var changes []backend.Change
	err := e.store.View(func(tx *store.Tx) error {
		for _, k := range e.reg.Kinds() {
			if k.Class != model.Config || !e.backend.Replays(k) {
				continue
			}
			_, _, err := tx.List(k.Name, 0, int(^uint(0)>>1), func(rec store.Record) error {
				obj, err := e.decode(k, rec)
				if err != nil {
					return err
				}
				changes = append(changes, backend.Change{Kind: k, Op: backend.Create, Key: rec.Key, After: obj})
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.log.Info("replaying stored configuration", "objects", len(changes), "backend", e.backend.Name())
	return e.backend.Apply(ctx, changes)
}

func keyFields(k *model.Kind, o model.Object) model.Object {
	key := model.Object{}
	for _, f := range k.Keys() {
		key[f.Name] = o[f.Name]
	}
	return key
}

func equalValue(a, b any) bool { return model.EqualValue(a, b) }
