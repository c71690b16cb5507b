package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/obs"
)

// Actions are declared in the model like kinds (class Action: fields, the
// role that may run them, Self, DryRunnable) and run by the provider the
// binding table binds them to (bind.Table.Run), which also checks who may
// run them. The REST server parses, defaults and validates the fields,
// says who calls, and encodes the result; it has no knowledge of any
// action by name.

// action serves POST /action/<Action>.
func (q *request) action() error {
	obj, err := q.kind.ActionFields(q.body)
	var dry bool
	if err == nil {
		dry, err = dryRun(q.r)
	}
	if h := q.r.Header.Get("If-Match"); err == nil && h != "" {
		// An action has no ETag, so the precondition is false (RFC 9110);
		// ignoring it would run the action whatever the client expected.
		err = apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, q.kind.Name, "", "If-Match %s on an action: an action has no ETag to match; to act only on a known configuration, stage the change in a candidate and commit it with If-Match set to the running revision", h)
	}
	if err == nil && q.s.table == nil {
		err = apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, q.kind.Name, "", "the %s action is not available in this build of swmgr yet", q.kind.Name)
	}
	if err != nil {
		q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
		return err
	}
	res, err := q.s.table.Run(q.r.Context(), bind.Call{Kind: q.kind, Fields: obj, DryRun: dry, Caller: callerOf(q.r.Context()), Meta: q.meta, Log: q.info})
	if err != nil {
		if _, notRun := errors.AsType[*bind.NotRun](err); notRun {
			q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
		}
		return err // else the action logged it
	}
	if res.Revision != 0 {
		q.w.Header().Set("ETag", engine.ETag(res.Revision))
		obs.SetRevision(q.w, res.Revision)
	}
	q.send(http.StatusOK, resultBody(res))
	return nil
}

// resultBody is an action's answer as REST sends it: the action's own
// value, or FlexSwitch's plain success with what a dry run or a commit
// changed.
func resultBody(res bind.Result) []byte {
	if res.Value != nil {
		return mustJSON(res.Value)
	}
	body := map[string]any{"Result": "Success"}
	switch {
	case res.DryRun:
		body["DryRun"], body["Changes"] = true, nonNil(res.Changes)
	case res.Changes != nil:
		body["Revision"], body["Changes"] = res.Revision, res.Changes
	}
	return mustJSON(body)
}

// callerOf is who the request's identity is, as the binding table asks.
func callerOf(ctx context.Context) bind.Caller { return auth.FromContext(ctx).Caller() }
