package gnmi

import (
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// TestOpenConfigRoutingPolicy: a PolicyPrefixSet and a PolicyDefinition
// read as openconfig-routing-policy's prefix set (its prefixes keyed by
// ip-prefix and masklength-range, exact or lo..hi) and policy definition
// (its statements by name).
func TestOpenConfigRoutingPolicy(t *testing.T) {
	fx := start(t, Options{})
	f := fx.f
	f.MustApply(
		f.Edit(backend.Create, "PolicyPrefixSet", model.Object{"Name": "LOOPS", "PrefixList": []model.Object{
			{"Prefix": "10.255.0.0/16", "MaskLengthRange": "32-32"}, {"Prefix": "192.0.2.0/24", "MaskLengthRange": "exact"}}}),
		f.Edit(backend.Create, "PolicyCondition", model.Object{"Name": "IS-LOOP", "ConditionType": "MatchDstIpPrefix", "PrefixSet": "LOOPS"}),
		f.Edit(backend.Create, "PolicyStmt", model.Object{"Name": "TAKE", "Conditions": []string{"IS-LOOP"}, "Action": "permit"}),
		f.Edit(backend.Create, "PolicyDefinition", model.Object{"Name": "LEAF", "Priority": int64(1),
			"StatementList": []model.Object{{"Priority": int64(10), "Statement": "TAKE"}}}),
	)
	got := ocGet(t, fx, "/routing-policy")
	set := "/routing-policy/defined-sets/prefix-sets/prefix-set[name=LOOPS]"
	for path, want := range map[string]string{
		set + "/state/name": `"LOOPS"`,
		set + "/prefixes/prefix[ip-prefix=10.255.0.0/16][masklength-range=32..32]/state/masklength-range":            `"32..32"`,
		set + "/prefixes/prefix[ip-prefix=192.0.2.0/24][masklength-range=exact]/state/ip-prefix":                     `"192.0.2.0/24"`,
		"/routing-policy/policy-definitions/policy-definition[name=LEAF]/statements/statement[name=TAKE]/state/name": `"TAKE"`,
	} {
		if got[path] != want {
			t.Errorf("%s: %q, want %s\n(all: %v)", path, got[path], want, got)
		}
	}
}
