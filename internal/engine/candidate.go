package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
	"net/http"
)

// A candidate is a named list of staged edits on top of the running
// configuration, committed later as one commit. Its edits are stored, sealed
// (they may hold secrets), so candidates survive a restart; one unused for
// CandidateTTL is discarded.
//
// Every staged edit is validated at once against the candidate's view — the
// running configuration plus the edits staged before it — with the same
// checks and errors as a direct write. A commit replays the edits through the
// ordinary commit path, so the result is validated as a whole against the
// running configuration of that moment.

// CandidateTTL is how long an unused candidate is kept.
const CandidateTTL = 24 * time.Hour

// CandidateInfo describes a candidate.
type CandidateInfo struct {
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
	MaxComment           = 1024
	// CandidateSweep is how often expired candidates are removed while
	// swmgr runs.
	CandidateSweep = time.Minute
)

// candidates serialises staging per candidate (staging runs outside the
// writer, in the caller's goroutine) and keeps the resolved view of the
// candidate staged to last, so staging n edits one by one costs O(n) per
// edit at worst, not a replay of the whole candidate each time.
type candidates struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	id    string
	edits int
	rev   uint64
	view  *view
}

func (c *candidates) init() { c.locks = map[string]*sync.Mutex{} }

func (c *candidates) lock(id string) func() {
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

// cached returns the kept view of candidate id if it is still current.
func (c *candidates) cached(id string, edits int, rev uint64) *view {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == id && c.edits == edits && c.rev == rev {
		v := c.view
		c.view = nil // taken: a failed staging must not leave it half-changed
		return v
	}
	return nil
}

func (c *candidates) keep(id string, edits int, rev uint64, v *view) {
	c.mu.Lock()
	c.id, c.edits, c.rev, c.view = id, edits, rev, v
	c.mu.Unlock()
}

func (e *Engine) encodeEdit(cand string, ed Edit) []byte {
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
	return e.box.Seal(data, []byte("candidate\x00"+cand))
}

func (e *Engine) decodeEdit(cand string, sealed []byte) (Edit, error) {
	data, err := e.box.Unseal(sealed, []byte("candidate\x00"+cand))
	if err != nil {
		return Edit{}, fmt.Errorf("candidate %s: %w", cand, err)
	}
	var se storedEdit
	if err := json.Unmarshal(data, &se); err != nil {
		return Edit{}, err
	}
	k := e.reg.Lookup(model.Config, se.Kind)
	if k == nil {
		return Edit{}, fmt.Errorf("candidate %s: unknown kind %s", cand, se.Kind)
	}
	ed := Edit{Kind: k, Op: se.Op, IfMatch: se.IfMatch}
	parse := func(raw json.RawMessage) (model.Object, error) {
		body, err := model.DecodeBody(raw)
		if err != nil {
			return nil, err
		}
		return k.Parse(body)
	}
	if se.Key != nil {
		if ed.Target.Key, err = parse(se.Key); err != nil {
			return Edit{}, err
		}
	}
	if se.Fields != nil {
		if ed.Fields, err = parse(se.Fields); err != nil {
			return Edit{}, err
		}
	}
	if se.ID != "" {
		id, err := parseUUID(se.ID)
		if err != nil {
			return Edit{}, err
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
	return apierr.NotFound(apierr.CodeNotFound, "Candidate", "no candidate %q (it was committed, discarded, or expired after %s unused)", id, CandidateTTL)
}

// loadCandidate reads a candidate's metadata, treating an expired one as gone.
func loadCandidate(tx *store.Tx, id string) (*candidateMeta, error) {
	data := tx.Candidate(id)
	if data == nil {
		return nil, candidateNotFound(id)
	}
	var m candidateMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("candidate %s: %w", id, err)
	}
	if time.Since(time.Unix(0, m.LastUsed)) > CandidateTTL {
		return nil, candidateNotFound(id)
	}
	return &m, nil
}

func (m *candidateMeta) info(id string, edits int) CandidateInfo {
	return CandidateInfo{CandidateId: id, BaseRevision: m.BaseRevision, Comment: m.Comment, User: m.User,
		Created: time.Unix(0, m.Created).UTC().Format(time.RFC3339Nano), LastUsed: time.Unix(0, m.LastUsed).UTC().Format(time.RFC3339Nano), Edits: edits}
}

func putCandidateMeta(tx *store.Tx, id string, m *candidateMeta) {
	data, _ := json.Marshal(m)
	tx.PutCandidate(id, data)
}

// NewCandidate starts a candidate on the running configuration.
func (e *Engine) NewCandidate(ctx context.Context, meta Meta, comment string) (CandidateInfo, error) {
	if len(comment) > MaxComment {
		return CandidateInfo{}, apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Comment", "Comment: %d characters is too long; at most %d", len(comment), MaxComment)
	}
	id := newCandidateID()
	var info CandidateInfo
	var m *candidateMeta
	err := e.submit(ctx, &job{ctx: ctx, req: Request{Meta: meta, duringConfirm: true, after: func(tx *store.Tx) { putCandidateMeta(tx, id, m) }},
		prepare: func(v *view, req *Request) error {
			total, mine := 0, 0
			now := time.Now()
			v.tx.Candidates(func(_ string, data []byte) error {
				var cm candidateMeta
				if json.Unmarshal(data, &cm) == nil && now.Sub(time.Unix(0, cm.LastUsed)) <= CandidateTTL {
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
			m = &candidateMeta{BaseRevision: v.revision(), Comment: comment, User: meta.User, Created: stamp, LastUsed: stamp}
			info = m.info(id, 0)
			return nil
		}})
	return info, err
}

// candidateView replays a candidate's edits on the running configuration.
func (e *Engine) candidateView(tx *store.Tx, id string) (*view, []Edit, error) {
	var edits []Edit
	err := tx.CandidateEdits(id, func(sealed []byte) error {
		ed, err := e.decodeEdit(id, sealed)
		edits = append(edits, ed)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	v := newView(e, tx)
	v.beginJob()
	for _, ed := range edits {
		if _, _, err := v.resolve(ed); err != nil {
			return nil, edits, apierr.Conflict(apierr.CodeConflict, ed.Kind.Name, "the candidate no longer applies to the running configuration: %s %s: %s", ed.Op, ed.Kind.Name, apierr.From(err).Message)
		}
	}
	return v, edits, nil
}

// Stage validates one edit against a candidate's view and adds it.
func (e *Engine) Stage(ctx context.Context, id string, ed Edit) (*Outcome, error) {
	return e.StageMany(ctx, id, []Edit{ed})
}

// StageMany validates edits, in order, against a candidate's view — the
// running configuration, the edits staged before, and the check phase on
// the result — and adds them all, or none. It runs in the caller's
// goroutine on a read snapshot; only the append of the edits goes through
// the writer, so a large candidate does not hold up other writes.
func (e *Engine) StageMany(ctx context.Context, id string, edits []Edit) (*Outcome, error) {
	for _, ed := range edits {
		for name, val := range ed.Fields {
			if f := ed.Kind.Field(name); f != nil && f.Secret == model.Transient && val != "" {
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, ed.Kind.Name, name, "%s is never stored, so it cannot be staged in a candidate (which is stored); make this change directly", name)
			}
		}
	}
	unlock := e.cands.lock(id)
	defer unlock()
	out := &Outcome{IDs: make([]uuid.UUID, len(edits)), ETags: make([]uint64, len(edits))}
	var n int
	var rev uint64
	var v *view
	err := e.store.View(func(tx *store.Tx) error {
		if _, err := loadCandidate(tx, id); err != nil {
			return err
		}
		n, rev = tx.CandidateEditCount(id), tx.Revision()
		if v = e.cands.cached(id, n, rev); v == nil {
			var err error
			if v, _, err = e.candidateView(tx, id); err != nil {
				return err
			}
		}
		v.tx = tx
		if stageHook != nil {
			stageHook()
		}
		for i := range edits {
			ed := &edits[i]
			if ed.Patch != nil {
				cur, err := v.find(ed.Kind, ed.Target)
				if err != nil {
					return err
				}
				if ed.Fields, err = ed.Patch(cur.obj.Clone()); err != nil {
					return err
				}
				ed.Patch = nil
			}
			if ed.Op == model.Create && ed.ID == nil {
				fresh := newObjectID()
				ed.ID = &fresh
			}
			objID, etag, err := v.resolve(*ed)
			if err != nil {
				return err
			}
			out.IDs[i], out.ETags[i] = objID, etag
		}
		return v.check(v.changes)
	})
	if err != nil {
		return nil, err
	}
	sealed := make([][]byte, len(edits))
	for i, ed := range edits {
		sealed[i] = e.encodeEdit(id, ed)
	}
	err = e.submit(ctx, &job{ctx: ctx, req: Request{duringConfirm: true, after: func(tx *store.Tx) {
		m, _ := loadCandidate(tx, id)
		m.LastUsed = time.Now().UnixNano()
		putCandidateMeta(tx, id, m)
		for _, b := range sealed {
			tx.AppendCandidateEdit(id, b)
		}
	}}, prepare: func(w *view, req *Request) error {
		if _, err := loadCandidate(w.tx, id); err != nil {
			return err
		}
		if w.tx.CandidateEditCount(id) != n {
			return apierr.Conflict(apierr.CodeConflict, "Candidate", "candidate %s changed while this edit was checked; stage it again", id)
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	v.tx = nil
	e.cands.keep(id, n+len(edits), rev, v)
	return out, nil
}

// stageHook, when set by a test, runs while a staging is being checked.
var stageHook func()

// CandidateRead runs fn on a candidate's view, in a read-only transaction.
func (e *Engine) CandidateRead(id string, fn func(r *CandidateReader) error) error {
	return e.store.View(func(tx *store.Tx) error {
		if _, err := loadCandidate(tx, id); err != nil {
			return err
		}
		v, _, err := e.candidateView(tx, id)
		if err != nil {
			return err
		}
		return fn(&CandidateReader{e: e, v: v})
	})
}

// CandidateReader reads a candidate's view.
type CandidateReader struct {
	e *Engine
	v *view
}

// Get appends {"Object","ObjectId"} of one object of the candidate's view.
func (r *CandidateReader) Get(k *model.Kind, t Target, dst []byte) ([]byte, error) {
	cur, err := r.v.find(k, t)
	if err != nil {
		return dst, err
	}
	return appendObject(dst, k.AppendJSON(nil, cur.obj, false), cur.id), nil
}

// candidateMarkerBase numbers the objects a candidate creates after those
// of the running configuration.
const candidateMarkerBase = 1 << 62

// List appends a page of the candidate's objects of kind k: running objects
// in creation order (as the candidate changes them), then those the
// candidate creates. Markers at or above candidateMarkerBase count the
// candidate's own creates.
func (r *CandidateReader) List(k *model.Kind, marker uint64, count int, dst []byte) ([]byte, error) {
	p := pageWriter{next: marker}
	var id [36]byte
	if marker < candidateMarkerBase {
		for p.n < count {
			var err error
			var more bool
			p.next, more, err = r.v.tx.List(k.Name, p.next, count-p.n, func(rec store.Record) error {
				c := r.v.pending[k.Name+"\x00"+rec.Key]
				switch {
				case c == nil:
					p.add(rec.Public, appendUUID(id[:0], rec.ID))
				case c.Op != model.Delete:
					p.add(k.AppendJSON(nil, c.After, false), appendUUID(id[:0], rec.ID))
				}
				return nil
			})
			if err != nil {
				return dst, err
			}
			if !more {
				p.next = candidateMarkerBase
				break
			}
		}
	}
	if p.next < candidateMarkerBase {
		p.more = true
		return p.appendTo(dst, marker), nil
	}
	i := uint64(candidateMarkerBase)
	for _, c := range r.v.changes {
		if c.Kind != k || c.Op != model.Create || c.seq != 0 {
			continue
		}
		if i >= p.next {
			if p.n == count {
				p.more = true
				break
			}
			p.add(k.AppendJSON(nil, c.After, false), appendUUID(id[:0], c.id))
			p.next = i + 1
		}
		i++
	}
	return p.appendTo(dst, marker), nil
}

// Diff lists what committing the candidate now would change.
func (r *CandidateReader) Diff() []Diff { return r.e.diffs(r.v.changes) }

// CandidateInfo describes a candidate.
func (e *Engine) CandidateInfo(id string) (CandidateInfo, error) {
	var info CandidateInfo
	err := e.store.View(func(tx *store.Tx) error {
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

// Discard drops a candidate.
func (e *Engine) Discard(ctx context.Context, id string) error {
	return e.submit(ctx, &job{ctx: ctx, req: Request{duringConfirm: true, after: func(tx *store.Tx) { tx.DeleteCandidate(id) }},
		prepare: func(v *view, req *Request) error { _, err := loadCandidate(v.tx, id); return err }})
}

// CommitCandidate commits a candidate's edits as one commit; on success (not
// a dry run) the candidate is gone. req.Edits is ignored.
func (e *Engine) CommitCandidate(ctx context.Context, id string, req Request) (*Outcome, error) {
	out, err := e.commitWith(ctx, req, func(v *view, r *Request) error {
		tx := v.tx
		m, err := loadCandidate(tx, id)
		if err != nil {
			return err
		}
		r.BaseRevision = m.BaseRevision
		r.Edits = nil
		err = tx.CandidateEdits(id, func(sealed []byte) error {
			ed, err := e.decodeEdit(id, sealed)
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
			r.after = func(tx *store.Tx) { tx.DeleteCandidate(id) }
		}
		return nil
	})
	return out, err
}

// expireCandidates drops candidates unused for CandidateTTL.
func (e *Engine) expireCandidates(ctx context.Context) error {
	var old []string
	return e.submit(ctx, &job{ctx: ctx, req: Request{duringConfirm: true, after: func(tx *store.Tx) {
		for _, id := range old {
			tx.DeleteCandidate(id)
		}
	}}, prepare: func(v *view, req *Request) error {
		old = old[:0]
		now := time.Now()
		return v.tx.Candidates(func(id string, meta []byte) error {
			var m candidateMeta
			if json.Unmarshal(meta, &m) != nil || now.Sub(time.Unix(0, m.LastUsed)) > CandidateTTL {
				old = append(old, id)
			}
			return nil
		})
	}})
}

// expireCandidatesEvery expires candidates while swmgr runs.
func (e *Engine) expireCandidatesEvery(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := e.expireCandidates(context.Background()); err != nil && err != errClosed {
				e.log.Warn("expiring candidates failed", "err", err)
			}
		case <-e.stopLoop:
			return
		}
	}
}
