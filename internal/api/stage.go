package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// Staging many edits in one request:
//
//	POST /public/v1/candidates/{id}/edits
//	{"Edits": [{"Method": "POST", "Path": "config/Vlan", "Body": {...}},
//	           {"Method": "PATCH", "Path": "config/Vlan?VlanId=10", "Body": {...}, "IfMatch": "\"7\""},
//	           {"Method": "DELETE", "Path": "config/NtpServer/<ObjectId>"}]}
//
// Each edit is what the same method on /candidates/{id}/<Path> would stage.
// The edits are checked in order against the candidate's view, then the
// check phase runs on the result, and they are all staged, as one durable
// write, or none is.

// Limits of one staging request: a body this large holds tens of thousands
// of edits; more is a client's loop gone wrong.
const (
	MaxStageBody  = 16 << 20
	MaxStageEdits = 50000
)

// stagedEdit is one element of "Edits".
type stagedEdit struct {
	Method  string
	Path    string
	Body    json.RawMessage
	IfMatch string
}

func (s *Server) stageEdits(w http.ResponseWriter, r *http.Request, cand string) {
	edits, err := s.readStagedEdits(w, r)
	if err == nil && len(edits) == 0 {
		err = apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Edits", "Edits is empty; give at least one edit")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	eds := make([]engine.Edit, 0, len(edits))
	// at[i] is the index of edit i's engine edit, or -1 for a PUT of a
	// collection, which expands into any number of them (a PUT of one
	// object expands into one).
	at := make([]int, len(edits))
	var owner []int // owner[j]: the request edit engine edit j came from
	for i, se := range edits {
		at[i] = len(eds)
		if se.Method == http.MethodPut {
			more, plural, err := s.replaceEdits(r, cand, se)
			if err != nil {
				s.fail(w, r, atEdit(i, err))
				return
			}
			if plural {
				at[i] = -1
			}
			eds = append(eds, more...)
			for range more {
				owner = append(owner, i)
			}
			continue
		}
		ed, err := s.stagedEdit(r, se)
		if err != nil {
			s.fail(w, r, atEdit(i, err))
			return
		}
		eds = append(eds, ed)
		owner = append(owner, i)
	}
	ids := make([]string, len(edits))
	if len(eds) > 0 {
		out, err := s.cands.StageMany(r.Context(), cand, eds)
		if err != nil {
			s.fail(w, r, requestEditError(err, owner))
			return
		}
		for i, j := range at {
			if j >= 0 && out.IDs[j] != uuid.Nil {
				ids[i] = out.IDs[j].String()
			}
		}
	}
	sendJSON(w, http.StatusOK, mustJSON(map[string]any{"Result": "Success", "CandidateId": cand, "Staged": len(eds), "ObjectIds": ids}))
}

func (s *Server) readStagedEdits(w http.ResponseWriter, r *http.Request) ([]stagedEdit, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxStageBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge, "Candidate", "", "the body is larger than %d bytes; stage the edits in several requests", MaxStageBody)
		}
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "Candidate", "", "cannot read the body: %v", err)
	}
	var body struct{ Edits []stagedEdit }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "Candidate", "", `the body is not {"Edits": [{"Method", "Path", "Body", "IfMatch"}, ...]}: %v`, err)
	}
	if dec.More() {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, "Candidate", "", "the body holds more than one JSON value")
	}
	if len(body.Edits) > MaxStageEdits {
		return nil, apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Edits", "%d edits in one request; at most %d", len(body.Edits), MaxStageEdits)
	}
	return body.Edits, nil
}

// stagedPath reads the Path of an element of an edit list: the path the
// edit would have under the candidate, config/..., with the API's prefix or
// without. It returns the path's route, the path with the prefix, and its
// query.
func (s *Server) stagedPath(p string) (route Route, path, query string, err error) {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Fragment != "" {
		return Route{}, "", "", apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Path", "Path %q: give the path under the candidate, like config/Vlan, config/Vlans or config/Vlan?VlanId=10", p)
	}
	path = strings.TrimLeft(strings.TrimPrefix(u.Path, Prefix), "/")
	if !strings.HasPrefix(path, "config/") {
		return Route{}, "", "", apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Path", "Path %q: a candidate stages config objects: config/<Object>[s][/<ObjectId>]", p)
	}
	path = Prefix + path
	route, aerr := ParseRoute(s.reg, path)
	if aerr != nil {
		return Route{}, "", "", aerr
	}
	return route, path, u.RawQuery, nil
}

// stagedEdit turns one element of Edits into the engine's Edit, reading it
// exactly as the single-edit staging path reads its request.
func (s *Server) stagedEdit(r *http.Request, se stagedEdit) (engine.Edit, error) {
	var op backend.Op
	switch se.Method {
	case http.MethodPost:
		op = backend.Create
	case http.MethodPatch:
		op = backend.Update
	case http.MethodDelete:
		op = backend.Delete
	default:
		return engine.Edit{}, apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Method", "Method %q: an edit is POST, PATCH, PUT or DELETE", se.Method)
	}
	route, path, query, err := s.stagedPath(se.Path)
	if err != nil {
		return engine.Edit{}, err
	}
	if !route.allows(se.Method) {
		return engine.Edit{}, apierr.New(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, route.Kind.Name, "Method", "%s is not allowed on %s; allowed: %s", se.Method, se.Path, strings.Join(route.Allowed(), ", "))
	}
	sub, err := http.NewRequestWithContext(r.Context(), se.Method, path+"?"+query, nil)
	if err != nil {
		return engine.Edit{}, apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Path", "Path %q: %v", se.Path, err)
	}
	if se.IfMatch != "" {
		sub.Header.Set("If-Match", se.IfMatch)
	}
	q := &request{s: s, r: sub, route: route, kind: route.Kind, meta: s.meta(r)}
	if len(se.Body) > 0 && string(se.Body) != "null" {
		if q.body, err = model.DecodeBody(se.Body); err != nil {
			if ae, ok := err.(*apierr.Error); ok {
				ae.Object = route.Kind.Name
			}
			return engine.Edit{}, err
		}
	}
	if err := unreadInput(route, se.Method, sub.URL.Query(), q.body); err != nil {
		return engine.Edit{}, err
	}
	ed := engine.Edit{Kind: q.kind, Op: op, IfMatch: ifMatchHeader(sub)}
	if op != backend.Create {
		if ed.Target, err = q.target(); err != nil {
			return engine.Edit{}, err
		}
	}
	if op != backend.Delete {
		if ed.Fields, err = q.kind.Parse(q.body); err != nil {
			return engine.Edit{}, err
		}
	}
	// The access the same edit staged alone needs (see access.go).
	if a, id := route.Access(se.Method), auth.FromContext(r.Context()); !a.Allows(id.Role.Model(), id.Name, ed.Fields) {
		return engine.Edit{}, apierr.New(http.StatusForbidden, apierr.CodeForbidden, route.Kind.Name, "", "%s %s needs %s; user %s is %s", se.Method, se.Path, a.Who(), id.Name, id.Role)
	}
	return ed, nil
}

// atEdit makes an error say which edit of the list it is about.
func atEdit(i int, err error) error {
	e := *apierr.From(err)
	e.Message = "Edits[" + strconv.Itoa(i) + "]: " + e.Message
	return &e
}

// requestEditError makes an error of the staging, which names the engine
// edit it is about ("Edits[j]: "), name the edit of the request that edit
// came from (owner[j]): a PUT expands into several.
func requestEditError(err error, owner []int) error {
	e := apierr.From(err)
	rest, ok := strings.CutPrefix(e.Message, "Edits[")
	if !ok {
		return err
	}
	num, rest, ok := strings.Cut(rest, "]: ")
	j, perr := strconv.Atoi(num)
	if !ok || perr != nil || j < 0 || j >= len(owner) || owner[j] == j {
		return err
	}
	out := *e
	out.Message = "Edits[" + strconv.Itoa(owner[j]) + "]: " + rest
	return &out
}
