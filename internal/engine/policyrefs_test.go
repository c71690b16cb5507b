package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestPolicyReferences: the links between routing-policy objects and BGP
// are references, a RecordList element's included (a policy's
// statements, a redistribution's policy): a missing object cannot be
// named, and an object in use cannot be deleted; the refusal names its
// users and changes nothing.
func TestPolicyReferences(t *testing.T) {
	f := enginetest.New(t, t.TempDir())
	set := model.Object{"Name": "LOOPS", "PrefixList": []model.Object{{"Prefix": "10.255.0.0/16", "MaskLengthRange": "32-32"}}}
	cond := model.Object{"Name": "IS-LOOP", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "LOOPS"}
	stmt := model.Object{"Name": "LOOPS-IN", "Conditions": []string{"IS-LOOP"}, "Action": "permit"}
	def := model.Object{"Name": "LEAF", "Priority": int64(1), "StatementList": []model.Object{{"Priority": int64(10), "Statement": "LOOPS-IN"}}}
	f.MustApply(f.Edit(backend.Create, "PolicyPrefixSet", set), f.Edit(backend.Create, "PolicyCondition", cond),
		f.Edit(backend.Create, "PolicyStmt", stmt), f.Edit(backend.Create, "PolicyDefinition", def))
	f.MustApply(f.Edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "ASNum": "65001",
		"Redistribution": []model.Object{{"Sources": "CONNECTED", "Policy": "LEAF"}}}))
	f.MustApply(f.Edit(backend.Create, "BGPv4PeerGroup", model.Object{"Name": "SPINES", "PeerAS": "external", "AdjRIBOutFilter": "LEAF"}))

	cases := []struct {
		name   string
		edit   engine.Edit
		status int
		says   []string
	}{
		{"policy in use by BGPGlobal's redistribution and a peer group", f.Edit(backend.Delete, "PolicyDefinition", model.Object{"Name": "LEAF"}), 409,
			[]string{"PolicyDefinition Name=LEAF is still used by", "BGPGlobal", "BGPv4PeerGroup Name=SPINES"}},
		{"statement in use by a policy's StatementList", f.Edit(backend.Delete, "PolicyStmt", model.Object{"Name": "LOOPS-IN"}), 409,
			[]string{"PolicyStmt Name=LOOPS-IN is still used by PolicyDefinition Name=LEAF"}},
		{"condition in use", f.Edit(backend.Delete, "PolicyCondition", model.Object{"Name": "IS-LOOP"}), 409,
			[]string{"still used by PolicyStmt Name=LOOPS-IN"}},
		{"prefix set in use", f.Edit(backend.Delete, "PolicyPrefixSet", model.Object{"Name": "LOOPS"}), 409,
			[]string{"still used by PolicyCondition Name=IS-LOOP"}},
		{"a missing statement", f.Edit(backend.Create, "PolicyDefinition", model.Object{"Name": "OTHER", "Priority": int64(2),
			"StatementList": []model.Object{{"Priority": int64(1), "Statement": "NOPE"}}}), 400,
			[]string{`StatementList.Statement: PolicyStmt "NOPE" does not exist`}},
		{"a missing redistribution policy", f.Edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default",
			"Redistribution": []model.Object{{"Sources": "STATIC", "Policy": "NOPE"}}}), 400,
			[]string{`Redistribution.Policy: PolicyDefinition "NOPE" does not exist`}},
		{"a missing prefix set", f.Edit(backend.Create, "PolicyCondition", model.Object{"Name": "C2", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "NOPE"}), 400,
			[]string{`PolicyPrefixSet "NOPE" does not exist`}},
		{"a missing filter", f.Edit(backend.Create, "BGPv4Neighbor", model.Object{"NeighborAddress": "10.0.0.2", "PeerAS": "65002", "AdjRIBInFilter": "NOPE"}), 400,
			[]string{`AdjRIBInFilter: PolicyDefinition "NOPE" does not exist`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dump := f.Dump()
			_, err := f.Apply(c.edit)
			if got := enginetest.Status(err); got != c.status {
				t.Fatalf("%v; want status %d", err, c.status)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v; want it to say %q", err, s)
				}
			}
			if !bytes.Equal(f.Dump(), dump) {
				t.Error("a refused commit changed the store")
			}
		})
	}
	// The users gone, the policy goes.
	f.MustApply(f.Edit(backend.Update, "BGPGlobal", model.Object{"Vrf": "default", "Redistribution": []model.Object{}}),
		f.Edit(backend.Delete, "BGPv4PeerGroup", model.Object{"Name": "SPINES"}),
		f.Edit(backend.Delete, "PolicyDefinition", model.Object{"Name": "LEAF"}))
	if f.Exists("PolicyDefinition", "LEAF") {
		t.Error("the policy is still there")
	}
}
