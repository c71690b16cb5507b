package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
)

// reloadModel is FlexSwitch's reload_cli_model: the word tree is built
// again from the object model's declarations, keeping only the kinds the
// server serves (a CLI newer than its server offers no command the server
// would refuse as unknown), and what the session read from the server at
// start (the host name of the prompt, the factory configuration show run
// compares with) is read again. Pending entries refer to the old tree, so
// it needs none.
func (s *Session) reloadModel() error {
	if s.HasPending() {
		s.printf("ERROR: the pending config must be applied or cleared first (config, then apply or clearunapplied)\n")
		return errFailed
	}
	reg := model.Builtin()
	absent, err := s.unservedKinds(reg)
	if err != nil {
		s.printf("ERROR: reload_cli_model: %s\n", errText(err))
		return errFailed
	}
	cat := newCatalog(reg, absent)
	host := s.host
	if k := cat.hostKind; k != nil {
		ctx, cancel := s.rctx()
		it, err := s.api.Get(ctx, k.Name, nil)
		cancel()
		if err != nil {
			s.printf("ERROR: reload_cli_model: %s\n", errText(err))
			return errFailed
		}
		if h, _ := it.Object[cat.hostField].(string); h != "" {
			host = h
		}
	}
	s.cat, s.host, s.factory = cat, host, nil
	var actions int
	for _, k := range cat.top {
		if k.Class == model.Action {
			actions++
		}
	}
	s.printf("CLI model reloaded: %d configurable kinds, %d shows, %d actions\n", len(cat.configKinds()), len(cat.shows), actions)
	if len(absent) > 0 {
		names := make([]string, 0, len(absent))
		for n := range absent {
			names = append(names, n)
		}
		sort.Strings(names)
		s.printf("Not served by this swmgr, left out: %s\n", strings.Join(names, ", "))
	}
	return nil
}

// unservedKinds asks the server, kind by kind, whether it serves each kind
// of reg: a read of one object of a config or state kind, a dry run of an
// action (which changes nothing and is not logged). A kind the server
// answers unknown_kind for is absent.
func (s *Session) unservedKinds(reg *model.Registry) (map[string]bool, error) {
	absent := map[string]bool{}
	unknown := &client.Error{Code: client.CodeUnknownKind}
	for _, k := range reg.Kinds() {
		ctx, cancel := s.rctx()
		var err error
		switch k.Class {
		case model.Config:
			_, err = s.api.ListPage(ctx, k.Name, 0, 1)
		case model.State:
			for _, e := range s.api.ListState(ctx, strings.TrimSuffix(k.StateName(), "State"), client.PageSize(1)) {
				err = e
				break
			}
		case model.Action:
			_, err = s.api.Action(ctx, k.Name, client.Object{}, client.DryRun())
		}
		cancel()
		var apiErr *client.Error
		switch {
		case err == nil:
		case errors.Is(err, unknown):
			absent[k.Name] = true
		case !errors.As(err, &apiErr):
			return nil, fmt.Errorf("ask about %s: %w", k.Name, err)
		}
	}
	return absent, nil
}
