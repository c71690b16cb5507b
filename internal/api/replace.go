package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/model"
)

// Replacing in a candidate: the edit list of POST /candidates/{id}/edits
// takes the method PUT besides POST, PATCH and DELETE.
//
//	{"Method": "PUT", "Path": "config/NtpServer", "Body": {...}}
//	{"Method": "PUT", "Path": "config/NtpServers", "Body": [{...}, ...]}
//
// PUT of one object (a kind's name) makes that object exactly the body: the
// fields the body leaves out return to their defaults (write-only secrets
// and the values the switch discovers, such as a port's speed, stay as they
// are), and an object that does not exist is
// created. PUT of a kind's collection (its plural) makes the kind's objects
// exactly the list: each listed object is replaced so, and every other
// object of the kind is deleted, or returned to its defaults where clients
// cannot delete it (a discovered port; the sub-ports of a breakout follow
// their port). The server computes these edits on the candidate as it is
// when the request arrives, and stages them with the request's other edits
// all or none; they are what a configuration tool's "replaced" and
// "overridden" mean, done in one commit instead of a client's deletes and
// creates that can stop midway.

// replaceEdits expands one PUT element of an edit list into the edits it
// means on the candidate's view.
// plural says the PUT named the kind's collection.
func (s *Server) replaceEdits(r *http.Request, cand string, se stagedEdit) ([]engine.Edit, bool, error) {
	route, _, query, err := s.stagedPath(se.Path)
	if err != nil {
		return nil, false, err
	}
	if query != "" {
		return nil, false, apierr.BadRequest(apierr.CodeInvalidValue, "Candidate", "Path", "Path %q: PUT takes config/<Object> or config/<Object>s, without a query", se.Path)
	}
	k := route.Kind
	if route.ID != "" {
		return nil, false, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "Path", "Path %q: PUT names an object by the keys in its body, not by ObjectId", se.Path)
	}
	if se.IfMatch != "" {
		return nil, false, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "IfMatch", "PUT takes no IfMatch: commit the candidate with If-Match to act only on a known configuration")
	}
	var raws []json.RawMessage
	if route.Plural {
		if err := json.Unmarshal(se.Body, &raws); err != nil || raws == nil {
			return nil, false, apierr.BadRequest(apierr.CodeMalformedJSON, k.Name, "Body", "PUT %s takes a JSON array of %s objects (an empty array for none)", se.Path, k.Name)
		}
	} else {
		if len(se.Body) == 0 || string(se.Body) == "null" {
			return nil, false, apierr.BadRequest(apierr.CodeMalformedJSON, k.Name, "Body", "PUT %s takes a %s object", se.Path, k.Name)
		}
		raws = []json.RawMessage{se.Body}
	}
	if route.Plural && k.Singleton {
		return nil, false, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "Path", "%s has one object: PUT config/%s", k.Name, k.Name)
	}
	wanted := make([]model.Object, len(raws))
	seen := make(map[string]int, len(raws))
	for i, raw := range raws {
		body, err := model.DecodeBody(raw)
		if err != nil {
			return nil, false, atElement(route.Plural, i, k, err)
		}
		o, err := k.Parse(body)
		if err != nil {
			return nil, false, atElement(route.Plural, i, k, err)
		}
		if !k.Singleton {
			for _, f := range k.Keys() {
				if _, ok := o[f.Name]; !ok {
					return nil, false, atElement(route.Plural, i, k, apierr.BadRequest(apierr.CodeMissingField, k.Name, f.Name, "%s is the key of %s: give it to say which object", f.Name, k.Name))
				}
			}
			key := k.Key(o)
			if j, dup := seen[key]; dup {
				return nil, false, atElement(route.Plural, i, k, apierr.BadRequest(apierr.CodeInvalidValue, k.Name, "", "%s %s is listed twice (elements %d and %d)", k.Name, k.DescribeKey(key), j, i))
			}
			seen[key] = i
		}
		wanted[i] = o
	}
	var edits []engine.Edit
	err = s.cands.Read(cand, func(cr *candidates.Reader) error {
		have := map[string]model.Object{}
		var order []string
		if err := cr.Each(k, func(key string, o model.Object) bool {
			have[key] = o
			order = append(order, key)
			return true
		}); err != nil {
			return err
		}
		for i, o := range wanted {
			key := k.Key(o)
			if k.Singleton && len(order) == 1 {
				key = order[0]
			}
			cur, ok := have[key]
			if !ok {
				if !k.Creatable() {
					return atElement(route.Plural, i, k, apierr.NotFound(apierr.CodeNotFound, k.Name, "no %s %s; %s objects are not created by clients", k.Name, k.DescribeKey(k.Key(o)), k.Name))
				}
				cur = model.Object{}
			}
			ed := replacing(k, key, o)
			// The whole object the edit makes, checked here so that an
			// error names the element of the body it is about.
			whole := k.Defaults()
			for _, src := range []model.Object{cur, ed.Fields} {
				for name, v := range src {
					whole[name] = v
				}
			}
			if err := k.Validate(whole); err != nil {
				return atElement(route.Plural, i, k, err)
			}
			if !ok {
				ed = engine.Edit{Kind: k, Op: backend.Create, Fields: o}
			}
			edits = append(edits, ed)
		}
		if !route.Plural {
			return nil
		}
		children := map[string]bool{}
		if k.Children != nil {
			for _, key := range order {
				for _, c := range k.Children(have[key]) {
					children[k.Key(c)] = true
				}
			}
		}
		for _, key := range order {
			if _, listed := seen[key]; listed || children[key] {
				continue
			}
			keyObj, _ := k.KeyObject(key)
			if k.Creatable() || (k.Deletable != nil && k.Deletable(have[key])) {
				edits = append(edits, engine.Edit{Kind: k, Op: backend.Delete, Target: engine.Target{Key: keyObj}})
				continue
			}
			edits = append(edits, replacing(k, key, keyObj))
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	id := auth.FromContext(r.Context())
	for _, ed := range edits {
		if a := k.AccessFor(opMethod(ed.Op)); !a.Allows(id.Role.Model(), id.Name, ed.Fields) {
			return nil, false, apierr.New(http.StatusForbidden, apierr.CodeForbidden, k.Name, "", "PUT %s needs %s; user %s is %s", se.Path, a.Who(), id.Name, id.Role)
		}
	}
	return edits, route.Plural, nil
}

// opMethod is the method of an edit list's element that makes an edit of
// op: a PUT's edits need its access.
func opMethod(op backend.Op) string {
	switch op {
	case backend.Create:
		return http.MethodPost
	case backend.Delete:
		return http.MethodDelete
	}
	return http.MethodPatch
}

// replacing is the update that makes the object with store key key exactly
// want: every field want gives, and the reset of every other field
// (model.Kind.Reset): its default where a client sets it; the fields a reset
// keeps (read-only, create-only, discovered by the switch, write-only
// secrets) are left as they are unless want gives them, and the engine
// refuses a given value it cannot apply.
func replacing(k *model.Kind, key string, want model.Object) engine.Edit {
	keyObj, _ := k.KeyObject(key)
	fields := k.Reset(keyObj)
	maps.Copy(fields, want)
	maps.Copy(fields, keyObj)
	return engine.Edit{Kind: k, Op: backend.Update, Target: engine.Target{Key: keyObj}, Fields: fields}
}

// atElement names the element of a PUT's list an error is about.
func atElement(plural bool, i int, k *model.Kind, err error) error {
	if !plural {
		return err
	}
	e := *apierr.From(err)
	if e.Object == "" {
		e.Object = k.Name
	}
	e.Message = "Body[" + strconv.Itoa(i) + "]: " + e.Message
	return &e
}
