// Package engine is swmgr's one commit path and its single writer.
//
// Every change — a REST create, update or delete, a candidate commit, a
// restore, a rollback — is a Request of Edits. The engine owns the writer
// loop (loop.go); a write goes through it in these hops:
//
//  1. outside the loop, in the caller's goroutine: slow work that needs no
//     writer (each kind's driver Prepare: a password's hash);
//  2. in the loop, for every request waiting (a batch), in a read snapshot
//     of the store: resolve each edit against the running configuration
//     plus the requests before it (defaults, model validation, duplicates,
//     key changes, read-only and create-only fields, If-Match, no-ops), add
//     derived objects (breakout sub-ports), then the check phase (check.go)
//     on the resulting configuration: references, the model's constraints
//     across objects, and the backend drivers' capability checks. A dry run
//     stops here and reports exactly what the commit would;
//  3. backend apply: the batch's commits are handed to the backend as one
//     batch (Batcher) or applied per change through the drivers, each
//     commit all or nothing; the read-only fields the switch fills come back
//     as values;
//  4. store write: one bbolt transaction for the whole batch (records,
//     indexes, revision records, config log entries), synced once;
//  5. publish, in commit order: the object cache, the change feed, and the
//     answer to each caller.
//
// A bulk commit (bulkFrom changes or more: a restore, a reset, a rollback
// over one) is resolved and written alone in its batch, and holds in
// memory what it must and little else: a restore's edits are handed to the
// resolve one at a time (Request.stream), its objects are written through
// store.Bulk (transactions of bounded size on a staging area, made visible
// by one final transaction with its record and log entry, old or new after
// a crash), the garbage collector's target is lowered while it runs
// (gctarget.go), and the pages of each finished stage are given back to
// the system (runBatch). bench/README.md ("Restore memory") has what each
// of these bought.
//
// A failure at any hop leaves the store and the backend as they were: a
// request that fails its checks changes nothing; a commit the backend
// refuses is undone by the backend and later requests of its batch are
// resolved again; if the store write fails, the engine reverts the
// backend changes of the whole batch itself.
//
// This package is the core. The parts that sit on its commit path are
// packages of their own: feed (the change feed, which the writer publishes
// into), history (revisions, rollback, confirmed commits), candidates
// (staging) and users (the User lookup and the UserPassword action). They
// use the core's small API in parts.go — a Request's Prepare and AfterWrite,
// Submit, View — and the core does not know them.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/configlog"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// Engine validates, applies and stores configuration.
type Engine struct {
	reg     *model.Registry
	store   store.Config
	backend backend.Backend
	drivers map[string]*backend.Driver
	// settlers are the drivers with a Settle (backend.Driver), once each.
	settlers []*backend.Driver
	box      *secrets.Box
	log      *slog.Logger
	order    map[string]int // kind name -> position in the registry (apply order)
	clog     *configlog.Log
	events   *feed.Broker
	objects  *objCache

	// MaxBackendBatch bounds how many commits are handed to the backend
	// at once (0: as many as are batched). 1 turns group commit off for
	// the backend; a benchmark compares the two.
	MaxBackendBatch int

	jobs     chan *job
	epoch    atomic.Uint64 // batches run by the writer (loop.go, gather)
	lingered atomic.Uint64 // batches that waited for more requests (gather)
	// lastCommit is the revision of the last commit written (LastCommit);
	// kindCommits the last that changed each kind, by e.order's number
	// (LastCommitOf).
	lastCommit  atomic.Uint64
	kindCommits []atomic.Uint64
	stopLoop    chan struct{}
	loopDone    chan struct{}
	stopOnce    sync.Once
	warming     sync.WaitGroup // warmObjects, started by Start

	confirmHook  atomic.Pointer[func(rev uint64, after time.Duration)] // OnConfirmPending
	observe      CommitObserver                                        // nil: none
	observeApply ApplyObserver                                         // nil: none
	started      atomic.Bool                                           // Start has begun
}

// CachedObjects bounds the GET-by-ObjectId cache (an object's public JSON
// plus a 48-byte index slot each).
const CachedObjects = 65536

// New wires an engine and starts its writer loop. Call Start before
// serving: it also checks that the backend has a driver for every kind.
func New(reg *model.Registry, st store.Config, be backend.Backend, box *secrets.Box, log *slog.Logger) *Engine {
	e := &Engine{reg: reg, store: st, backend: be, drivers: be.Drivers(), box: box, log: log, order: map[string]int{},
		objects: newObjCache(CachedObjects),
		jobs:    make(chan *job, maxBatch), stopLoop: make(chan struct{}), loopDone: make(chan struct{})}
	e.events = feed.New(e.publicRevision)
	e.kindCommits = make([]atomic.Uint64, len(reg.Kinds()))
	for i, k := range reg.Kinds() {
		if d := e.drivers[k.Name]; d != nil && d.Settle != nil && !slices.Contains(e.settlers, d) {
			e.settlers = append(e.settlers, d)
		}
		e.order[k.Name] = i
	}
	for _, k := range reg.Kinds() {
		if k.Source == model.SourceConfigLog {
			e.clog = configlog.New(k)
		}
	}
	go e.loop()
	return e
}

// Close stops the writer loop once the requests in it are done.
func (e *Engine) Close() {
	e.stopOnce.Do(func() { close(e.stopLoop) })
	<-e.loopDone
	e.warming.Wait()
}

// Registry returns the kinds the engine serves.
func (e *Engine) Registry() *model.Registry { return e.reg }

// Store returns the engine's store, for reads.
func (e *Engine) Store() store.Config { return e.store }

// Meta says who made a change, from where and why.
type Meta = bind.Meta

// LogInfo is what the config log records about a request besides its result.
type LogInfo = configlog.Info

// Edit and Target live with the model; these names keep callers short.
type (
	Edit   = model.Edit
	Target = model.Target
)

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
	Allow func(k *model.Kind, op model.Op, key string) error
	// OmitDiffs says the caller does not answer with the Outcome's Diffs:
	// a commit too large for the change feed's ring (a restore) then does
	// not keep them in memory, and its Outcome has none.
	OmitDiffs bool

	// For the engine's parts (packages history and candidates):
	//
	// Prepare, when set, runs in the writer on the running configuration
	// (the store's snapshot plus the requests before it in the batch) and
	// may compute the request's edits (a rollback's, a candidate's); an
	// error refuses the request.
	Prepare func(v *View, r *Request) error
	// AfterWrite makes more writes in the commit's store transaction once
	// the request succeeded (a candidate's staged edits, its removal).
	AfterWrite func(tx store.Txn)
	// DuringConfirm lets the request through while a commit awaits
	// confirmation (a rollback, a confirmation, housekeeping).
	DuringConfirm bool
	// ClearConfirm ends the wait for a confirmation.
	ClearConfirm bool

	ownsObjects bool // created objects given whole may become the changes' (Replace)
	// stream, set by a Prepare instead of Edits, hands the edits over one
	// at a time, each resolved as it comes, so that a restore's 300,000
	// are never held together (Replace); the Outcome then has no IDs.
	stream func(yield func(Edit) error) error
	// checked holds, per edit, the object a create makes (its fields over
	// the kind's defaults), checked before the request entered the writer
	// (precheckCreates); nil for an edit the writer checks itself.
	checked []model.Object
}

// Apply commits edits: the common case of Commit.
func (e *Engine) Apply(ctx context.Context, edits []Edit, meta Meta, info *LogInfo) (*Outcome, error) {
	return e.Commit(ctx, Request{Edits: edits, Meta: meta, Log: info})
}

// Commit resolves, checks, applies and stores a request's edits as one
// commit.
func (e *Engine) Commit(ctx context.Context, req Request) (*Outcome, error) {
	return e.commitWith(ctx, req, req.prepare())
}

// commitWith is Commit with a prepare step run in the writer, on the
// running configuration, to compute the edits (rollback, candidates).
func (e *Engine) commitWith(ctx context.Context, req Request, prepare func(v *view, req *Request) error) (out *Outcome, err error) {
	if e.observe != nil && !req.DryRun {
		start := time.Now()
		defer func() { e.observe(time.Since(start), out.changes(), err) }()
	}
	req.checked = precheckCreates(req.Edits, prepare != nil)
	if err := e.prepareEdits(ctx, req.Edits); err != nil {
		if req.Log != nil {
			e.logFailure(ctx, req.Meta, req.Log, err)
		}
		return nil, err
	}
	j := &job{ctx: ctx, req: req, prepare: prepare}
	if err := e.submit(ctx, j); err != nil {
		return nil, err
	}
	return j.out, j.err
}

// precheckCreates does, before a request enters the single writer, the
// part of resolving its creates that needs no configuration: the given
// fields over the kind's defaults, required fields, each field's value and
// the kind's own Check (Kind.Validate). The writer, which the requests of
// every client pass one by one, then only looks the new object up and
// checks it against the others (createWithID). It is a head start, as
// prepareEdits is: a create that fails here is left to the writer, which
// refuses it with the same error, in the same order as the request's other
// checks (a pending confirmation, If-Revision) and its dry run. Edits a
// Prepare step computes in the writer are not known yet (deferred).
func precheckCreates(edits []Edit, deferred bool) []model.Object {
	if deferred || len(edits) == 0 || len(edits) > maxPrecheck {
		return nil
	}
	var checked []model.Object
	for i, ed := range edits {
		if ed.Op != model.Create || ed.Patch != nil {
			continue
		}
		k := ed.Kind
		if !k.Creatable() && !ed.System || k.RequireFields(ed.Fields) != nil {
			continue
		}
		obj := k.WithDefaults(ed.Fields)
		if k.Validate(obj) != nil {
			continue
		}
		if checked == nil {
			checked = make([]model.Object, len(edits))
		}
		checked[i] = obj
	}
	return checked
}

// maxPrecheck bounds the edits precheckCreates checks ahead: the objects
// of a large request (a restore's 100,000) would be held twice.
const maxPrecheck = 64

// prepareEdits runs the drivers' slow work before the edits reach the
// writer. Preparing is only a head start: an edit the driver cannot prepare
// (a password the model will refuse) goes to the writer unprepared, so that
// it is refused by the same check, with the same error, as a dry run of it.
func (e *Engine) prepareEdits(ctx context.Context, edits []Edit) error {
	for i := range edits {
		ed := &edits[i]
		if d := e.drivers[ed.Kind.Name]; d != nil && d.Prepare != nil && ed.Prepared == nil {
			p, err := d.Prepare(ctx, ed)
			if err != nil {
				e.log.Debug("edit not prepared; the writer checks it", "kind", ed.Kind.Name, "err", err)
				continue
			}
			ed.Prepared = p
		}
	}
	return nil
}

func (e *Engine) backendError(err error) error {
	if ae, ok := err.(*apierr.Error); ok {
		return ae
	}
	return apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "", "", "the switch failed to apply the change: %v", err)
}

// logFailure records a failed request in the config log.
func (e *Engine) logFailure(ctx context.Context, meta Meta, info *LogInfo, failure error) {
	j := &job{ctx: ctx, req: Request{Meta: meta, DuringConfirm: true}, failed: failure, failLog: info}
	if err := e.submit(context.WithoutCancel(ctx), j); err != nil {
		e.log.Error("config log write failed", "err", err)
	}
}

// logSuccess records a request that changed nothing in the store.
func (e *Engine) logSuccess(ctx context.Context, meta Meta, info *LogInfo) error {
	return e.submit(context.WithoutCancel(ctx), &job{ctx: ctx, req: Request{Meta: meta, Log: info, DuringConfirm: true}})
}

// Log records a request that failed before it reached the engine (a body
// that is not JSON, an unknown kind, a role the user lacks).
func (e *Engine) Log(ctx context.Context, meta Meta, info *LogInfo, failure error) {
	if info == nil {
		return
	}
	e.logFailure(ctx, meta, info, failure)
}

// ClearLog empties the config log; the clear is the first entry of the new one.
func (e *Engine) ClearLog(ctx context.Context, meta Meta, info *LogInfo) error {
	return e.submit(ctx, &job{ctx: ctx, req: Request{Meta: meta, Log: info, DuringConfirm: true, AfterWrite: func(tx store.Txn) { tx.ClearLog() }}})
}

// Start checks the backend's drivers, makes the backend match the store,
// then records what the backend discovered (new ports, read-only fields)
// and the singletons' defaults as a commit of its own.
func (e *Engine) Start(ctx context.Context) error {
	e.started.Store(true)
	if err := backend.CheckDrivers(e.reg, e.backend); err != nil {
		return err
	}
	if err := e.migrate(ctx); err != nil {
		return fmt.Errorf("migrate stored records: %w", err)
	}
	if err := e.checkStored(); err != nil {
		return fmt.Errorf("check stored records: %w", err)
	}
	if err := e.replay(ctx); err != nil {
		return fmt.Errorf("replay stored configuration into the %s backend: %w", e.backend.Name(), err)
	}
	found := map[string][]model.Object{}
	for _, k := range e.reg.Kinds() {
		if d := e.drivers[k.Name]; d != nil && d.Discover != nil {
			objs, err := d.Discover(ctx)
			if err != nil {
				return fmt.Errorf("discover the switch's %s objects: %w", k.Name, err)
			}
			found[k.Name] = objs
		}
	}
	var edits []Edit
	err := e.store.View(func(tx store.Txn) error {
		for _, k := range e.reg.Kinds() {
			if !k.Singleton && !k.Discovered {
				continue
			}
			objs := found[k.Name]
			if k.Singleton && len(objs) == 0 {
				objs = []model.Object{{}}
			}
			for _, d := range objs {
				full := k.WithDefaults(d)
				key := k.Key(full)
				rec, ok, err := tx.Get(k.Name, key)
				if err != nil {
					return err
				}
				if !ok {
					edits = append(edits, Edit{Kind: k, Op: model.Create, Fields: full, System: true})
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
					// The switch's own values (a new binary's SwVersion):
					// a system edit may change read-only fields.
					edits = append(edits, Edit{Kind: k, Op: model.Update, Target: Target{Key: keyFields(k, cur)}, Fields: upd, System: true})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(edits) > 0 {
		req := Request{Edits: edits, Meta: Meta{Source: "system", Comment: "discovered from the switch"}, DuringConfirm: true}
		if _, err := e.Commit(ctx, req); err != nil {
			return err
		}
	}
	e.warming.Add(1)
	go e.warmObjects(ctx, e.objects)
	return nil
}

// replay applies every stored object of the kinds whose drivers ask for it
// to the backend, in apply order.
func (e *Engine) replay(ctx context.Context) error {
	var changes []model.Change
	err := e.store.View(func(tx store.Txn) error {
		for _, k := range e.reg.Kinds() {
			if d := e.drivers[k.Name]; k.Class != model.Config || d == nil || !d.Replay {
				continue
			}
			err := e.eachStored(tx, k, func(rec store.Record, obj model.Object) error {
				changes = append(changes, model.Change{Kind: k, Op: model.Create, Key: rec.Key, After: obj})
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
	// One commit, through the backend's batch when it has one: a backend
	// that reconciles (linux) knows its first batch is the replay.
	if _, err = e.applyCommits(ctx, []*backend.Commit{{Changes: changes}}); err != nil {
		return err
	}
	e.settle(true) // the store has what was replayed
	return e.reconcile(ctx)
}

// reconcile hands the drivers that reconcile (the simulated switch's
// accounts) the stored objects of their kinds, and logs what they repaired.
func (e *Engine) reconcile(ctx context.Context) error {
	for _, k := range e.reg.Kinds() {
		d := e.drivers[k.Name]
		if k.Class != model.Config || d == nil || d.Reconcile == nil {
			continue
		}
		var stored []model.Object
		err := e.store.View(func(tx store.Txn) error {
			return e.eachStored(tx, k, func(_ store.Record, obj model.Object) error {
				stored = append(stored, obj)
				return nil
			})
		})
		if err != nil {
			return err
		}
		repaired, err := d.Reconcile(ctx, stored)
		if err != nil {
			return fmt.Errorf("reconcile %s: %w", k.Name, err)
		}
		for _, r := range repaired {
			e.log.Warn("the switch differed from the stored configuration; repaired", "kind", k.Name, "repair", r)
		}
	}
	return nil
}

func keyFields(k *model.Kind, o model.Object) model.Object {
	key := model.Object{}
	for _, f := range k.Keys() {
		key[f.Name] = o[f.Name]
	}
	return key
}

func equalValue(a, b any) bool { return model.EqualValue(a, b) }
