// Package api serves swmgr's REST interface: the FlexSwitch paths under
// /public/v1/ for config, state and action objects.
//
// There is no handler per kind. ParseRoute maps a path to a kind of the model
// registry, the request body is parsed and validated by the model, and the
// engine applies it; the same few functions serve every kind. The wire format
// (status codes, bodies, paging, CORS, errors) is the contract in docs/api.md.
package api

import (
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/configlog"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// MaxCount is the largest (and the default) page size.
const MaxCount = 1024

// CORS entries, sent as headers on every response and, as FlexSwitch did, as
// body fields of create, update and delete responses.
const (
	corsHeaders = "Origin, X-Requested-With, Content-Type, Accept"
	corsMethods = "POST, GET, OPTIONS, PATCH, DELETE"
	corsMaxAge  = "86400"
)

// Server serves the REST interface.
type Server struct {
	eng   *engine.Engine
	hist  *history.History
	cands *candidates.Staging
	reg   *model.Registry
	log   *slog.Logger

	closing   chan struct{} // closed by CloseStreams
	closeOnce sync.Once
	taken     takenStreams // change-feed streams taken over from net/http

	// FeedWriteTimeout bounds each write to a change-feed subscriber; one
	// whose connection takes no data for that long is dropped. Set before
	// serving; New sets FeedWriteTimeoutDefault.
	FeedWriteTimeout time.Duration
	headers          headerValues // shared values of the hottest responses' headers
	// table runs the actions and reads the state-only kinds (nil: a
	// server of the engine's kinds alone, which answers 501 for them).
	table *bind.Table
	calls *obs.Calls
	// sessions ends a change-feed stream when its user's access ends (nil:
	// streams end only with their clients or the server).
	sessions *auth.Sessions
}

// FeedWriteTimeoutDefault: a subscriber that has not taken a write for this
// long has stopped reading (a heartbeat goes every 15 s at most).
const FeedWriteTimeoutDefault = 30 * time.Second

// Options are what a REST server serves.
type Options struct {
	Engine     *engine.Engine
	History    *history.History
	Candidates *candidates.Staging
	// Table runs the actions and reads the state-only kinds of its
	// providers; nil serves the engine's kinds alone (tests), answering
	// 501 for actions and the service's states.
	Table *bind.Table
	// Calls counts the calls served, by operation (SystemStatus reports
	// them); nil: counted for nobody.
	Calls *obs.Calls
	// Sessions ends a change-feed stream when its user's access ends (a
	// User deleted, a central server refusing it); nil: streams end only
	// with their clients or the server.
	Sessions *auth.Sessions
	Log      *slog.Logger
}

// New makes a REST server.
func New(o Options) *Server {
	if o.Calls == nil {
		o.Calls = &obs.Calls{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{eng: o.Engine, hist: o.History, cands: o.Candidates, reg: o.Engine.Registry(), log: o.Log, table: o.Table, calls: o.Calls, sessions: o.Sessions,
		closing: make(chan struct{}), FeedWriteTimeout: FeedWriteTimeoutDefault}
}

// CloseStreams ends every change-feed stream, so that an HTTP server
// shutting down does not wait for clients that would never leave, and
// waits for the streams that net/http's Shutdown does not see (taken over
// from it) to end: cleanly for a subscriber that reads, within closeGrace
// for one that stopped reading (its pending write is cut short).
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.taken.wait(min(s.feedWriteTimeout(), closeGrace))
}

// DropStreamConnections closes the connections of the change-feed streams
// that net/http no longer sees (taken over from it), as a restart would;
// httptest's CloseClientConnections closes the others.
func (s *Server) DropStreamConnections() { s.taken.drop() }

var (
	hdrAnyOrigin  = []string{"*"}
	hdrExpose     = []string{"ETag, Location"}
	hdrAllowHdrs  = []string{corsHeaders + ", Authorization, If-Match"}
	hdrAllowMeths = []string{corsMethods}
	hdrMaxAge     = []string{corsMaxAge}
	hdrJSON       = []string{"application/json; charset=UTF-8"}
)

// setCORS adds the CORS entries the spec lists to a preflight or write
// response. Reads get none: "Access-Control-Allow-Origin: *" on a read
// would let any web page open in a browser on the switch read the
// configuration through the loopback listener, which trusts the local
// user without credentials (docs/api.md, Access). A cross-site write is
// refused before it is served, so the entries on writes expose nothing.
func setCORS(h http.Header) {
	h["Access-Control-Allow-Origin"] = hdrAnyOrigin
	h["Access-Control-Expose-Headers"] = hdrExpose
	h["Access-Control-Allow-Headers"] = hdrAllowHdrs
	h["Access-Control-Allow-Methods"] = hdrAllowMeths
	h["Access-Control-Max-Age"] = hdrMaxAge
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// CORS is for preflights and writes only (setCORS). The values are
	// shared and never modified.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		setCORS(h)
	}

	// Every handler reads r.URL.Query(), which silently drops what it cannot
	// decode; refusing such a query here first means none of them can act on
	// a query that says something else than the client sent.
	if r.URL.RawQuery != "" { // nothing to refuse in none
		if _, err := model.ParseQueryString(r.URL.RawQuery, repeatableParam); err != nil {
			if isWrite(r.Method) && strings.HasPrefix(r.URL.Path, Prefix) {
				s.logEarlyFailure(r, err)
			}
			s.fail(w, r, err)
			return
		}
	}
	if s.serveTxn(w, r) {
		return
	}
	route, rerr := s.route(r)
	if rerr != nil {
		if isWrite(r.Method) && strings.HasPrefix(r.URL.Path, Prefix) {
			s.logEarlyFailure(r, rerr)
		}
		s.fail(w, r, rerr)
		return
	}
	obs.SetClass(w, route.metricsClass())
	if r.Method == http.MethodOptions {
		h.Set("Allow", strings.Join(route.Allowed(), ", "))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !route.allows(r.Method) {
		h.Set("Allow", strings.Join(route.Allowed(), ", "))
		err := apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, route.Kind.Name, "",
			"%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, strings.Join(route.Allowed(), ", "))
		if isWrite(r.Method) {
			s.logEarlyFailure(r, err)
		}
		s.fail(w, r, err)
		return
	}
	countCall(s.calls, r.Method, route.Class)
	if readsOneByID(r, route) { // the hottest request, without the rest's bookkeeping
		if err := s.getByID(w, r, route); err != nil {
			s.fail(w, r, err)
		}
		return
	}
	req := &request{s: s, w: w, r: r, route: route, kind: route.Kind}
	if r.Method != http.MethodGet && r.Method != http.MethodHead { // reads record nothing
		req.meta = s.meta(r)
	}
	if isWrite(r.Method) && !r.URL.Query().Has("dry_run") && (route.Kind == nil || !route.Kind.NotLogged) {
		req.info = &engine.LogInfo{API: strings.ToLower(route.Name), Operation: r.Method}
		if route.Kind != nil {
			req.info.API = route.Kind.API()
		}
		req.info.Named = route.ID != "" || r.URL.RawQuery != ""
	}
	if err := req.serve(); err != nil {
		s.fail(w, r, err)
	}
}

// unreadInput refuses a query parameter that a create, an action or a
// request by ObjectId would not read, and a body field that a read or a
// delete by ObjectId would not: they take their fields from the body and
// their object from the path, so such a parameter (POST
// /action/SaveConfig?DstFileURI=..., DELETE /config/NtpServer/<id>?IpAddr=...)
// or body (DELETE /config/NtpServer/<id> {"IpAddr": ...}) would be ignored
// and the client told Success for something else than it asked. dry_run is
// the one parameter they all take.
func unreadInput(route Route, method string, query url.Values, body model.Body) error {
	if route.ID != "" && method != http.MethodPatch {
		for _, name := range slices.Sorted(maps.Keys(body)) {
			return apierr.BadRequest(apierr.CodeUnknownField, route.Kind.Name, name, "field %q is not read here: a %s by ObjectId names its object in the path and takes no body", name, method)
		}
	}
	if route.ID == "" && method != http.MethodPost {
		return nil // lists and requests by key read theirs (pageParams, ParseQuery)
	}
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if name == "dry_run" {
			continue
		}
		what := "a create takes its fields in the body"
		switch {
		case route.ID != "":
			what = "a request by ObjectId names its object in the path and takes its fields in the body"
		case route.Class == model.Action:
			what = "an action takes its fields in the body"
		}
		return apierr.BadRequest(apierr.CodeUnknownField, route.Kind.Name, name, "query parameter %q is not read here: %s; the query string takes only dry_run", name, what)
	}
	return nil
}

// repeatableParam: NextMarker may repeat (the FlexSwitch SDK sends it back
// and it is ignored); any other query parameter given twice is a 400.
func repeatableParam(name string) bool { return name == "NextMarker" }

func isWrite(method string) bool {
	return method == http.MethodPost || method == http.MethodPatch || method == http.MethodDelete
}

// logEarlyFailure records, in the config log, a write that failed before its
// kind was known. Its API is the path's segment as sent, percent-encoded:
// decoded, a client could put control characters (a terminal's escape
// sequences) into the log that admins read.
func (s *Server) logEarlyFailure(r *http.Request, err error) {
	name := strings.TrimPrefix(r.URL.EscapedPath(), Prefix)
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	if len(name) > 64 {
		name = name[:64]
	}
	if k := s.reg.Named(name); k != nil && k.NotLogged {
		return
	}
	s.eng.Log(r.Context(), s.meta(r), &engine.LogInfo{API: strings.ToLower(name), Operation: r.Method}, err)
}

// LogRefused records in the config log a create, update, delete or action
// that the authentication layer refused (403); r carries the user.
func (s *Server) LogRefused(r *http.Request, err error) {
	if isWrite(r.Method) && (strings.HasPrefix(r.URL.Path, Prefix+"config/") || strings.HasPrefix(r.URL.Path, Prefix+"action/")) {
		s.logEarlyFailure(r, err)
	}
}

// request is one API call in progress.
type request struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	route Route
	kind  *model.Kind
	meta  engine.Meta
	info  *engine.LogInfo // nil for reads
	body  model.Body
	cand  string // the candidate the request works on, if any
}

func (q *request) serve() error {
	if err := q.readBody(); err != nil {
		if q.info != nil {
			q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
		}
		return err
	}
	if err := unreadInput(q.route, q.r.Method, q.r.URL.Query(), q.body); err != nil {
		if q.info != nil {
			q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
		}
		return err
	}
	switch q.r.Method {
	case http.MethodGet, http.MethodHead:
		if q.kind.Class == model.State && q.kind.Source != model.SourceConfigLog {
			return q.stateOnly()
		}
		return q.get()
	case http.MethodPost:
		if q.route.Class == model.Action {
			return q.action()
		}
		return q.write(backend.Create)
	case http.MethodPatch:
		return q.write(backend.Update)
	case http.MethodDelete:
		return q.write(backend.Delete)
	}
	return nil
}

func (q *request) readBody() error {
	if q.r.ContentLength == 0 || q.r.Body == nil || q.r.Body == http.NoBody {
		if q.info != nil {
			q.info.Data = "{}"
		}
		return nil
	}
	data, err := readBodyBytes(http.MaxBytesReader(q.w, q.r.Body, MaxBody), q.r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge, q.kind.Name, "", "the body is larger than %d bytes", MaxBody)
		}
		return apierr.BadRequest(apierr.CodeMalformedJSON, q.kind.Name, "", "cannot read the body: %v", err)
	}
	q.body, err = model.DecodeBody(data)
	if err != nil {
		if ae, ok := err.(*apierr.Error); ok {
			ae.Object = q.kind.Name
		}
		if q.info != nil {
			q.info.Data = "" // never log text that may hold a secret we cannot find
		}
		return err
	}
	if q.info != nil {
		q.info.Data = configlog.RedactBody(q.kind, q.body)
	}
	return nil
}

// readBodyBytes is io.ReadAll into a buffer of the body's declared length (its
// 512 bytes, then its growth, are most of a small body's cost), or of 512
// bytes when the length is not given.
func readBodyBytes(r io.Reader, declared int64) ([]byte, error) {
	size := 512
	if declared > 0 && declared < MaxBody {
		size = int(declared) + 1 // room for the read that finds the end
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}

// target reads which object a by-key or by-id request names.
func (q *request) target() (engine.Target, error) {
	if q.route.ID != "" {
		id, err := q.objectID()
		if err != nil {
			return engine.Target{}, err
		}
		return engine.Target{ID: &id}, nil
	}
	key, err := q.kind.ParseQuery(q.r.URL.Query())
	if err != nil {
		return engine.Target{}, err
	}
	fields, err := q.kind.Parse(q.body)
	if err != nil {
		return engine.Target{}, err
	}
	if q.kind.Singleton && (q.r.Method == http.MethodGet || q.r.Method == http.MethodHead) {
		// A read of a singleton finds its one object whatever key value
		// (or none) it gives, as FlexSwitch did: its CLI reads
		// {"Vrf": ""}-style bodies with empty keys.
		return engine.Target{Key: model.Object{}}, nil
	}
	// Other fields of the body do not pick the object, but a value the
	// object could never have (IntfRef "fpPort1" for a neighbor by
	// address) must not silently name another one: a key that could not be
	// stored is refused as such, not answered "not found".
	check := keyFieldsOf(q.kind, fields)
	if m := q.r.Method; m == http.MethodGet || m == http.MethodHead || m == http.MethodDelete {
		check = fields
	}
	if err := q.kind.ValidateGiven(check); err != nil {
		return engine.Target{}, err
	}
	for _, f := range q.kind.Keys() {
		if v, ok := fields[f.Name]; ok {
			if qv, dup := key[f.Name]; dup && qv != v {
				return engine.Target{}, apierr.BadRequest(apierr.CodeInvalidValue, q.kind.Name, f.Name, "%s is %v in the query string but %v in the body", f.Name, qv, v)
			}
			key[f.Name] = v
		}
	}
	for n := range key {
		if f := q.kind.Field(n); f == nil || !f.Key {
			return engine.Target{}, apierr.BadRequest(apierr.CodeUnknownField, q.kind.Name, n, "%s is not a key of %s; the query string names an object by its keys (%s)", n, q.kind.Name, keyNames(q.kind))
		}
	}
	return engine.Target{Key: key}, nil
}

// objectID reads the ObjectId segment of the path.
func (q *request) objectID() (uuid.UUID, error) { return routeObjectID(q.route) }

// routeObjectID reads the ObjectId segment of route's path: a UUID in its
// 36-character form, else the object is not found.
func routeObjectID(route Route) (uuid.UUID, error) {
	id, err := uuid.Parse(route.ID)
	if err != nil || len(route.ID) != 36 {
		return uuid.Nil, notAnObjectID(route)
	}
	return id, nil
}

func notAnObjectID(route Route) error {
	return apierr.NotFound(apierr.CodeNotFound, route.Kind.Name, "no %s has ObjectId %q (an ObjectId is a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e)", route.Kind.Name, route.ID)
}

// keyFieldsOf are the key fields among fields.
func keyFieldsOf(k *model.Kind, fields model.Object) model.Object {
	out := model.Object{}
	for _, f := range k.Keys() {
		if v, ok := fields[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out
}

func keyNames(k *model.Kind) string {
	var names []string
	for _, f := range k.Keys() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

func (q *request) write(op backend.Op) error {
	if raw, ok := q.body["patch"]; ok && op == backend.Update && q.kind.Field("patch") == nil {
		return q.patchList(raw)
	}
	ed := engine.Edit{Kind: q.kind, Op: op, IfMatch: ifMatchHeader(q.r)}
	var err error
	if op != backend.Create {
		if ed.Target, err = q.target(); err != nil {
			q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
			return err
		}
	}
	if op != backend.Delete {
		if ed.Fields, err = q.kind.Parse(q.body); err != nil {
			q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
			return err
		}
	}
	if q.cand != "" {
		out, err := q.s.cands.Stage(q.r.Context(), q.cand, ed)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if op == backend.Create {
			status = http.StatusCreated
		}
		sendWritten(q.w, status, successBody(out.IDs[0]))
		return nil
	}
	dry, err := dryRun(q.r)
	if err != nil {
		return err
	}
	if dry {
		out, err := q.s.eng.Commit(q.r.Context(), engine.Request{Edits: []engine.Edit{ed}, Meta: q.meta, DryRun: true})
		if err != nil {
			return err
		}
		q.send(http.StatusOK, dryRunBody(out))
		return nil
	}
	out, err := q.s.eng.Apply(q.r.Context(), []engine.Edit{ed}, q.meta, q.info)
	if err != nil {
		return err // Apply logged it
	}
	obs.SetRevision(q.w, out.Revision)
	id := out.IDs[0]
	h := q.w.Header()
	status := http.StatusOK
	if op == backend.Create {
		status = http.StatusCreated
		h["Location"] = []string{Prefix + "config/" + q.kind.Name + "/" + id.String()}
	}
	if op != backend.Delete {
		h["Etag"] = []string{engine.ETag(out.ETags[0])} // the canonical form of "ETag", as Header.Set would write it
	}
	sendWritten(q.w, status, successBody(id))
	return nil
}

// sendWritten answers a successful write with a body that ends its line
// (successBody). Its headers, the five CORS entries, Location, ETag and
// Content-Type, are the eight a Go map holds before it grows into a table
// (which net/http would also copy at WriteHeader): a ninth, Content-Length,
// is left to net/http, which sets it for an answer written whole before
// the handler returns (this one is far below its 2 KiB buffer).
func sendWritten(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = hdrJSON
	w.WriteHeader(status)
	w.Write(body)
}

func dryRunBody(out *engine.Outcome) []byte {
	return mustJSON(map[string]any{"Result": "Success", "DryRun": true, "Changes": nonNil(out.Diffs)})
}

// successBody is the body of a write's answer, newline included.
func successBody(id uuid.UUID) []byte {
	const head = `{"Access-Control-Allow-Headers":"` + corsHeaders + `","Access-Control-Allow-Methods":"` + corsMethods + `","Access-Control-Allow-Origin":"*","Access-Control-Max_age":"` + corsMaxAge + `","ObjectId":"`
	const tail = "\",\"Result\":\"Success\"}\n"
	b := make([]byte, 0, len(head)+36+len(tail)) // one allocation: the answer is 286 bytes
	b = append(b, head...)
	b = append(b, id.String()...)
	return append(b, tail...)
}

func (q *request) get() error {
	if q.route.Plural {
		return q.list()
	}
	if q.route.ID != "" && q.cand == "" && q.kind.Source != model.SourceConfigLog {
		return q.s.getByID(q.w, q.r, q.route)
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	state := q.route.Class == model.State
	var (
		out  []byte
		etag uint64
		err  error
	)
	switch {
	case q.cand != "":
		t, terr := q.target()
		if terr != nil {
			return terr
		}
		err = q.s.cands.Read(q.cand, func(cr *candidates.Reader) error {
			var gerr error
			out, gerr = cr.Get(q.kind, t, (*bp)[:0])
			return gerr
		})
	case q.kind.Source == model.SourceConfigLog: // by SeqNum
		out, err = q.logEntry((*bp)[:0])
	case q.route.ID != "":
		t, terr := q.target()
		if terr != nil {
			return terr
		}
		out, etag, err = q.s.eng.GetByID(q.r.Context(), q.kind, *t.ID, state, (*bp)[:0])
	default:
		t, terr := q.target()
		if terr != nil {
			return terr
		}
		out, etag, err = q.s.eng.GetByKey(q.r.Context(), q.kind, t.Key, state, (*bp)[:0])
	}
	*bp = out[:0]
	if err != nil {
		return err
	}
	if etag != 0 {
		q.w.Header().Set("ETag", engine.ETag(etag))
	}
	q.send(http.StatusOK, out)
	return nil
}

// readsOneByID reports whether r is a GET (or HEAD) by ObjectId without a
// body of an object kept in the store, which request.serve would hand to
// getByID after reading no body.
func readsOneByID(r *http.Request, route Route) bool {
	k := route.Kind
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && route.ID != "" && !route.Plural &&
		(r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody) && r.URL.RawQuery == "" &&
		k.Class != model.State && k.Source != model.SourceConfigLog
}

// getByID answers a GET by ObjectId, the hottest request: no allocation
// of its own when the object is in the engine's cache (the header values
// are the server's shared ones, the body is built in a pooled buffer and
// written at once).
func (s *Server) getByID(w http.ResponseWriter, r *http.Request, route Route) error {
	id, err := routeObjectID(route)
	if err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	out, etag, err := s.eng.GetByID(r.Context(), route.Kind, id, route.Class == model.State, (*bp)[:0])
	if err != nil {
		*bp = out[:0]
		return err
	}
	out = append(out, '\n') // JSON bodies end their line
	*bp = out[:0]
	h := w.Header()
	if etag != 0 {
		h["Etag"] = s.headers.etag(etag) // the canonical form of "ETag", as Header.Set would write it
	}
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = s.headers.contentLength(len(out))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
	return nil
}

func (q *request) logEntry(dst []byte) ([]byte, error) {
	if q.route.ID != "" {
		return dst, apierr.NotFound(apierr.CodeNotFound, q.kind.Name, "config log entries have no ObjectId; read one by SeqNum (?SeqNum=N) or list them at %sstate/ConfigLogs", Prefix)
	}
	fields, err := q.kind.ParseQuery(q.r.URL.Query())
	if err != nil {
		return dst, err
	}
	for n := range fields {
		if n != "SeqNum" { // as target() refuses a non-key: it would not filter
			return dst, apierr.BadRequest(apierr.CodeUnknownField, q.kind.Name, n, "%s is not a key of %s; the query string names an entry by its SeqNum", n, q.kind.Name)
		}
	}
	body, err := q.kind.Parse(q.body)
	if err != nil {
		return dst, err
	}
	for n, v := range body {
		fields[n] = v
	}
	seq, ok := fields["SeqNum"].(int64)
	if !ok || seq <= 0 {
		return dst, apierr.BadRequest(apierr.CodeMissingField, q.kind.Name, "SeqNum", "give the SeqNum of the entry (a positive integer), or list them at %sstate/ConfigLogs", Prefix)
	}
	return q.s.eng.GetLog(uint64(seq), dst)
}

func (q *request) list() error {
	marker, count, err := pageParams(q.kind.Name, q.r)
	if err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	var out []byte
	switch {
	case q.cand != "":
		err = q.s.cands.Read(q.cand, func(cr *candidates.Reader) error {
			var lerr error
			out, lerr = cr.List(q.kind, marker, count, (*bp)[:0])
			return lerr
		})
	case q.kind.Source == model.SourceConfigLog:
		out, err = q.s.eng.ListLog(marker, count, (*bp)[:0])
	default:
		out, err = q.s.eng.List(q.r.Context(), q.kind, marker, count, q.route.Class == model.State, (*bp)[:0])
	}
	*bp = out[:0]
	if err != nil {
		return err
	}
	q.send(http.StatusOK, out)
	return nil
}

// pageParams reads CurrentMarker and Count; NextMarker is ignored (the
// FlexSwitch SDK sends it), anything else is an error.
func pageParams(kind string, r *http.Request) (uint64, int, error) {
	bad := func(field, format string, args ...any) error {
		return apierr.BadRequest(apierr.CodeBadPaging, kind, field, format, args...)
	}
	var marker uint64
	count := MaxCount
	for name, vals := range r.URL.Query() {
		v := vals[0]
		if len(vals) > 1 && name != "NextMarker" {
			return 0, 0, bad(name, "%s is given %d times; give it once", name, len(vals))
		}
		switch name {
		case "CurrentMarker":
			m, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, bad(name, "CurrentMarker must be a non-negative integer (0 for the first page, then NextMarker), not %q", v)
			}
			marker = m
		case "Count":
			c, err := strconv.Atoi(v)
			if err != nil || c < 1 || c > MaxCount {
				return 0, 0, bad(name, "Count must be an integer in 1..%d, not %q", MaxCount, v)
			}
			count = c
		case "NextMarker":
		default:
			return 0, 0, bad(name, "unknown query parameter %q; a list takes CurrentMarker and Count", name)
		}
	}
	return marker, count, nil
}

func (q *request) send(status int, body []byte) { sendJSON(q.w, status, body) }

// fail writes an error response.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := apierr.From(err)
	if e.Status >= 500 && e.Status != http.StatusNotImplemented && e.Status != http.StatusServiceUnavailable {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", e.Message)
	}
	sendJSON(w, e.Status, e.Body())
}

// ifMatchHeader is If-Match with a bare revision (If-Match: 11, as people
// and some tools write it) read as the entity tag "11" it can only mean.
func ifMatchHeader(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h != "" && strings.Trim(h, "0123456789") == "" {
		return `"` + h + `"`
	}
	return h
}
