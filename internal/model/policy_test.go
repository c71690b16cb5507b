package model

import (
	"strings"
	"testing"
)

// TestPolicySDKBodies: the bodies FlexSwitch's SDK sends (every field, at
// its default unless given) are accepted and kept in canonical form; what
// the routing daemon could not take is refused naming the field.
func TestPolicySDKBodies(t *testing.T) {
	reg := Builtin()
	good := []struct{ kind, body, field, want string }{
		{"PolicyPrefixSet", `{"Name":"LOOPS","PrefixList":[{"Prefix":"10.255.0.0/16","MaskLengthRange":"32..32"},{"Prefix":"2001:DB8:0::/32","MaskLengthRange":"exact"}]}`,
			"PrefixList", `[{"Prefix":"10.255.0.0/16","MaskLengthRange":"32-32"},{"Prefix":"2001:db8::/32","MaskLengthRange":"exact"}]`},
		{"PolicyCondition", `{"Name":"C1","ConditionType":"MatchDstIpPrefix","Protocol":"","IpPrefix":"10.1.0.0/16","MaskLengthRange":"16-24","PrefixSet":""}`,
			"MaskLengthRange", `"16-24"`},
		{"PolicyStmt", `{"Name":"S1","Conditions":["C1"],"Action":"permit","MatchConditions":"any"}`, "Action", `"permit"`},
		{"PolicyStmt", `{"Name":"S2","Conditions":[]}`, "MatchConditions", `"all"`},
		{"PolicyDefinition", `{"Name":"P1","Priority":1,"StatementList":[{"Priority":10,"Statement":"S1"}],"MatchType":"all","PolicyType":"BGP"}`, "PolicyType", `"BGP"`},
	}
	for _, g := range good {
		k := reg.Lookup(Config, g.kind)
		o, err := create(k, g.body)
		if err != nil {
			t.Errorf("%s %s: %v", g.kind, g.body, err)
			continue
		}
		if got := string(k.AppendJSON(nil, o, false)); !strings.Contains(got, `"`+g.field+`":`+g.want) {
			t.Errorf("%s: %s, want %s %s", g.kind, got, g.field, g.want)
		}
	}
	bad := []struct{ kind, body, field string }{
		{"PolicyPrefixSet", `{"Name":"P S","PrefixList":[{"Prefix":"10.0.0.0/8"}]}`, "Name"},
		{"PolicyPrefixSet", `{"Name":"permit","PrefixList":[{"Prefix":"10.0.0.0/8"}]}`, "Name"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"10.0.0.1/8"}]}`, "Prefix"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"fe80::/10%eth0"}]}`, "Prefix"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"::ffff:10.0.0.0/104"}]}`, "Prefix"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"10.0.0.0/16","MaskLengthRange":"8-24"}]}`, "MaskLengthRange"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"10.0.0.0/16","MaskLengthRange":"24-16"}]}`, "MaskLengthRange"},
		{"PolicyPrefixSet", `{"Name":"P","PrefixList":[{"Prefix":"10.0.0.0/8"},{"Prefix":"10.0.0.0/8","MaskLengthRange":"exact"}]}`, "PrefixList"},
		{"PolicyCondition", `{"Name":"C","ConditionType":"MatchDstIpPrefix"}`, "IpPrefix"},
		{"PolicyCondition", `{"Name":"C","ConditionType":"MatchDstIpPrefix","IpPrefix":"10.0.0.0/8","PrefixSet":"S"}`, "PrefixSet"},
		{"PolicyCondition", `{"Name":"C","ConditionType":"MatchProtocol","Protocol":"STATIC"}`, "ConditionType"},
		{"PolicyCondition", `{"Name":"C","ConditionType":"MatchDstIpPrefix","PrefixSet":"S","MaskLengthRange":"8-24"}`, "MaskLengthRange"},
		{"PolicyStmt", `{"Name":"S","Conditions":["C","C"]}`, "Conditions"},
		{"PolicyStmt", `{"Name":"S","Conditions":["C"],"Action":"accept"}`, "Action"},
		{"PolicyDefinition", `{"Name":"P","Priority":1,"StatementList":[]}`, "StatementList"},
		{"PolicyDefinition", `{"Name":"P","Priority":1,"StatementList":[{"Priority":1,"Statement":"A"},{"Priority":1,"Statement":"B"}]}`, "StatementList"},
		{"PolicyDefinition", `{"Name":"P","Priority":1,"StatementList":[{"Priority":1,"Statement":"A"}],"PolicyType":"OSPF"}`, "PolicyType"},
		{"PolicyDefinition", `{"Name":"P","Priority":1,"StatementList":[{"Priority":1,"Statement":"A route-map x"}]}`, "StatementList"},
	}
	for _, b := range bad {
		_, err := create(reg.Lookup(Config, b.kind), b.body)
		if err == nil || !strings.Contains(err.Error(), b.field) {
			t.Errorf("%s %s: %v; want a refusal naming %s", b.kind, b.body, err, b.field)
		}
	}
}
