package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// This file is the core's API for the engine's parts, the packages that
// sit on top of the commit path: history (revisions, rollback,
// confirmation) and candidates. They run requests through the writer with
// a Prepare step and store writes of their own (Request.Prepare,
// AfterWrite), and resolve edits on a View of the running configuration;
// the core knows nothing of them.

// Feed is the change feed the writer publishes each commit into.
func (e *Engine) Feed() *feed.Broker { return e.events }

// Secrets is the box that seals what the engine stores; candidates seal
// their staged edits with it.
func (e *Engine) Secrets() *secrets.Box { return e.box }

// Closing is closed when the engine starts closing: background work of the
// parts (the candidates' sweep) stops then.
func (e *Engine) Closing() <-chan struct{} { return e.stopLoop }

// ErrClosed is the answer to a request made while the engine closes.
var ErrClosed error = errClosed

// Submit runs a request that makes no commit of its own through the writer
// (housekeeping: a candidate's staged edits, a confirmation), in order
// with the commits; it is not counted as a commit.
func (e *Engine) Submit(ctx context.Context, req Request) error {
	return e.submit(ctx, &job{ctx: ctx, req: req, prepare: req.prepare()})
}

// prepare adapts Request.Prepare to the writer's view.
func (r *Request) prepare() func(v *view, req *Request) error {
	fn := r.Prepare
	if fn == nil {
		return nil
	}
	return func(v *view, req *Request) error { return fn(&View{v: v}, req) }
}

// Decode rebuilds the full object of a stored record, secrets included.
func (e *Engine) Decode(k *model.Kind, rec store.Record) (model.Object, error) {
	return e.decode(k, rec)
}

// EachStored calls fn with every stored object of config kind k in tx, in
// creation order, decoded (secrets included); a record that does not
// decode, or fn's error, stops the walk and is returned.
func (e *Engine) EachStored(tx store.Txn, k *model.Kind, fn func(o model.Object) error) error {
	return e.eachStored(tx, k, func(_ store.Record, o model.Object) error { return fn(o) })
}

// Unseal opens the sealed fields of object id of kind k, as a stored
// record or a revision record keeps them.
func (e *Engine) Unseal(k *model.Kind, id uuid.UUID, sealed []byte) ([]byte, error) {
	return e.box.Unseal(sealed, sealAD(k, id))
}

// publicRevision appends one revision record as clients see it to dst
// (the change feed's large events, framed as they are read).
func (e *Engine) publicRevision(dst []byte, rev uint64) ([]byte, error) {
	var pub []byte
	err := e.store.View(func(tx store.Txn) error {
		var err error
		if pub, err = appendPublicRevision(dst, tx, rev); err == nil && pub == nil {
			err = fmt.Errorf("revision %d is no longer kept", rev)
		}
		return err
	})
	return pub, err
}

// View is the running configuration as one request sees it: a store
// snapshot plus the changes resolved so far. In the writer (Prepare) it
// includes the requests before in the batch; made with NewView it is a
// snapshot for resolving edits outside the writer (staging), which the
// writer later resolves again.
type View struct{ v *view }

// NewView starts a view of tx's snapshot for one request's edits.
func (e *Engine) NewView(tx store.Txn) *View {
	v := newView(e, tx)
	v.beginJob()
	return &View{v: v}
}

// Txn is the store transaction the view reads.
func (v *View) Txn() store.Txn { return v.v.tx }

// UseTxn makes a kept view read a newer snapshot (nil: none, while it is
// kept); its resolved changes stay.
func (v *View) UseTxn(tx store.Txn) { v.v.tx = tx }

// Revision is the running revision as the view sees it.
func (v *View) Revision() uint64 { return v.v.revision() }

// Get is the object of kind with key in the view, or nil.
func (v *View) Get(kind, key string) model.Object { return v.v.Get(kind, key) }

// Each calls fn for every object of kind in the view.
func (v *View) Each(kind string, fn func(key string, o model.Object) bool) error {
	return v.v.Each(kind, fn)
}

// Resolve adds one edit to the view with every check of a direct write but
// the check phase; it returns the object's ObjectId and, for an update
// that changes nothing, its ETag.
func (v *View) Resolve(ed Edit) (uuid.UUID, uint64, error) { return v.v.resolve(ed) }

// Find is the object a Target names in the view, or a 404.
func (v *View) Find(k *model.Kind, t Target) (model.Object, uuid.UUID, error) {
	cur, err := v.v.find(k, t)
	if err != nil {
		return nil, uuid.Nil, err
	}
	return cur.obj, cur.id, nil
}

// Check runs the check phase on the configuration the view's resolved
// changes produce.
func (v *View) Check() error { return v.v.check(v.v.changes) }

// Diffs lists the view's resolved changes, secrets redacted.
func (v *View) Diffs() []Diff { return v.v.e.diffs(v.v.changes) }

// Changed reports the resolved change of a stored object: its operation
// and the object after it.
func (v *View) Changed(kind, key string) (op model.Op, after model.Object, ok bool) {
	c := v.v.pending[kind+"\x00"+key]
	if c == nil {
		return 0, nil, false
	}
	return c.Op, c.After, true
}

// Created calls fn, in the order they were resolved, for the objects of k
// that the view's changes create: new ones, and stored ones deleted and
// created again (with a new ObjectId).
func (v *View) Created(k *model.Kind, fn func(id uuid.UUID, o model.Object) bool) {
	for _, c := range v.v.changes {
		if c.Kind == k && c.Op == model.Create && c.seq == 0 {
			if !fn(c.id, c.After) {
				return
			}
		}
	}
}

// ChangedInBatch lists the objects that requests before this one in the
// writer's batch changed (not in the store yet), sorted by kind and key.
func (v *View) ChangedInBatch() []store.Ref {
	out := make([]store.Ref, 0, len(v.v.touched))
	for id := range v.v.touched {
		kind, key, _ := strings.Cut(id, "\x00")
		out = append(out, store.Ref{Kind: kind, Key: key})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Kind+"\x00"+out[i].Key < out[j].Kind+"\x00"+out[j].Key
	})
	return out
}

// Confirmation is the commit awaiting confirmation as the view sees it, or
// nil.
func (v *View) Confirmation() *Confirmation { return v.v.confirm }

// KeyFields is the key fields of o.
func KeyFields(k *model.Kind, o model.Object) model.Object { return keyFields(k, o) }

// NewObjectID makes the ObjectId of a new object (time-ordered).
func NewObjectID() uuid.UUID { return newObjectID() }

// ParseObjectID reads an ObjectId.
func ParseObjectID(s string) (uuid.UUID, error) { return parseUUID(s) }

// AppendObject appends {"Object": public, "ObjectId": "id"}.
func AppendObject(dst, public []byte, id uuid.UUID) []byte { return appendObject(dst, public, id) }

// AppendUUID appends id in its canonical form.
func AppendUUID(dst []byte, id uuid.UUID) []byte { return appendUUID(dst, id) }

// Page collects the items of a get-all page: Add each, set Next (the
// marker to continue from) and More, then AppendTo.
type Page struct {
	Next uint64
	More bool
	w    pageWriter
}

// Add appends {"Object": object, "ObjectId": "id"}.
func (p *Page) Add(object, id []byte) { p.w.add(object, id) }

// Len is how many items were added.
func (p *Page) Len() int { return p.w.n }

// AppendTo appends the page in the REST list form.
func (p *Page) AppendTo(dst []byte, marker uint64) []byte {
	p.w.next, p.w.more = p.Next, p.More
	return p.w.appendTo(dst, marker)
}

// Logger is the engine's logger.
func (e *Engine) Logger() *slog.Logger { return e.log }

// Backend is the switch the engine applies to (package users sets
// passwords through its accounts).
func (e *Engine) Backend() backend.Backend { return e.backend }
