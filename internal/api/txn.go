package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/feed"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// Transactions: revisions, candidates, confirmed commits and the change
// feed. Paths (fixed so that clients and tests agree):
//
//	GET    /public/v1/revisions                      paged, newest first
//	GET    /public/v1/revisions/{rev}
//	GET    /public/v1/revisions/pending              the commit awaiting confirmation
//	POST   /public/v1/revisions/{rev}/confirm
//	POST   /public/v1/revisions/{rev}/cancel         roll the pending commit back now
//	GET    /public/v1/revisions/{rev}/diff/{to}      the configuration after rev against after to
//	POST   /public/v1/candidates                     {"Comment"}
//	GET    /public/v1/candidates/{id}                what it is
//	DELETE /public/v1/candidates/{id}                discard
//	GET    /public/v1/candidates/{id}/diff
//	POST   /public/v1/candidates/{id}/commit         {"Comment", "Confirm", "Force"}
//	*      /public/v1/candidates/{id}/config/...     the eight config operations
//	POST   /public/v1/candidates/{id}/edits          {"Edits": [...]}: stage many (stage.go)
//	GET    /public/v1/events                         Server-Sent Events

const (
	revisionsPrefix  = Prefix + "revisions"
	candidatesPrefix = Prefix + "candidates"
	eventsPath       = Prefix + "events"
)

// serveTxn handles the transaction paths; it reports false for other paths.
func (s *Server) serveTxn(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	switch {
	case p == eventsPath || p == eventsPath+"/":
		if !s.methods(w, r, http.MethodGet) {
			return true
		}
		s.events(w, r)
	case p == revisionsPrefix || strings.HasPrefix(p, revisionsPrefix+"/"):
		s.revisions(w, r, strings.Trim(strings.TrimPrefix(p, revisionsPrefix), "/"))
	case p == candidatesPrefix || strings.HasPrefix(p, candidatesPrefix+"/"):
		s.candidates(w, r, strings.Trim(strings.TrimPrefix(p, candidatesPrefix), "/"))
	default:
		return false
	}
	return true
}

// methods answers OPTIONS and 405 for a path that allows only the given
// methods; it reports whether the request should go on.
func (s *Server) methods(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	if !slices.Contains(allowed, http.MethodOptions) {
		allowed = append(allowed[:len(allowed):len(allowed)], http.MethodOptions)
	}
	if slices.Contains(allowed, http.MethodGet) && !slices.Contains(allowed, http.MethodHead) {
		allowed = append(allowed[:len(allowed):len(allowed)], http.MethodHead)
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	for _, m := range allowed {
		if r.Method == m {
			return true
		}
	}
	s.fail(w, r, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "", "", "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
	return false
}

func (s *Server) meta(r *http.Request) engine.Meta {
	return engine.Meta{User: UserName(r.Context()), Addr: r.RemoteAddr, Source: requestSource(r)}
}

// Tools whose commits are recorded with a source of their own instead of
// rest, by their User-Agent: swmgr's CLI (`swmgr cli`) and the Ansible
// collection swmgr.switch. The label only says which tool made a commit;
// who made it is the authenticated user.
const (
	CLIUserAgent     = "swmgr-cli"
	AnsibleUserAgent = "swmgr-ansible"
)

// requestSource is the Source of the revisions a request makes: web for
// the web page's (a request of a web session: auth.ViaWeb).
func requestSource(r *http.Request) string {
	ua := r.Header.Get("User-Agent")
	switch {
	case auth.ViaWeb(r.Context()):
		return "web"
	case ua == CLIUserAgent || strings.HasPrefix(ua, CLIUserAgent+"/"):
		return "cli"
	case ua == AnsibleUserAgent || strings.HasPrefix(ua, AnsibleUserAgent+"/"):
		return "ansible"
	}
	return "rest"
}

// pendingConfirmation answers GET /public/v1/revisions/pending: the commit
// awaiting confirmation (its revision, who made it, its comment, and when
// it is rolled back), or {"Awaiting": false}.
func (s *Server) pendingConfirmation() ([]byte, error) {
	p := s.hist.PendingConfirm()
	if p == nil {
		return []byte(`{"Awaiting":false}`), nil
	}
	if p.User == "" && p.Comment == "" {
		// Stored by a swmgr that did not keep them with the wait (or a
		// commit without either): the revision record says.
		data, err := s.hist.GetRevision(p.Revision, nil)
		if err != nil {
			return nil, err
		}
		var head struct{ User, Comment string }
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, fmt.Errorf("revision %d: %w", p.Revision, err)
		}
		p.User, p.Comment = head.User, head.Comment
	}
	// Past the deadline, the rollback is being retried (docs/api.md): the
	// commit still awaits, with no time left.
	deadline := time.Unix(0, p.Deadline)
	return mustJSON(pendingCommit{Awaiting: true, Revision: p.Revision, User: p.User, Comment: p.Comment,
		ConfirmBy: deadline.UTC().Format(time.RFC3339), SecondsLeft: secondsLeft(deadline, time.Now())}), nil
}

// secondsLeft is the whole seconds from now to deadline, rounded up: 0
// says the deadline has passed (a commit with Confirm 1 read at once has a
// second left, not none).
func secondsLeft(deadline, now time.Time) int64 {
	return max(int64(math.Ceil(deadline.Sub(now).Seconds())), 0)
}

// pendingCommit is the answer of GET /public/v1/revisions/pending when a
// commit awaits confirmation.
type pendingCommit struct {
	Awaiting    bool
	Revision    uint64
	User        string
	Comment     string
	ConfirmBy   string // RFC 3339, UTC: when it is rolled back
	SecondsLeft int64
}

// queryTakes answers 400 for a query parameter other than names, which the
// request would not read: POST .../commit?Confirm=60 would commit without
// the confirmation the client asked for. It reports whether to go on.
func (s *Server) queryTakes(w http.ResponseWriter, r *http.Request, names ...string) bool {
	if r.Method == http.MethodOptions {
		return true
	}
	for _, name := range slices.Sorted(maps.Keys(r.URL.Query())) {
		if !slices.Contains(names, name) {
			takes := "it takes no query parameter"
			if len(names) > 0 {
				takes = "it takes only " + strings.Join(names, ", ")
			}
			s.fail(w, r, apierr.BadRequest(apierr.CodeUnknownField, "", name, "query parameter %q is not read by %s %s (options go in the body); %s", name, r.Method, r.URL.Path, takes))
			return false
		}
	}
	return true
}

func (s *Server) revisions(w http.ResponseWriter, r *http.Request, rest string) {
	segs := strings.Split(rest, "/")
	if rest != "" && !s.queryTakes(w, r) { // the list reads its own (pageParams)
		return
	}
	switch {
	case rest == "":
		if !s.methods(w, r, http.MethodGet) {
			return
		}
		marker, count, err := pageParams("Revision", r)
		if err == nil {
			var out []byte
			if out, err = s.hist.ListRevisions(marker, count, nil); err == nil {
				sendJSON(w, http.StatusOK, out)
				return
			}
		}
		s.fail(w, r, err)
	case rest == "pending":
		if !s.methods(w, r, http.MethodGet) {
			return
		}
		out, err := s.pendingConfirmation()
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sendJSON(w, http.StatusOK, out)
	case len(segs) == 3 && segs[1] == "diff":
		from, err := revisionSegment(segs[0])
		to, err2 := revisionSegment(segs[2])
		if err = cmp.Or(err, err2); err != nil {
			s.fail(w, r, err)
			return
		}
		if !s.methods(w, r, http.MethodGet) {
			return
		}
		diffs, err := s.hist.DiffRevisions(from, to)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sendJSON(w, http.StatusOK, mustJSON(map[string]any{"From": from, "To": to, "Changes": nonNil(diffs)}))
	case len(segs) == 1 || len(segs) == 2 && (segs[1] == "confirm" || segs[1] == "cancel"):
		rev, err := revisionSegment(segs[0])
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if len(segs) == 1 {
			if !s.methods(w, r, http.MethodGet) {
				return
			}
			out, err := s.hist.GetRevision(rev, nil)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			sendJSON(w, http.StatusOK, out)
			return
		}
		if !s.methods(w, r, http.MethodPost) {
			return
		}
		if segs[1] == "cancel" {
			s.cancelPending(w, r, rev)
			return
		}
		info := &engine.LogInfo{API: "revision", Operation: r.Method, Data: fmt.Sprintf(`{"Confirm":%d}`, rev)}
		if err := s.hist.Confirm(r.Context(), rev, engine.Request{Meta: s.meta(r), Log: info, Allow: allowUsers(r, "Revision")}); err != nil {
			s.fail(w, r, err)
			return
		}
		obs.SetRevision(w, rev)
		sendJSON(w, http.StatusOK, []byte(`{"Result":"Success","Revision":`+strconv.FormatUint(rev, 10)+`}`))
	default:
		s.fail(w, r, apierr.NotFound(apierr.CodeNotFound, "Revision", "no such path %q", r.URL.Path))
	}
}

// revisionSegment parses a revision named in a path: a positive integer
// (404 otherwise, as for any path that names nothing).
func revisionSegment(seg string) (uint64, error) {
	rev, err := strconv.ParseUint(seg, 10, 64)
	if err != nil || rev == 0 {
		return 0, apierr.NotFound(apierr.CodeNotFound, "Revision", "no revision %q; revisions are positive integers", seg)
	}
	return rev, nil
}

// cancelPending answers POST /public/v1/revisions/{rev}/cancel: the commit
// at rev that awaits confirmation is rolled back now, in a revision of its
// own (RollbackRevision), as its timer would. Who may cancel is who may
// confirm (history.Cancel vets every change of that commit for the caller).
func (s *Server) cancelPending(w http.ResponseWriter, r *http.Request, rev uint64) {
	meta := s.meta(r)
	meta.Comment = fmt.Sprintf("revision %d cancelled", rev)
	info := &engine.LogInfo{API: "revision", Operation: r.Method, Data: fmt.Sprintf(`{"Cancel":%d}`, rev)}
	out, err := s.hist.Cancel(r.Context(), rev, engine.Request{Meta: meta, Log: info, Allow: allowUsers(r, "Revision")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	obs.SetRevision(w, out.Revision)
	sendJSON(w, http.StatusOK, mustJSON(map[string]any{"Result": "Success", "Revision": rev, "RollbackRevision": out.Revision}))
}

func (s *Server) candidates(w http.ResponseWriter, r *http.Request, rest string) {
	switch _, sub, _ := strings.Cut(rest, "/"); {
	case strings.HasPrefix(sub, "config/") || sub == "config": // unreadInput checks them
	case sub == "commit":
		if !s.queryTakes(w, r, "dry_run") {
			return
		}
	default:
		if !s.queryTakes(w, r) {
			return
		}
	}
	if rest == "" {
		if !s.methods(w, r, http.MethodGet, http.MethodPost) {
			return
		}
		if r.Method == http.MethodGet {
			// The caller's own: candidates are private drafts.
			user := s.meta(r).User
			list, err := s.cands.List(func(c candidates.Info) bool { return c.User == user })
			if err != nil {
				s.fail(w, r, err)
				return
			}
			sendJSON(w, http.StatusOK, mustJSON(map[string]any{"Candidates": nonNil(list)}))
			return
		}
		var comment string
		if err := decodeOptions(r, map[string]any{"Comment": &comment}); err != nil {
			s.fail(w, r, err)
			return
		}
		info, err := s.cands.Open(r.Context(), s.meta(r), comment)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Location", candidatesPrefix+"/"+info.CandidateId)
		sendJSON(w, http.StatusCreated, mustJSON(map[string]any{"Result": "Success", "CandidateId": info.CandidateId, "BaseRevision": info.BaseRevision}))
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	if r.Method != http.MethodOptions {
		if err := s.candidateOwner(r, id, sub); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	switch {
	case sub == "":
		if !s.methods(w, r, http.MethodGet, http.MethodDelete) {
			return
		}
		if r.Method == http.MethodDelete {
			if err := s.cands.Discard(r.Context(), id); err != nil {
				s.fail(w, r, err)
				return
			}
			sendJSON(w, http.StatusOK, []byte(`{"Result":"Success"}`))
			return
		}
		info, err := s.cands.Info(id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sendJSON(w, http.StatusOK, mustJSON(info))
	case sub == "diff":
		if !s.methods(w, r, http.MethodGet) {
			return
		}
		var diffs []engine.Diff
		err := s.cands.Read(id, func(cr *candidates.Reader) error { diffs = cr.Diff(); return nil })
		if err != nil {
			s.fail(w, r, err)
			return
		}
		sendJSON(w, http.StatusOK, mustJSON(map[string]any{"CandidateId": id, "Changes": nonNil(diffs)}))
	case sub == "edits":
		if !s.methods(w, r, http.MethodPost) {
			return
		}
		s.stageEdits(w, r, id)
	case sub == "commit":
		if !s.methods(w, r, http.MethodPost) {
			return
		}
		s.commitCandidate(w, r, id)
	case strings.HasPrefix(sub, "config/") || sub == "config":
		route, err := ParseRoute(s.reg, Prefix+sub)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if !route.allows(r.Method) {
			s.methods(w, r, route.Allowed()...)
			return
		}
		if r.Method == http.MethodOptions {
			s.methods(w, r, route.Allowed()...)
			return
		}
		q := &request{s: s, w: w, r: r, route: route, kind: route.Kind, meta: s.meta(r), cand: id}
		if err := q.serve(); err != nil {
			s.fail(w, r, err)
		}
	default:
		s.fail(w, r, apierr.NotFound(apierr.CodeNotFound, "Candidate", "no such path %q; a candidate has /diff, /commit, /edits and /config/...", r.URL.Path))
	}
}

// candidateOwner lets a request at candidate id through if its user opened
// the candidate: a candidate belongs to its creator, its id alone grants
// nothing. An admin may also describe (GET) and discard (DELETE) another
// user's candidate, and is told whose it is (403) for anything else;
// anyone else gets the 404 of a candidate that does not exist, so an id
// seen elsewhere (a failed commit in the config log) tells them nothing.
func (s *Server) candidateOwner(r *http.Request, id, sub string) error {
	info, err := s.cands.Info(id)
	if err != nil {
		return err
	}
	id2 := auth.FromContext(r.Context())
	if info.User == id2.Name {
		return nil
	}
	if id2.Role != auth.Admin {
		return apierr.NotFound(apierr.CodeNotFound, "Candidate", "no candidate %q of yours (a candidate belongs to the user who opened it; see GET %s for yours)", id, candidatesPrefix)
	}
	if sub == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodDelete) {
		return nil
	}
	return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "Candidate", "",
		"candidate %q belongs to %s: only its owner may stage into, read, diff or commit it; an admin may describe it (GET) or discard it (DELETE %s/%s)", id, ownerName(info.User), candidatesPrefix, id)
}

// ownerName names a candidate's owner in a message.
func ownerName(user string) string {
	if user == "" {
		return "the local admin"
	}
	return "user " + strconv.Quote(user)
}

func (s *Server) commitCandidate(w http.ResponseWriter, r *http.Request, id string) {
	var (
		comment string
		confirm int64
		force   bool
	)
	err := decodeOptions(r, map[string]any{"Comment": &comment, "Confirm": &confirm, "Force": &force})
	if err == nil {
		err = model.CheckComment("Commit", "Comment", comment, model.MaxComment)
	}
	var wait time.Duration // 0: no confirmation
	if err == nil && confirm != 0 {
		wait, err = engine.ConfirmWait("Confirm", float64(confirm))
	}
	req := engine.Request{Meta: s.meta(r), Force: force, Confirm: wait, Allow: allowUsers(r, "Candidate")}
	if confirm > 0 {
		req.Allow = reversible(req.Allow)
	}
	req.Meta.Comment = comment
	if err == nil {
		req.DryRun, err = dryRun(r)
	}
	if err == nil {
		req.IfRevision, err = ifRevision(r)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !req.DryRun {
		req.Log = &engine.LogInfo{API: "candidate", Operation: r.Method, Data: string(mustJSON(map[string]any{"CandidateId": id, "Comment": comment, "Confirm": confirm, "Force": force}))}
	}
	out, err := s.cands.Commit(r.Context(), id, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body := map[string]any{"Result": "Success", "Changes": nonNil(out.Diffs)}
	if out.DryRun {
		body["DryRun"] = true
	}
	if out.Revision != 0 {
		body["Revision"] = out.Revision
	} else if !out.DryRun {
		body["Message"] = "nothing to commit: the candidate changes nothing; the running revision stays " + strconv.FormatUint(s.eng.Revision(), 10)
	}
	if confirm > 0 && !out.DryRun && out.Revision != 0 {
		// The deadline the engine stored and enforces (set at the store's
		// write, before the answer waited for the backend's sync), as
		// /revisions/pending answers it.
		by := time.Now().Add(time.Duration(confirm) * time.Second)
		if p := s.hist.PendingConfirm(); p != nil && p.Revision == out.Revision {
			by = time.Unix(0, p.Deadline)
		}
		body["ConfirmBy"] = by.UTC().Format(time.RFC3339)
	}
	if out.Revision != 0 {
		w.Header().Set("ETag", engine.ETag(out.Revision))
		obs.SetRevision(w, out.Revision)
	}
	sendJSON(w, http.StatusOK, mustJSON(body))
}

func nonNil[T any](d []T) []T {
	if d == nil {
		return []T{}
	}
	return d
}

// ifRevision reads If-Match on a commit: the running revision it expects.
func ifRevision(r *http.Request) (uint64, error) {
	h := r.Header.Get("If-Match")
	if h == "" || h == "*" {
		return 0, nil
	}
	rev, err := strconv.ParseUint(strings.Trim(h, `"`), 10, 64)
	if err != nil || rev == 0 {
		return 0, apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, "", "", "If-Match %s is not a revision; give the running revision as an ETag, like \"42\"", h)
	}
	return rev, nil
}

// dryRun reads ?dry_run=true.
func dryRun(r *http.Request) (bool, error) {
	v, ok := r.URL.Query()["dry_run"]
	if !ok {
		return false, nil
	}
	if len(v) != 1 {
		return false, apierr.BadRequest(apierr.CodeInvalidValue, "", "dry_run", "dry_run is given %d times; give it once", len(v))
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, apierr.BadRequest(apierr.CodeInvalidValue, "", "dry_run", "dry_run must be true or false, not %q", v[0])
	}
	return b, nil
}

// decodeOptions reads a small JSON body of known fields into typed
// pointers; an unknown field or a wrong type is a 400.
func decodeOptions(r *http.Request, fields map[string]any) error {
	data, err := readLimited(r)
	if err != nil {
		return err
	}
	body, err := model.DecodeBody(data)
	if err != nil {
		return err
	}
	// In name order, so that the same body always gets the same answer.
	for _, name := range slices.Sorted(maps.Keys(body)) {
		raw := body[name]
		ptr, ok := fields[name]
		if !ok {
			return apierr.BadRequest(apierr.CodeUnknownField, "", name, "unknown field %q; this request takes %s", name, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if err := json.Unmarshal(raw, ptr); err != nil {
			return apierr.BadRequest(apierr.CodeWrongType, "", name, "%s has the wrong type: %v", name, err)
		}
		if text, ok := ptr.(*string); ok {
			if err := model.CheckLine("", name, *text); err != nil {
				return err // a Comment is shown in history, the feed, the CLI
			}
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sendJSON writes every JSON response: body and a newline, so that a
// reply printed by curl ends its line.
func sendJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body) + 1)}
	w.WriteHeader(status)
	w.Write(body)
	w.Write(newline)
}

var newline = []byte{'\n'}

// HeartbeatInterval is how often an idle change feed sends a comment line.
const HeartbeatInterval = 15 * time.Second

// FlushDelay is the longest an event waits before it is sent while commits
// come at less than feed.BusyRate a second; feed.MaxFlushDelay above.
const FlushDelay = feed.FlushDelay

// events serves the change feed: one Server-Sent Event per commit, id = the
// revision, resumable with Last-Event-ID or ?since=<rev>.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	_, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, fmt.Errorf("streaming is not supported by this connection"))
		return
	}
	since, beat, err := feedParams(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if r.Method == http.MethodHead {
		// The stream's headers (or the error a GET would get), and no
		// subscriber: net/http drops what is written to a HEAD response,
		// so its writes would never fail, and once the client sends its
		// next request on the connection net/http stops watching for the
		// client leaving; a stream would hold the connection, the handler
		// and its place in the feed until shutdown.
		if _, _, err := s.resumeAfter(since); err != nil {
			s.fail(w, r, err)
			return
		}
		setStreamHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		return
	}
	// The stream lasts while its user's access does (auth.Sessions).
	held, release := s.sessions.HoldRequest(r, auth.NeedRead)
	defer release()
	sub := s.eng.Feed().Subscribe() // before reading the running revision: no commit falls between
	defer sub.Close()
	last, cur, err := s.resumeAfter(since)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	st := &feedStream{taken: &s.taken, w: w, rc: http.NewResponseController(w), timeout: s.feedWriteTimeout()}
	s.taken.watch(st.rc)
	defer st.close()
	setStreamHeaders(w.Header())
	// The revision the stream is current with once its replay is sent: a
	// client that joined "from now" resumes after it if the stream breaks
	// before its first event, instead of from whenever it reconnects.
	w.Header().Set("ETag", engine.ETag(cur))
	w.WriteHeader(http.StatusOK)
	for rev := last + 1; rev <= cur && err == nil; rev++ {
		data, gerr := s.hist.GetRevision(rev, nil)
		if gerr == nil {
			err = st.send(feed.AppendFrame(nil, rev, data))
			last = rev
			continue
		}
		oldest := history.OldestKept(s.eng.Revision())
		if rev >= oldest {
			// Kept, yet unreadable: the store failed. The client is told
			// which revision it misses; the stream goes on.
			s.log.Error("change feed: reading a kept revision", "revision", rev, "err", gerr)
			err = st.send(errorEvent(map[string]any{"Message": fmt.Sprintf("revision %d could not be read (the server's log says why); continuing with the next", rev), "Revision": rev}))
			continue
		}
		// One event for the whole gap, however long: a client resuming
		// from long ago would otherwise get one per revision pushed out.
		// Commits while this replays may push out more: a later revision
		// that fails to read makes a gap of its own.
		next := min(oldest, cur+1) // past cur, the live feed has the rest
		err = st.send(errorEvent(goneNotice(rev, next)))
		last = next - 1
		rev = last
	}
	if err == nil {
		err = st.send() // the headers, at once
	}
	if err == nil {
		st.takeOver(r)
	}
	tick := time.NewTicker(beat)
	defer tick.Stop()
	// The feed signals every subscriber at once, at most once per
	// FlushDelay (longer when busy), and each sends everything that arrived meanwhile in one
	// write of the frames the feed shares, so that subscribers cost commits
	// little however fast they come.
	var batch []feed.Event
	var frames [][]byte
	for err == nil {
		select {
		case <-sub.Notify:
			var terr error
			batch, terr = sub.Take(batch[:0])
			if terr != nil {
				st.send(errorEvent(map[string]any{"Message": "this subscriber fell too far behind and was dropped; reconnect with Last-Event-ID to resume", "LastEventId": last}))
				return
			}
			frames = frames[:0]
			for _, ev := range batch {
				switch {
				case ev.State: // a change of state, live only; no id
					frames = append(frames, ev.Frame)
				case ev.Revision > last:
					frames = append(frames, ev.Frame)
					last = ev.Revision
				}
			}
			clear(batch) // the ring owns the events: keep none alive here
			err = st.send(frames...)
			clear(frames)
		case <-tick.C:
			err = st.send(heartbeat)
		case <-s.closing:
			return // the server is shutting down; clients resume with Last-Event-ID
		case <-st.gone:
			return // the client closed the connection
		case <-held.Done():
			if refused := auth.Revoked(held); refused != nil {
				st.send(errorEvent(map[string]any{"Message": refused.Message, "Status": refused.Status, "Code": refused.Code}))
			}
			return
		}
	}
	s.log.Info("change-feed subscriber dropped: it stopped reading", "addr", r.RemoteAddr, "err", err)
}

var heartbeat = []byte(": heartbeat\n\n")

// resumeAfter checks where a subscriber resumes (-1: from now) against the
// running revision cur, and returns the revision it resumes after.
func (s *Server) resumeAfter(since int64) (last, cur uint64, err error) {
	cur = s.eng.Revision()
	if since < 0 {
		return cur, cur, nil // by default, only what happens from now on
	}
	if uint64(since) > cur {
		// Resuming after a revision that does not exist would silently skip
		// the commits up to it: the client has the wrong switch or a
		// restored store.
		return 0, 0, apierr.BadRequest(apierr.CodeInvalidValue, "", "since", "since / Last-Event-ID %d is after the running revision %d; resume from a revision this switch has made (0 for all kept)", since, cur)
	}
	return uint64(since), cur, nil
}

// setStreamHeaders sets the headers of the change feed's response (GET and
// HEAD alike).
func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

// feedWriteTimeout bounds each write to a change-feed subscriber. A
// subscriber that stops reading would block its writer forever (net/http
// has no write timeout for a stream): a write that misses the deadline
// ends the stream.
func (s *Server) feedWriteTimeout() time.Duration {
	if s.FeedWriteTimeout <= 0 {
		return FeedWriteTimeoutDefault
	}
	return s.FeedWriteTimeout
}

// goneNotice is the error event's data for revisions first..next-1, pushed
// out of the kept history, the stream going on with next. It names no
// LastEventId: that would tell the client to reconnect (client.Events).
func goneNotice(first, next uint64) map[string]any {
	gone := fmt.Sprintf("revisions %d to %d are", first, next-1)
	if first == next-1 {
		gone = fmt.Sprintf("revision %d is", first)
	}
	return map[string]any{
		"Message":       fmt.Sprintf("%s no longer kept (the last %d are); continuing with revision %d", gone, history.Kept, next),
		"FirstMissing":  first,
		"LastMissing":   next - 1,
		"ContinuesWith": next,
	}
}

// errorEvent is an "event: error" with data as its JSON data.
func errorEvent(data map[string]any) []byte {
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", mustJSON(data))
}

// feedParams reads where to resume (-1: from now) and the heartbeat period.
func feedParams(r *http.Request) (int64, time.Duration, error) {
	since := int64(-1)
	// Last-Event-ID wins: an EventSource reconnects to the URL it was
	// opened with, since and all, and sends where it got to in the header.
	q := r.URL.Query()
	text := q.Get("since")
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		text = v
	}
	if text != "" {
		n, err := strconv.ParseUint(text, 10, 63)
		if err != nil {
			return 0, 0, apierr.BadRequest(apierr.CodeInvalidValue, "", "since", "since / Last-Event-ID must be a revision number, not %q", text)
		}
		since = int64(n)
	}
	beat := HeartbeatInterval
	if v := q.Get("heartbeat"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 300 {
			return 0, 0, apierr.BadRequest(apierr.CodeInvalidValue, "", "heartbeat", "heartbeat must be 1..300 seconds, not %q", v)
		}
		beat = time.Duration(n) * time.Second
	}
	for name := range q {
		if name != "since" && name != "heartbeat" {
			return 0, 0, apierr.BadRequest(apierr.CodeInvalidValue, "", name, "unknown query parameter %q; the feed takes since and heartbeat", name)
		}
	}
	return since, beat, nil
}
