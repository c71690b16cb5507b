package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// Notice is the line an open session prints when the running
// configuration moves under it (a commit of another client or session, an
// unconfirmed commit rolled back by its timer, a rollback), naming the
// pending entries whose objects it changed; "" for the session's own
// commits and for what needs no word. The caller holds the session (no
// command runs meanwhile).
func (s *Session) Notice(ev client.Event) string {
	if ev.Gap != nil {
		return fmt.Sprintf("%% Notice: revisions %d..%d changed the running configuration (they are no longer kept)", ev.Gap.FirstMissing, ev.Gap.LastMissing)
	}
	r := ev.Revision
	if s.own[r.Revision] {
		return ""
	}
	what := fmt.Sprintf("a commit by %s (%s)", r.User, r.Source)
	switch r.Source {
	case "confirm-timeout":
		what = "a commit not confirmed in time, rolled back by its timer"
	case "rollback":
		what = "a rollback by " + r.User
	}
	line := fmt.Sprintf("%% Notice: revision %d is %s: %d change", r.Revision, what, len(r.Changes))
	if len(r.Changes) != 1 {
		line += "s"
	}
	if touched := s.touchedBy([]client.Revision{r}); len(touched) > 0 {
		var cmds []string
		for _, e := range touched {
			cmds = append(cmds, e.cmd)
		}
		line += "; it changed what your pending " + strings.Join(cmds, ", ") + " change (apply says whether they still apply)"
	} else if len(s.pending) > 0 {
		line += "; your pending config applies on top of it"
	}
	return line
}

// touchedBy are the pending object entries whose objects revs changed.
func (s *Session) touchedBy(revs []client.Revision) []*entry {
	changed := map[string]bool{}
	for _, r := range revs {
		for _, c := range r.Changes {
			k := s.cat.reg.Lookup(model.Config, c.Kind)
			if k == nil {
				continue
			}
			ref := c.After
			if ref == nil {
				ref = c.Before
			}
			changed[k.Name+" "+keyString(k, keyOf(k, typed(k, ref)))] = true
		}
	}
	var out []*entry
	for _, e := range s.pending {
		if e.op != opAction && changed[e.kind.Name+" "+keyString(e.kind, keyOf(e.kind, e.key))] && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// staleEntries are the pending object entries that no longer apply to
// the running configuration: among those whose objects commits made since
// the candidate was started changed, the ones a dry run alone on the
// running configuration refuses (a create of what now exists, a delete of
// what is gone), with why. It also returns those revisions.
func (s *Session) staleEntries(objs []*entry) (map[*entry]string, []client.Revision) {
	if s.cand == nil {
		return nil, nil
	}
	ctx, cancel := s.rctx()
	defer cancel()
	info, err := s.cand.Info(ctx)
	if err != nil {
		return nil, nil
	}
	var since []client.Revision
	for r, err := range s.api.Revisions(ctx, client.PageSize(8)) {
		if err != nil || r.Revision <= info.BaseRevision {
			break
		}
		if !s.own[r.Revision] {
			since = append(since, r)
		}
	}
	stale := map[*entry]string{}
	for _, e := range s.touchedBy(since) {
		if !slices.Contains(objs, e) {
			continue
		}
		var err error
		switch e.op {
		case opCreate:
			_, err = s.api.Create(ctx, e.kind.Name, client.Object(e.object()), client.DryRun())
		case opDelete:
			_, err = s.api.DeleteByKey(ctx, e.kind.Name, client.Object(e.key), client.DryRun())
		default:
			_, err = s.api.UpdateByKey(ctx, e.kind.Name, client.Object(e.object()), client.DryRun())
		}
		if err != nil {
			stale[e] = errText(err)
		}
	}
	return stale, since
}
