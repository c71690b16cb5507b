package sim

import (
	"context"
	"maps"
	"slices"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// The simulated switch keeps its ACLs (Acl, AclRule) and the control-plane
// ACL and counts nothing: no packet crosses it, so every rule's counters
// stay 0.

// aclDrivers are the ACL kinds' drivers, merged into Drivers.
func (s *Sim) aclDrivers() map[string]*backend.Driver {
	return map[string]*backend.Driver{
		"AclRule":             {Apply: s.record, Replay: true},
		"Acl":                 {Apply: s.record, Replay: true},
		"ControlPlaneAclRule": {Apply: s.record, Replay: true},
		"AclRuleState":        {List: s.aclRuleStates},
	}
}

// aclRuleStates lists the rules of every applied ACL, in order, with
// counters of 0.
func (s *Sim) aclRuleStates(context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []model.Object{}
	for _, k := range slices.Sorted(maps.Keys(s.applied["Acl"])) {
		acl := s.applied["Acl"][k]
		for i, name := range acl.List("RuleNameList") {
			action := model.AclAllow
			if r := s.applied["AclRule"][name]; r != nil {
				action = r.Str("Action")
			}
			out = append(out, model.Object{"AclName": acl.Str("AclName"), "Direction": acl.Str("Direction"), "RuleName": name, "AclType": acl.Str("AclType"), "Sequence": int64(i + 1), "Action": action, "MatchedPackets": int64(0), "MatchedBytes": int64(0)})
		}
	}
	return out, nil
}
