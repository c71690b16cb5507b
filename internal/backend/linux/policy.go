package linux

import (
	"cmp"
	"slices"
	"time"

	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// Routing policy on the Linux backend: PolicyPrefixSet, PolicyCondition,
// PolicyStmt and PolicyDefinition are FRR's prefix-lists and route-maps,
// part of the one FRR configuration BGP's kinds make (the same stage of
// the Tx, sent once per apply: a policy and the neighbor that starts to
// name it reach FRR in one round, and FRR's own refusal undoes both).

// policyKinds are the policy kinds, each keyed by its Name.
var policyKinds = []string{"PolicyPrefixSet", "PolicyCondition", "PolicyStmt", "PolicyDefinition"}

// policyDriver stages a policy object; FRR gets it with the BGP
// configuration (flushBGP), where what FRR cannot express is refused.
func policyDriver(kind string) *driver {
	return &driver{
		check: func(*Backend, changeView) error { return nil }, // the model's checks and constraints say it all
		ensure: func(b *Backend, tx *Tx, after, _ model.Object) error {
			st := b.bgpStage(tx, kind)
			if st[kind] == nil {
				st[kind] = map[string]model.Object{}
			}
			st[kind][after.Str("Name")] = after.Clone()
			return nil
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			delete(b.bgpStage(tx, kind)[kind], before.Str("Name"))
			return nil
		},
	}
}

// policiesOf maps the staged policy objects to FRR's, in name order.
func policiesOf(objs map[string]map[string]model.Object) frr.Policies {
	var p frr.Policies
	for _, name := range sortedKeys(objs["PolicyPrefixSet"]) {
		s := frr.PrefixSet{Name: name}
		for _, e := range objs["PolicyPrefixSet"][name].Records("PrefixList") {
			s.Entries = append(s.Entries, frr.PrefixEntry{Prefix: e.Str("Prefix"), MaskLengthRange: e.Str("MaskLengthRange")})
		}
		p.PrefixSets = append(p.PrefixSets, s)
	}
	for _, name := range sortedKeys(objs["PolicyCondition"]) {
		c := objs["PolicyCondition"][name]
		p.Conditions = append(p.Conditions, frr.Condition{Name: name, Type: c.Str("ConditionType"), Protocol: c.Str("Protocol"),
			IpPrefix: c.Str("IpPrefix"), MaskLengthRange: c.Str("MaskLengthRange"), PrefixSet: c.Str("PrefixSet")})
	}
	for _, name := range sortedKeys(objs["PolicyStmt"]) {
		s := objs["PolicyStmt"][name]
		p.Statements = append(p.Statements, frr.Statement{Name: name, Conditions: s.List("Conditions"), Action: s.Str("Action"),
			MatchAny: s.Str("MatchConditions") == "any"})
	}
	for _, name := range sortedKeys(objs["PolicyDefinition"]) {
		d := objs["PolicyDefinition"][name]
		list := slices.Clone(d.Records("StatementList"))
		slices.SortStableFunc(list, func(a, b model.Object) int { return cmp.Compare(a.Int("Priority"), b.Int("Priority")) })
		def := frr.Definition{Name: name, MatchAny: d.Str("MatchType") == "any"}
		for _, e := range list {
			def.Statements = append(def.Statements, e.Str("Statement"))
		}
		p.Definitions = append(p.Definitions, def)
	}
	return p
}

// frrApplyTimeout bounds one round of FRR's configuration (and its undo).
// FRR 8.4 enters a prefix-list entry in tens of milliseconds on a loaded
// machine (20 s for 1,000 entries at a load of 15 on two cores, vtysh -f
// alike): a commit of a long list must not be cut off halfway.
const frrApplyTimeout = 3 * time.Minute
