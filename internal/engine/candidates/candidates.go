// Package candidates is the engine's staging area: a candidate is a named
// list of edits on top of the running configuration, committed later as
// one commit (/public/v1/candidates).
//
// It sits on top of the core's commit path (package engine). Staging runs
// in the caller's goroutine, on a read snapshot: each edit is resolved on
// an engine.View of the running configuration plus the edits staged before
// it, and the check phase runs on the result, so a staged edit is refused
// with the same error as a direct write and a cross-object rule holds
// whatever the order of the edits; only the append of the sealed edits
// goes through the writer (engine.Request.AfterWrite). A commit replays
// the edits through the ordinary commit path (engine.Request.Prepare), so
// the result is validated again, as a whole, against the running
// configuration of that moment.
package candidates

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// A candidate is a named list of staged edits on top of the running
// configuration, committed later as one commit. Its edits are stored, sealed
// (they may hold secrets), so candidates survive a restart; one unused for
// TTL is discarded.
//
// Every staged edit is validated at once against the candidate's view — the
// running configuration plus the edits staged before it — with the same
// checks and errors as a direct write. A commit replays the edits through the
// ordinary commit path, so the result is validated as a whole against the
// running configuration of that moment.

// TTL is how long an unused candidate is kept.
const TTL = 24 * time.Hour

// Info describes a candidate.
type Info struct {
	CandidateId  string
	BaseRevision uint64
	Comment      string
	User         string
	Created      string
	LastUsed     string
	Edits        int
}

type candidateMeta struct {
	BaseRevision uint64
	Comment      string
	User         string
	Created      int64
	LastUsed     int64
}

// storedEdit is an Edit as kept in a candidate.
type storedEdit struct {
	Kind    string
	Op      model.Op
	ID      string          `json:",omitempty"` // target or preset ObjectId
	Key     json.RawMessage `json:",omitempty"`
	Fields  json.RawMessage `json:",omitempty"`
	IfMatch string          `json:",omitempty"`
}

// Limits on candidates (each is stored, and staging costs CPU).
const (
	MaxCandidatesPerUser = 16
	MaxCandidates        = 256
	// Sweep is how often expired candidates are removed while swmgr runs.
	Sweep = time.Minute
)

// Staging keeps the candidates of an engine. Make one per engine and Start
// it after the engine.
type Staging struct {
	e     *engine.Engine
	reg   *model.Registry
	store store.Config
	cache cache
}

// New makes the candidates of e.
func New(e *engine.Engine) *Staging {
	return &Staging{e: e, reg: e.Registry(), store: e.Store(), cache: cache{locks: map[string]*sync.Mutex{}}}
}

// Start drops the candidates that expired while swmgr was down, and
// sweeps them every Sweep until the engine closes.
func (s *Staging) Start(ctx context.Context) error {
	if err := s.expire(ctx); err != nil {
		return fmt.Errorf("expire candidates: %w", err)
	}
	go s.expireEvery(Sweep)
	return nil
}

// cache serialises staging per candidate (staging runs outside the
// writer, in the caller's goroutine) and keeps the resolved views of the
// candidates staged to last, so staging n edits one by one costs O(n) per
// edit at worst, not a replay of the whole candidate each time, and two
// clients staging into two candidates in turn do not replay each other's
// out. It keeps at most cachedViews views, the most recently staged to
// first; past the first, only as long as the views kept hold at most
// cachedEdits staged edits in all (a view costs memory per edit).
type cache struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	views []cachedView // most recently kept first
}

// cachedView is the view of candidate id after its first edits staged
// edits, resolved on running revision rev.
type cachedView struct {
	id    string
	edits int
	rev   uint64
	view  *engine.View
}

// Bounds of the views the cache keeps.
const (
	cachedViews = 4
	cachedEdits = 200000
)

func (c *cache) lock(id string) func() {
	c.mu.Lock()
	l := c.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		c.locks[id] = l
	}
	c.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		c.mu.Lock()
		if len(c.locks) > 2*MaxCandidates {
			c.locks = map[string]*sync.Mutex{} // held locks stay valid for their holders
		}
		c.mu.Unlock()
	}
}

// cached returns the kept view of candidate id if it is still current. The
// view is taken out of the cache: a failed staging must not leave it
// half-changed.
func (c *cache) cached(id string, edits int, rev uint64) *engine.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cv := range c.views {
		if cv.id != id {
			continue
		}
		c.views = slices.Delete(c.views, i, i+1)
		if cv.edits == edits && cv.rev == rev {
			return cv.view
		}
		return nil
	}
	return nil
}

// keep puts v, the view of candidate id after its first edits staged edits
// on running revision rev, first in the cache, and drops the views that can
// no longer be used (resolved on an older revision) or are past the bounds.
// drop forgets the view of candidate id.
func (c *cache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.views = slices.DeleteFunc(c.views, func(cv cachedView) bool { return cv.id == id })
}

func (c *cache) keep(id string, edits int, rev uint64, v *engine.View) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := []cachedView{{id: id, edits: edits, rev: rev, view: v}}
	total := edits
	for _, cv := range c.views {
		if cv.id == id || cv.rev < rev || len(kept) == cachedViews || total+cv.edits > cachedEdits {
			continue
		}
		kept = append(kept, cv)
		total += cv.edits
	}
	clear(c.views) // no reference left to a dropped view
	c.views = kept
}

func (s *Staging) encodeEdit(cand string, ed engine.Edit) []byte {
	se := storedEdit{Kind: ed.Kind.Name, Op: ed.Op, IfMatch: ed.IfMatch}
	if ed.Target.ID != nil {
		se.ID = ed.Target.ID.String()
	} else if ed.ID != nil {
		se.ID = ed.ID.String()
	}
	if ed.Target.Key != nil {
		se.Key = ed.Kind.AppendGivenJSON(nil, ed.Target.Key)
	}
	if ed.Fields != nil {
		se.Fields = ed.Kind.AppendGivenJSON(nil, ed.Fields)
	}
	data, _ := json.Marshal(se)
	return s.e.Secrets().Seal(data, []byte("candidate\x00"+cand))
}

func (s *Staging) decodeEdit(cand string, sealed []byte) (engine.Edit, error) {
	data, err := s.e.Secrets().Unseal(sealed, []byte("candidate\x00"+cand))
	if err != nil {
		return engine.Edit{}, fmt.Errorf("candidate %s: %w", cand, err)
	}
	var se storedEdit
	if err := json.Unmarshal(data, &se); err != nil {
		return engine.Edit{}, err
	}
	k := s.reg.Lookup(model.Config, se.Kind)
	if k == nil {
		return engine.Edit{}, fmt.Errorf("candidate %s: unknown kind %s", cand, se.Kind)
	}
	ed := engine.Edit{Kind: k, Op: se.Op, IfMatch: se.IfMatch}
	// Leniently, like every stored record: the model may have lost or
	// renamed a field since the edit was staged (see migrate).
	parse := func(raw json.RawMessage) (model.Object, error) { return k.DecodeStored(raw) }
	if se.Key != nil {
		if ed.Target.Key, err = parse(se.Key); err != nil {
			return engine.Edit{}, err
		}
	}
	if se.Fields != nil {
		if ed.Fields, err = parse(se.Fields); err != nil {
			return engine.Edit{}, err
		}
	}
	if se.ID != "" {
		id, err := engine.ParseObjectID(se.ID)
		if err != nil {
			return engine.Edit{}, err
		}
		if se.Op == model.Create {
			ed.ID = &id
		} else {
			ed.Target.ID = &id
		}
	}
	return ed, nil
}

func newCandidateID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

func candidateNotFound(id string) error {
	return apierr.NotFound(apierr.CodeNotFound, "Candidate", "no candidate %q (it was committed, discarded, or expired after %s unused)", id, TTL)
}

// loadCandidate reads a candidate's metadata, treating an expired one as gone.
func loadCandidate(tx store.Txn, id string) (*candidateMeta, error) {
	data := tx.Candidate(id)
	if data == nil {
		return nil, candidateNotFound(id)
	}
	var m candidateMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("candidate %s: %w", id, err)
	}
	if time.Since(time.Unix(0, m.LastUsed)) > TTL {
		return nil, candidateNotFound(id)
	}
	return &m, nil
}

func (m *candidateMeta) info(id string, edits int) Info {
	return Info{CandidateId: id, BaseRevision: m.BaseRevision, Comment: m.Comment, User: m.User,
		Created: time.Unix(0, m.Created).UTC().Format(time.RFC3339Nano), LastUsed: time.Unix(0, m.LastUsed).UTC().Format(time.RFC3339Nano), Edits: edits}
}

func putCandidateMeta(tx store.Txn, id string, m *candidateMeta) {
	data, _ := json.Marshal(m)
	tx.PutCandidate(id, data)
}

// Open starts a candidate on the running configuration.
func (s *Staging) Open(ctx context.Context, meta engine.Meta, comment string) (Info, error) {
	if err := model.CheckComment("Candidate", "Comment", comment, model.MaxComment); err != nil {
		return Info{}, err
	}
	id := newCandidateID()
	var info Info
	var m *candidateMeta
	err := s.e.Submit(ctx, engine.Request{Meta: meta, DuringConfirm: true, AfterWrite: func(tx store.Txn) { putCandidateMeta(tx, id, m) },
		Prepare: func(v *engine.View, req *engine.Request) error {
			total, mine := 0, 0
			now := time.Now()
			v.Txn().Candidates(func(_ string, data []byte) error {
				var cm candidateMeta
				if json.Unmarshal(data, &cm) == nil && now.Sub(time.Unix(0, cm.LastUsed)) <= TTL {
					total++
					if cm.User == meta.User {
						mine++
					}
				}
				return nil
			})
			if mine >= MaxCandidatesPerUser {
				return apierr.New(http.StatusTooManyRequests, apierr.CodeConflict, "Candidate", "", "user %q has %d candidates, the most one user may have; commit or discard one (DELETE /public/v1/candidates/{id})", meta.User, mine)
			}
			if total >= MaxCandidates {
				return apierr.New(http.StatusTooManyRequests, apierr.CodeConflict, "Candidate", "", "the switch holds %d candidates, the most it keeps; commit or discard one", total)
			}
			stamp := time.Now().UnixNano()
			m = &candidateMeta{BaseRevision: v.Revision(), Comment: comment, User: meta.User, Created: stamp, LastUsed: stamp}
			info = m.info(id, 0)
			return nil
		}})
	return info, err
}

// view replays a candidate's edits on the running configuration.
func (s *Staging) view(tx store.Txn, id string) (*engine.View, []engine.Edit, error) {
	var edits []engine.Edit
	err := tx.CandidateEdits(id, func(sealed []byte) error {
		ed, err := s.decodeEdit(id, sealed)
		edits = append(edits, ed)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	v := s.e.NewView(tx)
	for _, ed := range edits {
		if _, _, err := v.Resolve(ed); err != nil {
			return nil, edits, engine.NoLongerApplies(ed, err)
		}
	}
	return v, edits, nil
}

// Stage validates one edit against a candidate's view and adds it.
func (s *Staging) Stage(ctx context.Context, id string, ed engine.Edit) (*engine.Outcome, error) {
	return s.stage(ctx, id, []engine.Edit{ed}, false)
}

// StageMany validates edits, in order, against a candidate's view — the
// running configuration, the edits staged before, and the check phase on
// the result — and adds them all, or none. It runs in the caller's
// goroutine on a read snapshot; only the append of the edits goes through
// the writer, so a large candidate does not hold up other writes.
// An error about one edit says which (Edits[i]: ...).
func (s *Staging) StageMany(ctx context.Context, id string, edits []engine.Edit) (*engine.Outcome, error) {
	return s.stage(ctx, id, edits, true)
}

func (s *Staging) stage(ctx context.Context, id string, edits []engine.Edit, indexed bool) (*engine.Outcome, error) {
	for _, ed := range edits {
		for name, val := range ed.Fields {
			if f := ed.Kind.Field(name); f != nil && f.Secret == model.Transient && val != "" {
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, ed.Kind.Name, name, "%s is never stored, so it cannot be staged in a candidate (which is stored); make this change directly", name)
			}
		}
	}
	unlock := s.cache.lock(id)
	defer unlock()
	out := &engine.Outcome{IDs: make([]uuid.UUID, len(edits)), ETags: make([]uint64, len(edits))}
	var n int
	var rev uint64
	var v *engine.View
	err := s.store.View(func(tx store.Txn) error {
		if _, err := loadCandidate(tx, id); err != nil {
			return err
		}
		n, rev = tx.CandidateEditCount(id), tx.Revision()
		if v = s.cache.cached(id, n, rev); v == nil {
			var err error
			if v, _, err = s.view(tx, id); err != nil {
				return err
			}
		}
		v.UseTxn(tx)
		if stageHook != nil {
			stageHook()
		}
		for i := range edits {
			ed := &edits[i]
			if ed.Patch != nil {
				cur, _, err := v.Find(ed.Kind, ed.Target)
				if err != nil {
					return err
				}
				if ed.Fields, err = ed.Patch(cur.Clone()); err != nil {
					return err
				}
				ed.Patch = nil
			}
			if ed.Op == model.Create && ed.ID == nil {
				fresh := engine.NewObjectID()
				ed.ID = &fresh
			}
			objID, etag, err := v.Resolve(*ed)
			if err != nil {
				if indexed {
					return atEdit(i, err)
				}
				return err
			}
			out.IDs[i], out.ETags[i] = objID, etag
		}
		return v.Check()
	})
	if err != nil {
		return nil, err
	}
	sealed := make([][]byte, len(edits))
	for i, ed := range edits {
		sealed[i] = s.encodeEdit(id, ed)
	}
	err = s.e.Submit(ctx, engine.Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) {
		m, _ := loadCandidate(tx, id)
		m.LastUsed = time.Now().UnixNano()
		putCandidateMeta(tx, id, m)
		for _, b := range sealed {
			tx.AppendCandidateEdit(id, b)
		}
	}, Prepare: func(w *engine.View, req *engine.Request) error {
		if _, err := loadCandidate(w.Txn(), id); err != nil {
			return err
		}
		if w.Txn().CandidateEditCount(id) != n {
			return apierr.Conflict(apierr.CodeConflict, "Candidate", "candidate %s changed while this edit was checked; stage it again", id)
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	v.UseTxn(nil)
	s.cache.keep(id, n+len(edits), rev, v)
	return out, nil
}

// atEdit makes the error of one edit of a list say which edit it is.
func atEdit(i int, err error) error {
	e := *apierr.From(err)
	e.Message = fmt.Sprintf("Edits[%d]: %s", i, e.Message)
	return &e
}

// stageHook, when set by a test, runs while a staging is being checked.
var stageHook func()

// Read runs fn on a candidate's view, in a read-only transaction.
func (s *Staging) Read(id string, fn func(r *Reader) error) error {
	return s.store.View(func(tx store.Txn) error {
		if _, err := loadCandidate(tx, id); err != nil {
			return err
		}
		v, _, err := s.view(tx, id)
		if err != nil {
			return err
		}
		return fn(&Reader{v: v})
	})
}

// Reader reads a candidate's view.
type Reader struct {
	v *engine.View
}

// Get appends {"Object","ObjectId"} of one object of the candidate's view.
func (r *Reader) Get(k *model.Kind, t engine.Target, dst []byte) ([]byte, error) {
	obj, id, err := r.v.Find(k, t)
	if err != nil {
		return dst, err
	}
	return engine.AppendObject(dst, k.AppendJSON(nil, obj, false), id), nil
}

// markerBase numbers the objects a candidate creates after those of the
// running configuration.
const markerBase = 1 << 62

// List appends a page of the candidate's objects of kind k: running objects
// in creation order (as the candidate changes them), then those the
// candidate creates. Markers at or above markerBase count the candidate's
// own creates.
func (r *Reader) List(k *model.Kind, marker uint64, count int, dst []byte) ([]byte, error) {
	p := engine.Page{Next: marker}
	var id [36]byte
	if marker < markerBase {
		for p.Len() < count {
			var err error
			var more bool
			p.Next, more, err = r.v.Txn().List(k.Name, p.Next, count-p.Len(), func(rec store.Record) error {
				op, after, changed := r.v.Changed(k.Name, rec.Key)
				switch {
				case !changed:
					p.Add(rec.Public, engine.AppendUUID(id[:0], rec.ID))
				case op == model.Update:
					p.Add(k.AppendJSON(nil, after, false), engine.AppendUUID(id[:0], rec.ID))
				}
				// Otherwise deleted, or deleted and created again with a
				// new ObjectId: then listed with the candidate's creates.
				return nil
			})
			if err != nil {
				return dst, err
			}
			if !more {
				p.Next = markerBase
				break
			}
		}
	}
	if p.Next < markerBase {
		p.More = true
		return p.AppendTo(dst, marker), nil
	}
	i := uint64(markerBase)
	r.v.Created(k, func(oid uuid.UUID, o model.Object) bool {
		if i >= p.Next {
			if p.Len() == count {
				p.More = true
				return false
			}
			p.Add(k.AppendJSON(nil, o, false), engine.AppendUUID(id[:0], oid))
			p.Next = i + 1
		}
		i++
		return true
	})
	return p.AppendTo(dst, marker), nil
}

// Each calls fn for every object of kind k in the candidate's view (the
// running configuration with the staged edits applied), until fn returns
// false.
func (r *Reader) Each(k *model.Kind, fn func(key string, o model.Object) bool) error {
	return r.v.Each(k.Name, fn)
}

// Diff lists what committing the candidate now would change.
func (r *Reader) Diff() []engine.Diff { return r.v.Diffs() }

// Info describes a candidate.
func (s *Staging) Info(id string) (Info, error) {
	var info Info
	err := s.store.View(func(tx store.Txn) error {
		m, err := loadCandidate(tx, id)
		if err != nil {
			return err
		}
		n := tx.CandidateEditCount(id)
		info = m.info(id, n)
		return nil
	})
	return info, err
}

// List lists the candidates that keep reports true for, oldest first.
func (s *Staging) List(keep func(Info) bool) ([]Info, error) {
	var out []Info
	err := s.store.View(func(tx store.Txn) error {
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

// Discard drops a candidate.
func (s *Staging) Discard(ctx context.Context, id string) error {
	err := s.e.Submit(ctx, engine.Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) { tx.DeleteCandidate(id) },
		Prepare: func(v *engine.View, req *engine.Request) error { _, err := loadCandidate(v.Txn(), id); return err }})
	if err == nil {
		s.cache.drop(id)
	}
	return err
}

// Commit commits a candidate's edits as one commit; on success (not a dry
// run) the candidate is gone. req.Edits is ignored.
func (s *Staging) Commit(ctx context.Context, id string, req engine.Request) (*engine.Outcome, error) {
	req.Prepare = func(v *engine.View, r *engine.Request) error {
		tx := v.Txn()
		m, err := loadCandidate(tx, id)
		if err != nil {
			return err
		}
		r.BaseRevision = m.BaseRevision
		r.Edits = nil
		err = tx.CandidateEdits(id, func(sealed []byte) error {
			ed, err := s.decodeEdit(id, sealed)
			r.Edits = append(r.Edits, ed)
			return err
		})
		if err != nil {
			return err
		}
		if r.Meta.Comment == "" {
			r.Meta.Comment = m.Comment
		}
		if !r.DryRun {
			r.AfterWrite = func(tx store.Txn) { tx.DeleteCandidate(id) }
		}
		return nil
	}
	return s.e.Commit(ctx, req)
}

// expire drops candidates unused for TTL.
func (s *Staging) expire(ctx context.Context) error {
	var old []string
	return s.e.Submit(ctx, engine.Request{DuringConfirm: true, AfterWrite: func(tx store.Txn) {
		for _, id := range old {
			tx.DeleteCandidate(id)
		}
	}, Prepare: func(v *engine.View, req *engine.Request) error {
		old = old[:0]
		now := time.Now()
		return v.Txn().Candidates(func(id string, meta []byte) error {
			var m candidateMeta
			if json.Unmarshal(meta, &m) != nil || now.Sub(time.Unix(0, m.LastUsed)) > TTL {
				old = append(old, id)
			}
			return nil
		})
	}})
}

// expireEvery expires candidates while the engine runs.
func (s *Staging) expireEvery(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := s.expire(context.Background()); err != nil && err != engine.ErrClosed {
				s.e.Logger().Warn("expiring candidates failed", "err", err)
			}
		case <-s.e.Closing():
			return
		}
	}
}
