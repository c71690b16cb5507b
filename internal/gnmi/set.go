package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// writeOp is what one path of a SetRequest does.
type writeOp int

const (
	opDelete writeOp = iota
	opReplace
	opUpdate
)

func (o writeOp) method() string {
	switch o {
	case opDelete:
		return http.MethodDelete
	case opReplace:
		return http.MethodPut
	}
	return http.MethodPatch
}

func (o writeOp) gnmi() gpb.UpdateResult_Operation {
	switch o {
	case opDelete:
		return gpb.UpdateResult_DELETE
	case opReplace:
		return gpb.UpdateResult_REPLACE
	}
	return gpb.UpdateResult_UPDATE
}

// write is one change a SetRequest asks for, in the model's terms.
type write struct {
	op   writeOp
	path *gpb.Path // as the client named it, for errors and the answer
	kind *model.Kind
	// sel, for a delete, names the objects (wildcards allowed); otherwise
	// its keys are all given.
	sel sel
	// body holds the fields given (update, replace); a field's delete
	// (reset to its default) names the field in reset.
	body  model.Body
	reset string
	// oc, for an OpenConfig path, is what its leaves write, resolved in
	// the writer (kind and sel name the object for roles and the log).
	oc *ocWrite
}

// jsonOf is a TypedValue as JSON.
func jsonOf(v *gpb.TypedValue) (json.RawMessage, error) {
	switch x := v.GetValue().(type) {
	case *gpb.TypedValue_JsonVal:
		return x.JsonVal, nil
	case *gpb.TypedValue_JsonIetfVal:
		return x.JsonIetfVal, nil
	case *gpb.TypedValue_StringVal:
		return json.Marshal(x.StringVal)
	case *gpb.TypedValue_IntVal:
		return json.RawMessage(strconv.FormatInt(x.IntVal, 10)), nil
	case *gpb.TypedValue_UintVal:
		return json.RawMessage(strconv.FormatUint(x.UintVal, 10)), nil
	case *gpb.TypedValue_BoolVal:
		return json.RawMessage(strconv.FormatBool(x.BoolVal)), nil
	case *gpb.TypedValue_LeaflistVal:
		var out []json.RawMessage
		for _, e := range x.LeaflistVal.GetElement() {
			b, err := jsonOf(e)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return json.Marshal(out)
	case nil:
		return nil, status.Error(codes.InvalidArgument, "an update has no value")
	}
	return nil, status.Errorf(codes.Unimplemented, "value type %T is not supported; send JSON, JSON_IETF or a scalar", v.GetValue())
}

// nativeWrites is what a native path's delete, replace or update asks.
func (s *Server) nativeWrites(op writeOp, p *gpb.Path, val *gpb.TypedValue) ([]write, error) {
	if e := p.GetElem(); len(e) < 2 || e[0].GetName() != "config" {
		return nil, status.Errorf(codes.InvalidArgument, "%s: only /config/<Kind>[...] paths can be written", pathString(p))
	}
	sels, err := s.parseNative(p)
	if err != nil {
		return nil, err
	}
	sl := sels[0]
	if len(sels) > 1 || op != opDelete && sl.wildcard() {
		return nil, status.Errorf(codes.InvalidArgument, "%s: a %s names one object (every key given, no wildcard); only a delete takes wildcards", pathString(p), strings.ToLower(op.gnmi().String()))
	}
	w := write{op: op, path: p, kind: sl.kind, sel: sl}
	if op == opDelete {
		if sl.field != "" {
			if sl.wildcard() {
				return nil, status.Errorf(codes.InvalidArgument, "%s: a field's delete names one object and one field", pathString(p))
			}
			w.reset = sl.field
		}
		return []write{w}, nil
	}
	raw, err := jsonOf(val)
	if err != nil {
		return nil, err
	}
	// The value is read as the REST API reads a body (model.DecodeBody,
	// DecodeValue): malformed JSON, or a member given twice, is refused.
	if sl.field != "" {
		v, err := model.DecodeValue(raw)
		if err != nil {
			return nil, atPath(pathString(p), err)
		}
		w.body = model.Body{sl.field: v}
	} else if w.body, err = model.DecodeBody(raw); err != nil {
		return nil, atPath(pathString(p), err)
	} else if w.body == nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: the value of an object must be a JSON object of its fields, as the REST API takes", pathString(p))
	}
	if err := unqualify(w.body, OriginNative+":", pathString(p)); err != nil {
		return nil, err
	}
	return []write{w}, nil
}

// unqualify names the members of body that RFC 7951 qualifies with their
// module (prefix, as in swmgr:Mtu) by their local name; a member given
// both ways is given twice, as DecodeBody refuses it.
func unqualify(body model.Body, prefix, where string) error {
	for n, v := range body {
		local, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		if _, dup := body[local]; dup {
			return apierr.BadRequest(apierr.CodeMalformedJSON, "", local, "%s: field %q is given twice, as %q and %q", where, local, local, n)
		}
		delete(body, n)
		body[local] = v
	}
	return nil
}

// atPath makes a refusal name the path it is about.
func atPath(where string, err error) error {
	e := *apierr.From(err)
	e.Message = where + ": " + e.Message
	return &e
}

// writesOf turns a SetRequest into writes, deletes then replaces then
// updates, as the specification orders them.
func (s *Server) writesOf(req *gpb.SetRequest) ([]write, error) {
	if len(req.GetUnionReplace()) > 0 {
		return nil, status.Error(codes.Unimplemented, "union_replace is not supported")
	}
	var out []write
	add := func(op writeOp, p *gpb.Path, val *gpb.TypedValue) error {
		full, err := joinPath(req.GetPrefix(), p)
		if err != nil {
			return err
		}
		native, err := isNative(full)
		if err != nil {
			return err
		}
		var ws []write
		if native {
			ws, err = s.nativeWrites(op, full, val)
		} else {
			ws, err = s.oc.writes(op, full, val)
		}
		if err != nil {
			return err
		}
		out = append(out, ws...)
		return nil
	}
	for _, p := range req.GetDelete() {
		if err := add(opDelete, p, nil); err != nil {
			return nil, err
		}
	}
	for _, u := range req.GetReplace() {
		if err := add(opReplace, u.GetPath(), u.GetVal()); err != nil {
			return nil, err
		}
	}
	for _, u := range req.GetUpdate() {
		if err := add(opUpdate, u.GetPath(), u.GetVal()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// commentPrefix marks the comment of a commit made with the
// commit-confirmed extension: it carries the client's commit id, which a
// restart keeps with the commit awaiting confirmation. A cancel's
// rollback is commented with the id and cancelledSuffix.
const (
	commentPrefix   = "gNMI commit id "
	cancelledSuffix = " cancelled"
)

// maxCommitID is the longest commit id: the comments it makes are within
// model.MaxComment.
const maxCommitID = model.MaxComment - len(commentPrefix) - len(cancelledSuffix)

// DefaultRollback is the commit-confirmed extension's default rollback
// duration.
const DefaultRollback = 10 * time.Minute

// rollbackWait is a rollback_duration as the wait of a confirmed commit,
// in the one range of every front door (engine.ConfirmWait).
func rollbackWait(field string, d *durationpb.Duration) (time.Duration, error) {
	if err := d.CheckValid(); d != nil && err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "%s: %v", field, err)
	}
	wait, err := engine.ConfirmWait(field, float64(d.GetSeconds())+float64(d.GetNanos())/1e9)
	return wait, grpcError(err)
}

// Set applies a SetRequest's deletes, replaces and updates as one commit.
func (s *Server) Set(ctx context.Context, req *gpb.SetRequest) (*gpb.SetResponse, error) {
	var commit *gnmi_ext.Commit
	for _, e := range req.GetExtension() {
		switch x := e.GetExt().(type) {
		case *gnmi_ext.Extension_Commit:
			commit = x.Commit
		default:
			return nil, status.Errorf(codes.Unimplemented, "extension %T is not supported; the commit-confirmed extension is", e.GetExt())
		}
	}
	id := identityOf(ctx)
	writes, err := s.writesOf(req)
	if err != nil {
		return nil, grpcError(err)
	}
	info := &engine.LogInfo{API: "gnmi", Operation: "SET", Data: logData(writes)}
	var confirm time.Duration
	comment := ""
	if commit != nil {
		if commit.GetId() == "" {
			return nil, status.Error(codes.InvalidArgument, "the commit extension needs an id")
		}
		// The id becomes the commit's comment: a comment's rule, as REST's.
		if err := model.CheckComment("Commit", "id", commit.GetId(), maxCommitID); err != nil {
			return nil, grpcError(err)
		}
		switch a := commit.GetAction().(type) {
		case *gnmi_ext.Commit_Commit:
			confirm = DefaultRollback
			if d := a.Commit.GetRollbackDuration(); d != nil {
				if confirm, err = rollbackWait("rollback_duration", d); err != nil {
					return nil, err
				}
			}
			comment = commentPrefix + commit.GetId()
		case *gnmi_ext.Commit_Confirm, *gnmi_ext.Commit_Cancel:
			if len(writes) > 0 {
				return nil, status.Error(codes.InvalidArgument, "a confirm or cancel of the commit extension carries no changes")
			}
			return s.confirmOrCancel(ctx, commit, info)
		case *gnmi_ext.Commit_SetRollbackDuration:
			if len(writes) > 0 {
				return nil, status.Error(codes.InvalidArgument, "a set_rollback_duration of the commit extension carries no changes")
			}
			return s.confirmOrCancel(ctx, commit, info)
		default:
			return nil, status.Error(codes.InvalidArgument, "the commit extension needs an action: commit, confirm or cancel")
		}
	}
	for _, w := range writes {
		need := auth.NeedOf(w.kind.AccessFor(w.op.method()))
		if !id.Role.May(need) {
			err := apierr.New(http.StatusForbidden, apierr.CodeForbidden, w.kind.Name, "", "user %s (%s) may not write %s; that needs %s", id.Name, id.Role, pathString(w.path), need)
			s.o.Engine.Log(ctx, meta(ctx, ""), info, err)
			return nil, grpcError(err)
		}
	}
	r := engine.Request{Meta: meta(ctx, comment), Log: info, Confirm: confirm, OmitDiffs: true,
		Allow:   id.Caller().MayChange(""),
		Prepare: func(v *engine.View, r *engine.Request) error { return s.editsOf(v, writes, r) }}
	out, err := s.o.Engine.Commit(ctx, r)
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &gpb.SetResponse{Timestamp: time.Now().UnixNano(), Prefix: req.GetPrefix()}
	for _, w := range writes {
		resp.Response = append(resp.Response, &gpb.UpdateResult{Path: w.path, Op: w.op.gnmi()})
	}
	_ = out
	return resp, nil
}

// logData is the config log's record of a SetRequest: its paths, without
// values (which may hold secrets).
func logData(ws []write) string {
	m := map[string][]string{}
	for _, w := range ws {
		name := strings.ToLower(w.op.gnmi().String())
		m[name] = append(m[name], pathString(w.path))
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// reqState is the configuration as a SetRequest's writes leave it, in the
// writer: the running configuration plus the edits so far, which it
// gathers. The updates of an object join its create or update before them
// (its checks then see each object once, as the request leaves it: a
// route's next hop replaced by another is never a route without one).
type reqState struct {
	v     *engine.View
	objs  map[string]model.Object // kind NUL key -> the object now; nil: deleted
	edits []engine.Edit
	at    map[string]int // kind NUL key -> its create or update in edits
	// given holds the values OpenConfig leaves gave the objects' fields
	// (kind NUL key NUL field...): two leaves that give one field two
	// values (two next hops' metrics, a route's Cost) are refused.
	given map[string]string
}

func (st *reqState) get(k *model.Kind, key string) model.Object {
	if o, ok := st.objs[k.Name+"\x00"+key]; ok {
		return o
	}
	return st.v.Get(k.Name, key)
}

// each calls fn for every object of k as the writes so far leave them.
func (st *reqState) each(k *model.Kind, fn func(key string, o model.Object) bool) error {
	seen := map[string]bool{}
	stopped := false
	err := st.v.Each(k.Name, func(key string, o model.Object) bool {
		seen[key] = true
		if now, ok := st.objs[k.Name+"\x00"+key]; ok {
			if now == nil {
				return true
			}
			o = now
		}
		stopped = !fn(key, o)
		return !stopped
	})
	if err != nil || stopped {
		return err
	}
	var made []string
	for id, o := range st.objs {
		kind, key, _ := strings.Cut(id, "\x00")
		if kind == k.Name && o != nil && !seen[key] {
			made = append(made, key)
		}
	}
	sort.Strings(made)
	for _, key := range made {
		if !fn(key, st.objs[k.Name+"\x00"+key]) {
			return nil
		}
	}
	return nil
}

func (st *reqState) create(k *model.Kind, key string, fields model.Object) {
	o := k.Defaults()
	for n, v := range fields {
		o[n] = v
	}
	id := k.Name + "\x00" + key
	st.objs[id] = o
	st.at[id] = len(st.edits)
	st.edits = append(st.edits, engine.Edit{Kind: k, Op: model.Create, Fields: fields})
}

func (st *reqState) update(k *model.Kind, key string, keys, fields model.Object) {
	id := k.Name + "\x00" + key
	o := make(model.Object)
	for n, v := range st.get(k, key) {
		o[n] = v
	}
	for n, v := range fields {
		o[n] = v
	}
	st.objs[id] = o
	if i, ok := st.at[id]; ok {
		for n, v := range fields {
			st.edits[i].Fields[n] = v
		}
		return
	}
	st.at[id] = len(st.edits)
	st.edits = append(st.edits, engine.Edit{Kind: k, Op: model.Update, Target: engine.Target{Key: keys}, Fields: fields})
}

func (st *reqState) delete(k *model.Kind, key string, keys model.Object) {
	id := k.Name + "\x00" + key
	st.objs[id] = nil
	delete(st.at, id)
	st.edits = append(st.edits, engine.Edit{Kind: k, Op: model.Delete, Target: engine.Target{Key: keys}})
}

// editsOf computes the engine's edits of the writes on the running
// configuration, in the writer: whether an object exists decides between
// a create and an update, with no window for another commit in between.
func (s *Server) editsOf(v *engine.View, writes []write, r *engine.Request) error {
	st := &reqState{v: v, objs: map[string]model.Object{}, at: map[string]int{}, given: map[string]string{}}
	for _, w := range writes {
		k := w.kind
		if w.oc != nil {
			if err := w.oc.apply(st, k, w.op, w.path); err != nil {
				return err
			}
			continue
		}
		if w.op == opDelete && w.reset == "" && w.sel.wildcard() {
			var dels []model.Object
			err := st.each(k, func(key string, o model.Object) bool {
				if w.sel.matches(keysOf(k, o)) {
					dels = append(dels, o)
				}
				return true
			})
			if err != nil {
				return err
			}
			for _, o := range dels {
				st.delete(k, k.Key(o), engine.KeyFields(k, o))
			}
			continue
		}
		keys, err := keyObject(k, w.sel.keys)
		if err != nil {
			return err
		}
		key, err := engine.KeyOf(k, keys)
		if err != nil {
			return err
		}
		there := st.get(k, key) != nil
		switch {
		case w.op == opDelete && w.reset != "":
			if !there {
				continue // deleting what is not there is no error
			}
			st.update(k, key, keys, model.Object{w.reset: k.Defaults()[w.reset]})
		case w.op == opDelete:
			if there {
				st.delete(k, key, keys)
			}
		default:
			fields, err := parseBody(k, w.body, keys, pathString(w.path))
			if err != nil {
				return err
			}
			if !there {
				if !k.Creatable() {
					return apierr.NotFound(apierr.CodeNotFound, k.Name, "%s: no %s with %s", pathString(w.path), k.Name, k.DescribeKey(key))
				}
				for n, val := range keys {
					fields[n] = val
				}
				st.create(k, key, fields)
				continue
			}
			if w.op == opReplace {
				defaults := k.Defaults()
				for _, f := range k.Fields {
					if _, given := fields[f.Name]; given || f.Key || f.ReadOnly || f.CreateOnly || f.Secret != model.Public {
						continue
					}
					fields[f.Name] = defaults[f.Name]
				}
			}
			for _, f := range k.Keys() {
				delete(fields, f.Name)
			}
			st.update(k, key, keys, fields)
		}
	}
	r.Edits = st.edits
	return nil
}

// parseBody parses the fields given for an object as the REST API parses
// a body (each value read by model.DecodeBody or DecodeValue, or made by
// the OpenConfig mapping); key fields given must agree with the path's.
func parseBody(k *model.Kind, body model.Body, keys model.Object, where string) (model.Object, error) {
	fields, err := k.Parse(body)
	if err != nil {
		return nil, atPath(where, err)
	}
	for n, v := range keys {
		if got, ok := fields[n]; ok && fmt.Sprint(got) != fmt.Sprint(v) {
			return nil, apierr.BadRequest(apierr.CodeKeyChange, k.Name, n, "%s: %s is %v in the path and %v in the value", where, n, v, got)
		}
	}
	return fields, nil
}

// confirmOrCancel ends the wait of the commit made with the extension's
// id (confirms it, or rolls it back now), or gives it a new deadline.
func (s *Server) confirmOrCancel(ctx context.Context, c *gnmi_ext.Commit, info *engine.LogInfo) (*gpb.SetResponse, error) {
	if s.o.History == nil {
		return nil, status.Error(codes.Unimplemented, "confirmed commits are not available")
	}
	id := identityOf(ctx)
	if need := auth.NeedOperator; !id.Role.May(need) {
		err := apierr.New(http.StatusForbidden, apierr.CodeForbidden, "", "", "user %s (%s) may not confirm or cancel a commit; that needs %s", id.Name, id.Role, need)
		s.o.Engine.Log(ctx, meta(ctx, ""), info, err)
		return nil, grpcError(err)
	}
	p := s.o.History.PendingConfirm()
	if p == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "no commit awaits confirmation (commit id %q was confirmed, rolled back, or never made)", c.GetId())
	}
	if p.Comment != commentPrefix+c.GetId() {
		return nil, status.Errorf(codes.InvalidArgument, "commit id %q is not the commit awaiting confirmation (revision %d)", c.GetId(), p.Revision)
	}
	// The commit's fate is for the roles of the kinds it changed, as on
	// REST (history.Confirm, Cancel, SetDeadline check it).
	req := engine.Request{Meta: meta(ctx, ""), Log: info, Allow: id.Caller().MayChange("Revision")}
	var err error
	switch {
	case c.GetConfirm() != nil:
		info.Operation, info.Data = "CONFIRM", fmt.Sprintf(`{"Id":%q,"Revision":%d}`, c.GetId(), p.Revision)
		err = s.o.History.Confirm(ctx, p.Revision, req)
	case c.GetSetRollbackDuration() != nil:
		d, werr := rollbackWait("set_rollback_duration's rollback_duration", c.GetSetRollbackDuration().GetRollbackDuration())
		if werr != nil {
			return nil, werr
		}
		info.Operation, info.Data = "SET_ROLLBACK_DURATION", fmt.Sprintf(`{"Id":%q,"Revision":%d,"Seconds":%g}`, c.GetId(), p.Revision, d.Seconds())
		err = s.o.History.SetDeadline(ctx, p.Revision, d, req)
	default:
		info.Operation, info.Data = "CANCEL", fmt.Sprintf(`{"Id":%q,"Revision":%d}`, c.GetId(), p.Revision)
		req.Meta.Comment = commentPrefix + c.GetId() + cancelledSuffix
		_, err = s.o.History.Cancel(ctx, p.Revision, req)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	return &gpb.SetResponse{Timestamp: time.Now().UnixNano()}, nil
}
