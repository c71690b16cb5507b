package engine

import (
	"context"
	"net/http"
	"runtime/debug"
	"slices"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/configlog"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// maxBatch bounds how many requests one turn of the writer loop takes.
const maxBatch = 512

// collectAfter is the number of changes from which a commit is followed by
// a garbage collection (see runBatch).
const collectAfter = 10000

// bulkFrom is the number of changes from which a commit is a bulk commit:
// resolved and written alone, its objects through Store.Bulk, so that the
// store does not hold them all in one transaction (store/bulk.go).
const bulkFrom = collectAfter

// job is one request in the writer loop.
type job struct {
	ctx     context.Context
	req     Request
	prepare func(v *view, req *Request) error

	// A job that only records a failure in the config log.
	failed  error
	failLog *LogInfo

	out     *Outcome
	err     error
	changes []*change
	event   *revisionEvent
	record  []byte // the revision record, between writeObjects and writeRest
	commit  *backend.Commit
	done    chan struct{}
	epoch   uint64 // batches the writer had run when the request came
}

var errClosed = apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "", "", "swmgr is shutting down")

// submit hands j to the writer and waits for its fate: a job that entered
// the loop always finishes, so the caller knows what happened.
func (e *Engine) submit(ctx context.Context, j *job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.done = make(chan struct{})
	j.epoch = e.epoch.Load()
	select {
	case e.jobs <- j:
	case <-e.stopLoop:
		return errClosed
	}
	<-j.done
	return j.err
}

// loop is the single writer: it takes every request waiting, up to
// maxBatch, and runs them as one batch (runBatch). Requests a failed
// backend commit invalidated run first in the next turn.
func (e *Engine) loop() {
	defer close(e.loopDone)
	var queue []*job
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	last := 0 // requests in the last batch
	for {
		if len(queue) == 0 {
			select {
			case j := <-e.jobs:
				queue = append(queue, j)
			case <-e.stopLoop:
				for {
					select {
					case j := <-e.jobs:
						j.err = errClosed
						close(j.done)
					default:
						return
					}
				}
			}
		}
	drain:
		for len(queue) < maxBatch {
			select {
			case j := <-e.jobs:
				queue = append(queue, j)
			default:
				break drain
			}
		}
		if last >= lingerFrom && len(queue) < maxBatch {
			// Those of the last batch may come back, and with them the
			// requests that were queued before it was answered.
			expect := last
			for _, j := range queue {
				if j.epoch < e.epoch.Load() {
					expect++
				}
			}
			queue = e.gather(queue, min(expect, maxBatch), linger)
		}
		last = len(queue)
		queue = e.runBatch(queue)
		e.epoch.Add(1)
	}
}

// Group commit's wait for company: after a batch of at least lingerFrom
// requests, the writer waits for up to lingerMax for the requests it
// expects, as long as each comes within lingerGap of the one before.
const (
	lingerFrom = 4
	lingerGap  = time.Millisecond
	lingerMax  = 4 * time.Millisecond
)

// gather waits for the requests the writer expects before it takes the
// next batch: the clients of the batch it just answered, and those that
// were queued before that answer (queue holds some of them). Answering a
// batch releases its clients together, and they come back over the next
// millisecond or two (their HTTP answer, their next request: CPU work
// shared with everything else on the machine); taking only those already
// back, the writer would sync a batch of the first few while the rest queue
// for the next one, and the clients would settle into two groups that
// alternate, each fsync carrying half of them. While the writer waits, the
// CPUs serve those requests; fewer, larger commits then cost less CPU per
// request (bbolt's commit, its page writes and fdatasyncs are per batch).
// A client that does not come back (one that pauses between requests)
// costs at most lingerGap; a lone client or two (batches smaller than
// lingerFrom) never wait. bench/README.md has the figures.
func (e *Engine) gather(queue []*job, expect int, t *time.Timer) []*job {
	e.lingered.Add(1)
	deadline := time.Now().Add(lingerMax)
	for len(queue) < expect {
		wait := min(lingerGap, time.Until(deadline))
		if wait <= 0 {
			break
		}
		t.Reset(wait)
		select {
		case j := <-e.jobs:
			queue = append(queue, j)
			t.Stop() // Go 1.23 timers: no stale tick after Stop or Reset
		case <-t.C:
			return queue
		case <-e.stopLoop:
			t.Stop()
			return queue
		}
	}
	return queue
}

// runBatch runs one batch through resolve, check, backend apply, store
// write and publish. It returns the requests to run again.
func (e *Engine) runBatch(batch []*job) (again []*job) {
	var ready, later []*job
	err := e.store.View(func(tx store.Txn) error {
		v := newView(e, tx)
		v.confirm = pendingConfirm(tx)
		for i, j := range batch {
			if j.failed != nil {
				ready = append(ready, j)
				continue
			}
			mark := v.mark()
			j.out, j.changes, j.err = e.resolveJob(v, j)
			if j.err == nil && !j.req.DryRun && len(j.changes) >= bulkFrom && (len(ready) > 0 || i < len(batch)-1) {
				// A bulk commit is written alone (Store.Bulk): the
				// requests after it wait for the next turn, and one that
				// comes after others goes first in the next turn.
				if len(ready) > 0 {
					v.undo(mark)
					j.out, j.changes = nil, nil
					later = batch[i:]
				} else {
					ready = append(ready, j)
					later = batch[i+1:]
				}
				break
			}
			if j.err != nil || j.req.DryRun {
				v.undo(mark)
			}
			switch {
			case j.err != nil && j.req.Log != nil:
				j.failed, j.failLog = j.err, j.req.Log
				ready = append(ready, j)
			case j.err != nil || j.req.DryRun:
				close(j.done)
			default:
				ready = append(ready, j)
			}
		}
		return nil
	})
	if err != nil {
		for _, j := range ready {
			if j.err == nil {
				j.err = err
			}
			close(j.done)
		}
		return later
	}
	bulk := len(ready) == 1 && ready[0].failed == nil && len(ready[0].changes) >= bulkFrom
	if bulk {
		defer lowerGC()()
		// The view that resolved a bulk commit (its index of pending
		// changes: ~60 MiB for a restore of 300,000 objects) is garbage
		// now, and the backend and the store write allocate more beside
		// the commit's objects: collect, and give the pages the resolve
		// used back to the system, so that the process's peak is not the
		// resolve's footprint plus the write's (bench/README.md).
		debug.FreeOSMemory()
	}
	ready, again = e.applyBackend(ready)
	again = append(again, later...)
	var werr error
	if bulk && len(ready) == 1 && ready[0].failed == nil && writes(ready[0].changes) >= bulkFrom {
		// Its objects through Store.Bulk; one that only deletes (a reset)
		// writes no new objects, and staging would copy every object to
		// delete it there (a reset of 100,000 took 1.5 times as long).
		j := ready[0]
		werr = e.store.Bulk(func(tx store.Txn) error { return e.writeObjects(tx, j) }, func(tx store.Txn) error { e.writeRest(tx, j); return nil })
	} else {
		werr = e.store.Update(func(tx store.Txn) error {
			for _, j := range ready {
				if err := e.writeObjects(tx, j); err != nil {
					return err
				}
				e.writeRest(tx, j)
			}
			return nil
		})
	}
	if werr != nil {
		e.revertBackend(ready)
		e.settle(false)
		for _, j := range ready {
			if j.err == nil {
				if full := apierr.From(werr); full.Code == apierr.CodeStorageFull {
					j.err = full // the operator can free space and retry: a 507, not a bug
				} else {
					j.err = apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "", "", "the change could not be written to disk: %v", werr)
				}
			}
			close(j.done)
		}
		return again
	}
	// Before any answer: a Sync it waits for, or one that another commit's
	// answer or a UserPassword action runs, writes only what the store has.
	e.settle(true)
	for _, j := range ready {
		syncs := e.syncsOf(j)
		committed := j.err == nil && j.out != nil && j.out.Revision != 0
		var event []byte // nil: too large for the ring, read from the store
		if committed {
			e.objects.commit(j.out.Revision, j.changes, j.event.publics)
			e.noteCommit(j.out.Revision, j.changes)
			if j.event.size <= feed.MaxRingEvent {
				event = j.event.encode(j.out.Diffs)
			}
		}
		// The caller reads only out and err: a restore's 100,000 changes
		// and objects can go while it answers and the feed reads its event.
		j.changes, j.commit, j.event, j.prepare, j.req.Edits, j.req.Prepare = nil, nil, nil, nil, nil, nil
		if committed {
			if bulk {
				// The commit's working set (~200 MiB for a restore of
				// 300,000 objects) is garbage now: collect and give its
				// pages back before the answer is written and the feed's
				// subscribers read the event (~60 MiB more), which would
				// otherwise come on top of the pages the runtime keeps
				// (bench/README.md).
				debug.FreeOSMemory()
			}
			e.events.Publish(j.out.Revision, event)
			if j.req.Confirm > 0 {
				e.armConfirm(j.out.Revision, j.req.Confirm)
			}
		}
		if len(syncs) > 0 {
			go e.answerSynced(j, syncs)
			continue
		}
		close(j.done)
	}
	return again
}

// noteCommit records a commit's revision as the last, and as the last of
// each kind it changed (LastCommit, LastCommitOf); before it is answered.
func (e *Engine) noteCommit(rev uint64, changes []*change) {
	var last *model.Kind // a commit's changes come kind by kind, mostly
	for _, c := range changes {
		if c.Kind != last {
			last = c.Kind
			e.kindCommits[e.order[last.Name]].Store(rev)
		}
	}
	e.lastCommit.Store(rev)
}

// settle tells the drivers that write behind whether the changes the
// writer applied since the last call are in the store (committed) or were
// undone (see backend.Driver.Settle). It is called after every batch,
// whatever the batch changed: one call per driver is cheaper than finding
// out which kinds the batch touched (a restore's 100,000 changes).
func (e *Engine) settle(committed bool) {
	for _, d := range e.settlers {
		d.Settle(committed)
	}
}

// syncsOf returns the Sync of each driver whose kind j's commit changed
// and that writes behind (see backend.Driver.Sync), once each.
func (e *Engine) syncsOf(j *job) []func(context.Context) error {
	if j.err != nil || j.commit == nil {
		return nil
	}
	var syncs []func(context.Context) error
	var seen []*backend.Driver
	for _, c := range j.changes {
		d := e.drivers[c.Kind.Name]
		if d == nil || d.Sync == nil || slices.Contains(seen, d) {
			continue
		}
		seen = append(seen, d)
		syncs = append(syncs, d.Sync)
	}
	return syncs
}

// answerSynced answers j, which is in the store, once the backend has made
// its changes durable too; it runs outside the writer, so that the other
// commits of the batch, and the next batches, do not wait for that I/O.
func (e *Engine) answerSynced(j *job, syncs []func(context.Context) error) {
	defer close(j.done)
	ctx := context.WithoutCancel(j.ctx)
	for _, sync := range syncs {
		if err := sync(ctx); err != nil {
			e.log.Error("a committed change could not be made durable on the switch", "revision", j.out.Revision, "err", err)
			j.err = apierr.New(http.StatusInternalServerError, apierr.CodeBackend, "", "", "the change is committed (revision %d) but the switch could not make it durable: %v", j.out.Revision, err)
			return
		}
	}
}

// resolveJob resolves and checks one request against the view: the store's
// snapshot plus the requests of the batch before it.
func (e *Engine) resolveJob(v *view, j *job) (*Outcome, []*change, error) {
	req := &j.req
	if j.prepare != nil {
		if err := j.prepare(v, req); err != nil {
			return nil, nil, err
		}
	}
	if !req.DuringConfirm && !req.DryRun && v.confirm != nil {
		p := v.confirm
		return nil, nil, apierr.Conflict(apierr.CodeConflict, "", "revision %d awaits confirmation until %s: confirm it with POST /public/v1/revisions/%d/confirm, or wait for it to be rolled back; no other change is accepted until then",
			p.Revision, time.Unix(0, p.Deadline).UTC().Format(time.RFC3339), p.Revision)
	}
	if req.IfRevision != 0 && v.revision() != req.IfRevision {
		return nil, nil, apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, "", "", "the running configuration is at revision %d, not %d", v.revision(), req.IfRevision)
	}
	v.beginJob()
	v.owned = req.ownsObjects
	var out *Outcome
	var changes []*change
	var err error
	if req.stream != nil {
		out, changes, err = v.resolveStream(req.stream)
		req.stream = nil
	} else {
		out, changes, err = v.resolveAll(req.Edits, req.checked, req.BaseRevision != 0)
	}
	v.owned = false
	if err != nil {
		return nil, nil, err
	}
	if j.prepare != nil && len(req.Edits) > 1 {
		// Edits computed in the writer (a restore's 100,000) are computed
		// again if the job runs again; the changes hold what is needed.
		req.Edits = nil
	}
	if req.BaseRevision != 0 && !req.Force {
		if err := v.checkConflicts(req.BaseRevision, changes); err != nil {
			return nil, nil, err
		}
	}
	if err := v.check(changes); err != nil {
		return nil, nil, err
	}
	if req.Allow != nil {
		for _, c := range changes {
			if err := req.Allow(c.Kind, c.Op, c.Key); err != nil {
				return nil, nil, err
			}
		}
	}
	out.Changes = len(changes)
	if req.DryRun {
		out.Diffs = e.diffs(changes) // a commit's come from the store write
		out.DryRun = true
		return out, changes, nil
	}
	if len(changes) > 0 {
		v.endJob(changes)
	}
	if req.ClearConfirm {
		v.confirm = nil
	}
	if req.Confirm > 0 && len(changes) > 0 {
		v.confirm = newConfirmation(v.revision(), req)
	}
	return out, changes, nil
}

// applyBackend hands the commits of ready to the backend, in order, as
// batches of at most MaxBackendBatch. When one fails, it answers that one
// with the error and returns the requests after it to be resolved again
// (they were checked against a configuration that included it).
func (e *Engine) applyBackend(ready []*job) (kept, again []*job) {
	var owners []*job
	for _, j := range ready {
		if j.err == nil && j.failed == nil && len(j.changes) > 0 {
			j.commit = &backend.Commit{Changes: backendChanges(j.changes)}
			owners = append(owners, j)
		}
	}
	if len(owners) == 0 {
		return ready, nil
	}
	ctx := context.WithoutCancel(owners[0].ctx)
	step := e.MaxBackendBatch
	if step <= 0 {
		step = len(owners)
	}
	failed := -1
	var ferr error
	for start := 0; start < len(owners) && failed < 0; start += step {
		group := owners[start:min(start+step, len(owners))]
		commits := make([]*backend.Commit, len(group))
		for i, j := range group {
			commits[i] = j.commit
		}
		n, err := e.applyCommits(ctx, commits)
		if err != nil {
			failed, ferr = start+n, err
		}
	}
	applied := len(owners)
	if failed >= 0 {
		applied = failed
	}
	for _, j := range owners[:applied] {
		for i, c := range j.changes {
			for n, val := range j.commit.Filled[i] {
				c.After[n] = val
			}
		}
		// The changes hold the same objects (revertBackend and syncsOf read
		// them there): a restore's 300,000 copies need not live through
		// the store write.
		j.commit.Changes, j.commit.Filled = nil, nil
	}
	if failed < 0 {
		return ready, nil
	}
	bad := owners[failed]
	bad.err = e.backendError(ferr)
	bad.commit = nil
	if bad.req.Log != nil {
		bad.failed, bad.failLog = bad.err, bad.req.Log
	}
	after := false
	for _, j := range ready {
		switch {
		case j == bad:
			after = true
			if bad.failed != nil {
				kept = append(kept, j)
			} else {
				close(j.done)
			}
		case after && j.failed == nil:
			j.out, j.changes, j.err, j.commit = nil, nil, nil, nil
			again = append(again, j)
		default:
			kept = append(kept, j)
		}
	}
	return kept, again
}

// applyCommits applies commits through the backend's Batcher, or one by
// one through the drivers.
func (e *Engine) applyCommits(ctx context.Context, commits []*backend.Commit) (int, error) {
	if e.observeApply == nil {
		return backend.ApplyBatch(ctx, e.backend, e.drivers, commits)
	}
	start := time.Now()
	n, err := backend.ApplyBatch(ctx, e.backend, e.drivers, commits)
	e.observeApply(time.Since(start), err)
	return n, err
}

// revertBackend undoes the backend changes of a batch whose store write
// failed, newest first.
func (e *Engine) revertBackend(ready []*job) {
	ctx := context.Background()
	for i := len(ready) - 1; i >= 0; i-- {
		j := ready[i]
		if j.commit == nil {
			continue
		}
		for k := len(j.changes) - 1; k >= 0; k-- {
			if err := backend.Revert(ctx, e.drivers, j.changes[k].Change); err != nil {
				e.log.Error("undo of backend changes failed; the switch may differ from the store", "err", err)
			}
		}
	}
}

// writes counts the changes that store an object (creates, updates).
func writes(changes []*change) int {
	n := 0
	for _, c := range changes {
		if c.Op != model.Delete {
			n++
		}
	}
	return n
}

// writeObjects writes the objects of one request of the batch in the
// store's transaction (for a bulk commit, Store.Bulk's objects), taking its
// revision and building its record.
func (e *Engine) writeObjects(tx store.Txn, j *job) error {
	req := &j.req
	if j.failed != nil || len(j.changes) == 0 {
		return nil
	}
	rev := tx.NextRevision()
	j.out.Revision = rev
	event, diffs, record, err := e.write(tx, rev, j.changes, req.Meta, req.OmitDiffs)
	if err != nil {
		return err
	}
	j.event, j.record = event, record
	j.out.Diffs = diffs // as committed: with what the switch filled in
	for i := range j.out.ETags {
		if j.out.ETags[i] == 0 {
			j.out.ETags[i] = rev
		}
	}
	return nil
}

// writeRest writes the rest of one request of the batch, after its objects
// (writeObjects): its revision record, the confirmation it sets or clears,
// its AfterWrite and its config log entry.
func (e *Engine) writeRest(tx store.Txn, j *job) {
	req := &j.req
	if j.failed != nil {
		// A request that failed (j.err is its answer), or a job that only
		// records a failure (j.err stays nil).
		result := "Error: " + apierr.From(j.failed).Message
		e.clog.Append(tx, req.Meta.User, req.Meta.Addr, j.failLog, result)
		return
	}
	if j.record != nil {
		tx.PutRevision(j.out.Revision, j.record)
		j.record = nil
	}
	if req.ClearConfirm {
		setPendingConfirm(tx, nil)
	}
	if req.AfterWrite != nil {
		req.AfterWrite(tx)
	}
	if req.Confirm > 0 && j.out != nil && j.out.Revision != 0 {
		setPendingConfirm(tx, newConfirmation(j.out.Revision, req))
	}
	if req.Log != nil {
		info := *req.Log
		if j.out != nil && info.Named {
			e.nameObject(&info, req, j)
		}
		e.clog.Append(tx, req.Meta.User, req.Meta.Addr, &info, "Success")
	}
}

func backendChanges(cs []*change) []model.Change {
	out := make([]model.Change, len(cs))
	for i, c := range cs {
		out[i] = c.Change
	}
	return out
}

// nameObject makes a log entry of a single-object write say which object it
// was: its ObjectId, and in Data its key fields, so that a PATCH or DELETE
// by ObjectId or query string is not an anonymous "{}".
func (e *Engine) nameObject(info *LogInfo, req *Request, j *job) {
	if len(req.Edits) != 1 || len(j.out.IDs) != 1 {
		return
	}
	id := j.out.IDs[0]
	ed := req.Edits[0]
	key := ed.Target.Key
	for _, c := range j.changes {
		if c.id == id {
			obj := c.After
			if obj == nil {
				obj = c.Before
			}
			key = keyFields(c.Kind, obj)
			break
		}
	}
	if key != nil {
		info.Data = configlog.NameObject(ed.Kind, info.Data, key, id.String())
	}
}
