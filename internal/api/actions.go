package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// Actions are declared in the model like kinds (class Action: fields, the
// role that may run them, Self, DryRunnable) and each has one handler,
// registered here by name. The REST server parses, defaults and validates
// the fields, checks who may run it (Self included), answers a dry run of
// an action that cannot report one, and calls the handler; it has no
// knowledge of any action by name.

// ActionCall is one run of an action.
type ActionCall struct {
	Kind *model.Kind
	// Fields are parsed, defaulted and validated by the model.
	Fields model.Object
	// DryRun: report what the action would do, doing nothing. Only for an
	// action declared DryRunnable.
	DryRun bool
	Meta   engine.Meta
	// Log is where the handler records its result in the config log
	// (engine.Log, engine.LogSuccess, or a commit's Request.Log); nil on a
	// dry run.
	Log *engine.LogInfo
}

// ActionResult is an action's answer: its body, and the revision it made
// (0 for none), which the response's ETag carries.
type ActionResult struct {
	Body     []byte
	Revision uint64
}

// ActionHandler runs one action.
type ActionHandler func(ctx context.Context, call ActionCall) (ActionResult, error)

// HandleAction registers the handler of the declared action name. Call it
// before serving; Check reports actions without a handler.
func (s *Server) HandleAction(name string, h ActionHandler) {
	if s.actions == nil {
		s.actions = map[string]ActionHandler{}
	}
	s.actions[name] = h
}

// Check reports what the declarations ask for and this server cannot
// serve: an action without a handler, a handler of no declared action, a
// state kind the service fills (model.SourceService) without its source.
// The service checks it before it listens; a missing one is named.
func (s *Server) Check() error {
	for _, k := range s.reg.Kinds() {
		switch {
		case k.Class == model.Action && s.actions[k.Name] == nil:
			return fmt.Errorf("action %s has no handler", k.Name)
		case k.Class == model.State && k.Source == model.SourceService && s.states[k.Name] == nil:
			return fmt.Errorf("state kind %s is declared as filled by the service, which has no source for it", k.Name)
		}
	}
	for _, name := range sortedKeys(s.actions) {
		if k := s.reg.Named(name); k == nil || k.Class != model.Action {
			return fmt.Errorf("a handler is registered for %s, which is not a declared action", name)
		}
	}
	for _, name := range sortedKeys(s.states) {
		if k := s.reg.Named(name); k == nil || k.Class != model.State || k.Source != model.SourceService {
			return fmt.Errorf("a state source is registered for %s, which is not a state kind declared with Source %q", name, model.SourceService)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// action serves POST /action/<Action>.
func (q *request) action() error {
	fields, err := q.kind.Parse(q.body)
	if err == nil {
		err = q.kind.RequireFields(fields)
	}
	obj := q.kind.Defaults()
	if err == nil {
		for n, v := range fields {
			obj[n] = v
		}
		err = q.kind.Validate(obj)
	}
	if err == nil {
		err = checkSelf(q.r.Context(), q.kind, obj)
	}
	var dry bool
	if err == nil {
		dry, err = dryRun(q.r)
	}
	if h := q.r.Header.Get("If-Match"); err == nil && h != "" {
		// An action has no ETag, so the precondition is false (RFC 9110);
		// ignoring it would run the action whatever the client expected.
		err = apierr.New(http.StatusPreconditionFailed, apierr.CodePrecondition, q.kind.Name, "", "If-Match %s on an action: an action has no ETag to match; to act only on a known configuration, stage the change in a candidate and commit it with If-Match set to the running revision", h)
	}
	h := q.s.actions[q.kind.Name]
	switch {
	case err != nil:
	case dry && !q.kind.DryRunnable:
		// Nothing to report beyond the checks above, which passed.
		q.send(http.StatusOK, []byte(`{"Result":"Success","DryRun":true,"Changes":[]}`))
		return nil
	case h == nil:
		err = apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented, q.kind.Name, "", "the %s action is not available in this build of swmgr yet", q.kind.Name)
	default:
		res, herr := h(q.r.Context(), ActionCall{Kind: q.kind, Fields: obj, DryRun: dry, Meta: q.meta, Log: q.info})
		if herr != nil {
			return herr // the handler logged it
		}
		if res.Revision != 0 {
			q.w.Header().Set("ETag", engine.ETag(res.Revision))
			obs.SetRevision(q.w, res.Revision)
		}
		q.send(http.StatusOK, res.Body)
		return nil
	}
	q.s.eng.Log(q.r.Context(), q.meta, q.info, err)
	return err
}

// The actions of the engine itself (the history's rollback, the config
// log's clearing); the accounts provider's (UserPasswordAction) and the
// configuration lifecycle's (package lifecycle) are bound by the service.
func (s *Server) engineActions() {
	s.HandleAction(model.ActionRollback, s.rollback)
	s.HandleAction(model.ActionClearConfigLog, s.clearConfigLog)
}

// rollback makes a commit that restores the configuration as it was after
// a revision.
func (s *Server) rollback(ctx context.Context, c ActionCall) (ActionResult, error) {
	out, err := s.hist.Rollback(ctx, uint64(c.Fields.Int("Revision")), engine.Request{Meta: c.Meta, Log: c.Log, DryRun: c.DryRun, Allow: allowKinds(ctx, c.Kind.Name)})
	if err != nil {
		return ActionResult{}, err // logged
	}
	if c.DryRun {
		return ActionResult{Body: dryRunBody(out)}, nil
	}
	return ActionResult{Body: mustJSON(map[string]any{"Result": "Success", "Revision": out.Revision, "Changes": nonNil(out.Diffs)}), Revision: out.Revision}, nil
}

func (s *Server) clearConfigLog(ctx context.Context, c ActionCall) (ActionResult, error) {
	if err := s.eng.ClearLog(ctx, c.Meta, c.Log); err != nil {
		return ActionResult{}, err
	}
	return ActionResult{Body: []byte(`{"Result":"Success"}`)}, nil
}

// UserPasswordAction is the accounts provider's action: it sets a user's
// password in acc, the accounts the User kind is bound to; who may (an
// admin, or the user itself) is declared on the action and checked before.
func UserPasswordAction(eng *engine.Engine, acc accounts.Accounts) ActionHandler {
	return func(ctx context.Context, c ActionCall) (ActionResult, error) {
		if err := users.SetPassword(ctx, eng, acc, c.Fields.Str("Name"), c.Fields.Str("Password"), c.Meta, c.Log); err != nil {
			return ActionResult{}, err // logged
		}
		return ActionResult{Body: []byte(`{"Result":"Success"}`)}, nil
	}
}
