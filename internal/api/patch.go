package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// patchOp is one operation of the FlexSwitch SDK's PATCH form
// {<keys>, "patch":[{"op":"add"|"remove","path":<list field>,"value":...}]}:
// add appends elements to a list field, remove takes them out.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// decodePatchOps reads the patch list as strictly as a body: each operation
// is an object of exactly op, path and value, once each and spelt so, or a
// 400. encoding/json alone would match "Op" and "Path" case-insensitively,
// let a repeated "op" win, and skip a member it does not know ("vlaue"),
// applying an operation other than the one sent.
func decodePatchOps(kind string, raw json.RawMessage) ([]patchOp, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || len(elems) == 0 {
		return nil, apierr.BadRequest(apierr.CodeMalformedJSON, kind, "patch", "patch must be a non-empty array of {\"op\":\"add\"|\"remove\",\"path\":<list field>,\"value\":<elements>}")
	}
	ops := make([]patchOp, len(elems))
	for i, elem := range elems {
		members, err := model.DecodeBody(elem)
		if err != nil {
			return nil, apierr.BadRequest(apierr.CodeMalformedJSON, kind, "patch", "patch[%d]: %s", i, apierr.From(err).Message)
		}
		for name, v := range members {
			var text *string
			switch name {
			case "op":
				text = &ops[i].Op
			case "path":
				text = &ops[i].Path
			case "value":
				ops[i].Value = v
				continue
			default:
				return nil, apierr.BadRequest(apierr.CodeUnknownField, kind, name, "patch[%d] has no member %q; an operation has op, path and value (lower case)", i, name)
			}
			if err := json.Unmarshal(v, text); err != nil {
				return nil, apierr.BadRequest(apierr.CodeWrongType, kind, name, "patch[%d].%s must be a string", i, name)
			}
		}
	}
	return ops, nil
}

// patchAttempts bounds the read-modify-write retries when another client
// changes the object in between.
const patchAttempts = 32

// patchList serves the patch form. The current list is read, changed and
// written with If-Match on the version read, so that a concurrent change is
// never lost: the edit is then redone on the new version. In a candidate
// the edit is staged like any other update, computed from the candidate's
// own view of the object.
func (q *request) patchList(raw json.RawMessage) error {
	fail := func(err error) error {
		q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
		return err
	}
	ops, err := decodePatchOps(q.kind.Name, raw)
	if err != nil {
		return fail(err)
	}
	rest := model.Body{}
	for n, v := range q.body {
		if n != "patch" {
			rest[n] = v
		}
	}
	q.body = rest
	given, err := q.kind.Parse(rest)
	if err != nil {
		return fail(err)
	}
	for n := range given {
		if f := q.kind.Field(n); f == nil || !f.Key {
			return fail(apierr.BadRequest(apierr.CodeInvalidValue, q.kind.Name, n, "%s: with a patch list, the body holds only the object's keys; send other changes in a separate PATCH", n))
		}
	}
	t, err := q.target()
	if err != nil {
		return fail(err)
	}
	type change struct {
		f      *model.Field
		remove bool
		elems  any
	}
	changes := make([]change, len(ops))
	for i, op := range ops {
		f := q.kind.Field(op.Path)
		if f == nil {
			return fail(apierr.BadRequest(apierr.CodeUnknownField, q.kind.Name, op.Path, "patch path %q is not a field of %s", op.Path, q.kind.Name))
		}
		if op.Op != "add" && op.Op != "remove" {
			return fail(apierr.BadRequest(apierr.CodeInvalidValue, q.kind.Name, f.Name, "patch op %q: use add or remove", op.Op))
		}
		elems, err := f.DecodeElements(q.kind.Name, op.Value)
		if err != nil {
			return fail(err)
		}
		changes[i] = change{f, op.Op == "remove", elems}
	}
	// edit computes the new lists from the object as it is.
	edit := func(obj model.Object) (model.Object, error) {
		fields := model.Object{}
		for _, c := range changes {
			list, ok := fields[c.f.Name]
			if !ok {
				list = obj[c.f.Name]
			}
			var err error
			if list, err = patchElements(q.kind.Name, c.f, list, c.elems, c.remove); err != nil {
				return nil, err
			}
			fields[c.f.Name] = list
		}
		return fields, nil
	}
	if q.cand != "" {
		// In a candidate the edit is computed under the candidate's lock,
		// from the list as the candidate holds it.
		out, err := q.s.cands.Stage(q.r.Context(), q.cand, engine.Edit{Kind: q.kind, Op: backend.Update, Target: t, Patch: edit})
		if err != nil {
			return err
		}
		sendWritten(q.w, http.StatusOK, successBody(out.IDs[0]))
		return nil
	}
	clientIfMatch := ifMatchHeader(q.r)
	for attempt := 1; ; attempt++ {
		var cur []byte
		var etag uint64
		if t.ID != nil {
			cur, etag, err = q.s.eng.GetByID(q.r.Context(), q.kind, *t.ID, false, nil)
		} else {
			cur, etag, err = q.s.eng.GetByKey(q.r.Context(), q.kind, t.Key, false, nil)
		}
		if err != nil {
			return fail(err)
		}
		obj, err := decodeObject(q.kind, cur)
		if err != nil {
			return fail(err)
		}
		fields, err := edit(obj)
		if err != nil {
			return fail(err)
		}
		ifMatch := clientIfMatch
		if ifMatch == "" {
			ifMatch = engine.ETag(etag)
		}
		ed := engine.Edit{Kind: q.kind, Op: backend.Update, Target: t, Fields: fields, IfMatch: ifMatch}
		out, err := q.s.eng.Apply(q.r.Context(), []engine.Edit{ed}, q.meta, q.info)
		var ae *apierr.Error
		if err != nil && clientIfMatch == "" && attempt < patchAttempts && errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed {
			continue // changed since the read: redo the edit on the new version
		}
		if err != nil {
			return err // Apply logged it
		}
		q.w.Header().Set("ETag", engine.ETag(out.ETags[0]))
		sendWritten(q.w, http.StatusOK, successBody(out.IDs[0]))
		return nil
	}
}

// decodeObject reads a {"Object":{...}} reply of the engine.
func decodeObject(k *model.Kind, reply []byte) (model.Object, error) {
	var env struct{ Object json.RawMessage }
	if err := json.Unmarshal(reply, &env); err != nil {
		return nil, err
	}
	body, err := model.DecodeBody(env.Object)
	if err != nil {
		return nil, err
	}
	return k.Parse(body)
}

// patchElements adds elems to list or removes them from it.
func patchElements(kind string, f *model.Field, list, elems any, remove bool) (any, error) {
	switch l := list.(type) {
	case []string:
		out := append([]string(nil), l...)
		for _, e := range elems.([]string) {
			i := indexOf(len(out), func(j int) bool { return out[j] == e })
			switch {
			case remove && i < 0:
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: %q is not in the list", f.Name, e)
			case remove:
				out = append(out[:i], out[i+1:]...)
			case i >= 0:
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: %q is in the list already", f.Name, e)
			default:
				out = append(out, e)
			}
		}
		return out, nil
	case []model.Object:
		out := append([]model.Object(nil), l...)
		for _, e := range elems.([]model.Object) {
			i := indexOf(len(out), func(j int) bool { return model.EqualValue(out[j], e) })
			switch {
			case remove && i < 0:
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: %s is not in the list", f.Name, f.AppendElement(nil, e))
			case remove:
				out = append(out[:i], out[i+1:]...)
			case i >= 0:
				return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: %s is in the list already", f.Name, f.AppendElement(nil, e))
			default:
				out = append(out, e)
			}
		}
		return out, nil
	}
	return nil, apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s is not a list", f.Name)
}

func indexOf(n int, match func(int) bool) int {
	for i := 0; i < n; i++ {
		if match(i) {
			return i
		}
	}
	return -1
}
