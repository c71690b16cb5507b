package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Objects is the generic object API of one configuration: the running one
// (embedded in Client) or a candidate's (embedded in Candidate).
type Objects struct {
	c      *Client
	prefix string // "" or "/candidates/<id>"
}

// Item is one object as read: its ObjectId, its fields and its ETag (the
// revision that last changed it; "" where the server sends none).
type Item struct {
	ObjectId string
	Object   Object
	ETag     string
}

// Change is one object's change in a commit, a dry run or a candidate's
// diff. Before and After hold every field, each set secret as "******".
type Change struct {
	Kind     string
	Key      string // "IntfRef=fpPort1"
	ObjectId string
	Op       string // create, update, delete
	Before   Object `json:",omitempty"`
	After    Object `json:",omitempty"`
}

// WriteResult is what a create, update or delete did.
type WriteResult struct {
	ObjectId string
	ETag     string // the object's new ETag (not after a delete)
	Location string // the created object's path
	DryRun   bool
	Changes  []Change // with DryRun: what the write would change
}

// WriteOption modifies a write.
type WriteOption func(*writeOptions)

type writeOptions struct {
	ifMatch string
	dryRun  bool
}

// IfMatch makes the write fail with 412 (CodePrecondition) unless the
// object's ETag is etag; on a candidate commit, unless the running
// configuration is at that revision.
func IfMatch(etag string) WriteOption { return func(o *writeOptions) { o.ifMatch = etag } }

// DryRun validates the write and reports what it would change, changing
// nothing.
func DryRun() WriteOption { return func(o *writeOptions) { o.dryRun = true } }

func (o *writeOptions) apply(r *request) {
	if o.ifMatch != "" {
		r.header = http.Header{"If-Match": {o.ifMatch}}
	}
	if o.dryRun {
		r.query = url.Values{"dry_run": {"true"}}
	}
}

func collect(opts []WriteOption) *writeOptions {
	var o writeOptions
	for _, f := range opts {
		f(&o)
	}
	return &o
}

func kindPath(class, kind string) (string, error) {
	if kind == "" || strings.ContainsAny(kind, "/?#") {
		return "", fmt.Errorf("kind %q: give an object name like Vrf or Port", kind)
	}
	return "/" + class + "/" + kind, nil
}

func (o Objects) write(ctx context.Context, method, path string, body Object, opts []WriteOption) (*WriteResult, error) {
	r := request{method: method, path: o.prefix + path}
	if body != nil {
		r.body = body
	}
	wo := collect(opts)
	wo.apply(&r)
	var out struct {
		ObjectId string
		DryRun   bool
		Changes  []Change
	}
	resp, err := o.c.call(ctx, r, &out)
	if err != nil {
		return nil, err
	}
	return &WriteResult{ObjectId: out.ObjectId, ETag: resp.header.Get("ETag"), Location: resp.header.Get("Location"), DryRun: out.DryRun, Changes: out.Changes}, nil
}

// Create creates an object of kind with the fields given (the others take
// their defaults).
func (o Objects) Create(ctx context.Context, kind string, fields Object, opts ...WriteOption) (*WriteResult, error) {
	p, err := kindPath("config", kind)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = Object{}
	}
	return o.write(ctx, http.MethodPost, p, fields, opts)
}

// Update changes the fields given of the object with ObjectId id.
func (o Objects) Update(ctx context.Context, kind, id string, fields Object, opts ...WriteOption) (*WriteResult, error) {
	p, err := kindPath("config", kind)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = Object{}
	}
	return o.write(ctx, http.MethodPatch, p+"/"+url.PathEscape(id), fields, opts)
}

// UpdateByKey changes the fields given of the object whose key fields are
// in fields (a singleton such as SystemParam needs none).
func (o Objects) UpdateByKey(ctx context.Context, kind string, fields Object, opts ...WriteOption) (*WriteResult, error) {
	p, err := kindPath("config", kind)
	if err != nil {
		return nil, err
	}
	if fields == nil {
		fields = Object{}
	}
	return o.write(ctx, http.MethodPatch, p, fields, opts)
}

// Delete deletes the object with ObjectId id.
func (o Objects) Delete(ctx context.Context, kind, id string, opts ...WriteOption) (*WriteResult, error) {
	p, err := kindPath("config", kind)
	if err != nil {
		return nil, err
	}
	return o.write(ctx, http.MethodDelete, p+"/"+url.PathEscape(id), nil, opts)
}

// DeleteByKey deletes the object whose key fields are key.
func (o Objects) DeleteByKey(ctx context.Context, kind string, key Object, opts ...WriteOption) (*WriteResult, error) {
	p, err := kindPath("config", kind)
	if err != nil {
		return nil, err
	}
	if key == nil {
		key = Object{}
	}
	return o.write(ctx, http.MethodDelete, p, key, opts)
}

// Get reads the object of kind whose key fields are key (nil for a
// singleton).
func (o Objects) Get(ctx context.Context, kind string, key Object) (*Item, error) {
	return o.get(ctx, "config", kind, "", key)
}

// GetByID reads the object of kind with ObjectId id.
func (o Objects) GetByID(ctx context.Context, kind, id string) (*Item, error) {
	return o.get(ctx, "config", kind, id, nil)
}

func (o Objects) get(ctx context.Context, class, kind, id string, key Object) (*Item, error) {
	p, err := kindPath(class, kind)
	if err != nil {
		return nil, err
	}
	r := request{method: http.MethodGet, path: o.prefix + p}
	if id != "" {
		r.path += "/" + url.PathEscape(id)
	}
	if len(key) > 0 {
		r.query = keyQuery(key)
	}
	var it Item
	resp, err := o.c.call(ctx, r, &it)
	if err != nil {
		return nil, err
	}
	it.ETag = resp.header.Get("ETag")
	return &it, nil
}

func keyQuery(key Object) url.Values {
	q := url.Values{}
	names := make([]string, 0, len(key))
	for n := range key {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch v := key[n].(type) {
		case string:
			q.Set(n, v)
		default:
			q.Set(n, fmt.Sprint(v))
		}
	}
	return q
}

// Page is one page of a list.
type Page struct {
	CurrentMarker uint64
	NextMarker    uint64
	MoreExist     bool
	ObjCount      int
	Objects       []Item
}

// ListPage reads one page of the objects of kind: count objects (0 for the
// server's maximum) from marker (0 for the first page, then NextMarker).
func (o Objects) ListPage(ctx context.Context, kind string, marker uint64, count int) (*Page, error) {
	return o.listPage(ctx, "config", kind, marker, count)
}

func (o Objects) listPage(ctx context.Context, class, kind string, marker uint64, count int) (*Page, error) {
	p, err := kindPath(class, kind)
	if err != nil {
		return nil, err
	}
	q := url.Values{"CurrentMarker": {strconv.FormatUint(marker, 10)}}
	if count > 0 {
		q.Set("Count", strconv.Itoa(count))
	}
	var page Page
	if _, err := o.c.call(ctx, request{method: http.MethodGet, path: o.prefix + p + "s", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// ListOption modifies a list.
type ListOption func(*listOptions)

type listOptions struct{ pageSize int }

// PageSize reads n objects per request (1..1024; default 1024).
func PageSize(n int) ListOption { return func(o *listOptions) { o.pageSize = n } }

// List iterates over every object of kind, reading page after page as the
// loop goes; an error ends the iteration as its last element.
func (o Objects) List(ctx context.Context, kind string, opts ...ListOption) iter.Seq2[Item, error] {
	return o.list(ctx, "config", kind, opts)
}

func (o Objects) list(ctx context.Context, class, kind string, opts []ListOption) iter.Seq2[Item, error] {
	var lo listOptions
	for _, f := range opts {
		f(&lo)
	}
	return func(yield func(Item, error) bool) {
		var marker uint64
		for {
			page, err := o.listPage(ctx, class, kind, marker, lo.pageSize)
			if err != nil {
				yield(Item{}, err)
				return
			}
			for _, it := range page.Objects {
				if !yield(it, nil) {
					return
				}
			}
			if !page.MoreExist || page.NextMarker == marker {
				return
			}
			marker = page.NextMarker
		}
	}
}

// State reads the state form of the object of kind whose key fields are
// key ("Port" for PortState).
func (c *Client) State(ctx context.Context, kind string, key Object) (*Item, error) {
	return c.Objects.get(ctx, "state", kind, "", key)
}

// StateByID reads the state form of the object with ObjectId id.
func (c *Client) StateByID(ctx context.Context, kind, id string) (*Item, error) {
	return c.Objects.get(ctx, "state", kind, id, nil)
}

// ListState iterates over the state forms of every object of kind.
func (c *Client) ListState(ctx context.Context, kind string, opts ...ListOption) iter.Seq2[Item, error] {
	return c.Objects.list(ctx, "state", kind, opts)
}

// Action runs the action name with the body given and returns the
// server's reply (Result, and what the action reports).
func (c *Client) Action(ctx context.Context, name string, body Object, opts ...WriteOption) (Object, error) {
	p, err := kindPath("action", name)
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = Object{}
	}
	r := request{method: http.MethodPost, path: p, body: body}
	collect(opts).apply(&r)
	var out Object
	if _, err := c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Rollback makes the running configuration what it was at revision to, as
// a new revision.
func (c *Client) Rollback(ctx context.Context, to uint64, opts ...WriteOption) (*CommitResult, error) {
	r := request{method: http.MethodPost, path: "/action/Rollback", body: Object{"Revision": to}}
	collect(opts).apply(&r)
	var out CommitResult
	if _, err := c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
