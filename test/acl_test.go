package test

import (
	"strings"
	"testing"
)

// TestACLBadInputsChangeNothing: each bad ACL or rule is refused with its
// status and a message naming the problem, and the configuration stays as
// it was: a port range on ICMP, an ACL on a LAG's member port, an unknown
// interface, an ACL naming a missing rule, a rule deleted while an ACL
// uses it. A rule no ACL names is fine.
func TestACLBadInputsChangeNothing(t *testing.T) {
	s := startServer(t, "")
	s.expect(t, 201, "POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort3","fpPort4"]}`)
	s.expect(t, 201, "POST", "/config/AclRule", `{"RuleName":"deny-ssh","Proto":"TCP","L4DstPort":22,"Action":"Deny"}`)
	s.expect(t, 201, "POST", "/config/AclRule", `{"RuleName":"unused","Proto":"UDP","L4DstPort":53}`)
	s.expect(t, 201, "POST", "/config/Acl", `{"AclName":"edge","Direction":"IN","IntfList":["fpPort1","PortChannel1"],"RuleNameList":["deny-ssh"]}`)
	snapshot := func() string {
		var b strings.Builder
		for _, p := range []string{"/config/Acls", "/config/AclRules", "/config/LaPortChannels"} {
			b.WriteString(jsonOf(s.listAll(t, p, 100)))
		}
		return b.String()
	}
	before := snapshot()
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"a port range on ICMP", "POST", "/config/AclRule", `{"RuleName":"icmp-range","Proto":"ICMP","L4PortMatch":"RANGE","L4MinPort":1,"L4MaxPort":100}`, 400, "ports are TCP's and UDP's; this rule's Proto is ICMP"},
		{"a port on ICMP", "POST", "/config/AclRule", `{"RuleName":"icmp-port","Proto":"ICMP","L4DstPort":80}`, 400, "ports are TCP's and UDP's"},
		{"ICMP on an IPv6 rule", "POST", "/config/AclRule", `{"RuleName":"v6-icmp","DestIp":"2001:db8::","DestMask":"32","Proto":"ICMP"}`, 400, "ICMP is IPv4's"},
		{"an IPv6 rule in an IPv4 ACL", "PATCH", "/config/AclRule", `{"RuleName":"deny-ssh","SourceIp":"2001:db8::1"}`, 409, "rule deny-ssh is an IPv6 rule; ACL edge is of AclType IP"},
		{"an ACL on a LAG's member port", "PATCH", "/config/Acl", `{"AclName":"edge","Direction":"IN","IntfList":["fpPort3"]}`, 409, "port fpPort3 is a member of PortChannel1"},
		{"an unknown interface", "POST", "/config/Acl", `{"AclName":"x","Direction":"IN","IntfList":["fpPort99"],"RuleNameList":["deny-ssh"]}`, 400, "fpPort99"},
		{"an ACL on a loopback", "POST", "/config/Acl", `{"AclName":"x","Direction":"IN","IntfList":["Loopback1"],"RuleNameList":["deny-ssh"]}`, 400, "not a port, a LAG"},
		{"an ACL naming a missing rule", "POST", "/config/Acl", `{"AclName":"x","Direction":"OUT","IntfList":["fpPort2"],"RuleNameList":["deny-ssh","nosuch"]}`, 400, `AclRule \"nosuch\" does not exist`},
		{"two IP ACLs on one interface and direction", "POST", "/config/Acl", `{"AclName":"x","Direction":"IN","IntfList":["fpPort1"],"RuleNameList":["unused"]}`, 409, "fpPort1 would have two IN ACLs"},
		{"a rule in use deleted", "DELETE", "/config/AclRule", `{"RuleName":"deny-ssh"}`, 409, "edge"},
		{"a control-plane rule's mask without an address", "POST", "/config/ControlPlaneAclRule", `{"Name":"m","Sequence":1,"Service":"SSH","SourceMask":"24"}`, 400, "a mask needs an address"},
	} {
		r := s.expect(t, c.status, c.method, c.path, c.body)
		if !strings.Contains(string(r.raw), c.says) {
			t.Errorf("%s: %s, want a message saying %q", c.name, r.raw, c.says)
		}
		if after := snapshot(); after != before {
			t.Fatalf("%s changed the configuration:\nbefore %s\nafter  %s", c.name, before, after)
		}
	}
	// The counters' view lists the ACL's rule, at 0 on the simulated switch.
	st := s.listAll(t, "/state/AclRules", 100)
	if len(st) != 1 || st[0]["Object"].(map[string]any)["RuleName"] != "deny-ssh" {
		t.Fatalf("AclRuleState: %s", jsonOf(st))
	}
	// The CLI's show, with the ACL's rules in order and their counters.
	out, _ := runCLI(t, s, "show ip access-lists\n")
	mustContain(t, out, " ACL     Dir    Type    Seq    Rule        Action    Packets    Bytes", " edge    IN     IP      1      deny-ssh    Deny      0          0")
	// And as metrics: a state-only kind's series come from its source.
	m := string(scrape(t, s))
	if !strings.Contains(m, `swmgr_acl_rule_matched_packets_total{acl="edge",direction="IN",rule="deny-ssh"} 0`) {
		t.Fatalf("/metrics has no series of the ACL's rule:\n%s", tail(m, 2000))
	}
}

// TestAnsibleACLOverridden: an ACL and its rules as the collection's
// generated modules write them. A first task makes the rules and the ACL
// in one commit; a second, with the rules overridden (an old rule gone, a
// new one in) and the ACL replaced to name the new list, is again one
// commit; a rule still named by the ACL cannot be overridden away: the
// switch refuses the whole task and nothing changes.
func TestAnsibleACLOverridden(t *testing.T) {
	env := ansibleEnv(t)
	s := startServer(t, "")
	inv := inventoryOf(s)
	play := func(rules, list string) string {
		return playHeader + `    - name: acl
      swmgr.switch.swmgr_config:
        resources:
          - kind: AclRule
            state: overridden
            config: ` + rules + `
          - kind: Acl
            state: replaced
            config: [{acl_name: edge, direction: IN, intf_list: [fpPort1], rule_name_list: ` + list + `}]
`
	}
	rules := func() []string {
		var names []string
		for _, e := range s.listAll(t, "/config/AclRules", 100) {
			names = append(names, e["Object"].(map[string]any)["RuleName"].(string))
		}
		return names
	}
	before := runningRevisionOf(t, s)
	r := runPlaybook(t, env, inv, play(`[{rule_name: deny-ssh, proto: TCP, l4_dst_port: 22, action: Deny}, {rule_name: deny-telnet, proto: TCP, l4_dst_port: 23, action: Deny}]`, `[deny-ssh, deny-telnet]`))
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("first run failed: %v", f)
	}
	if got := runningRevisionOf(t, s) - before; got != 1 {
		t.Fatalf("the rules and the ACL took %d commits, want 1", got)
	}
	before = runningRevisionOf(t, s)
	r = runPlaybook(t, env, inv, play(`[{rule_name: deny-ssh, proto: TCP, l4_dst_port: 22, action: Deny}, {rule_name: deny-web, proto: TCP, l4_dst_port: 80, action: Deny}]`, `[deny-web, deny-ssh]`))
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("the override failed: %v", f)
	}
	if got := runningRevisionOf(t, s) - before; got != 1 {
		t.Fatalf("the override took %d commits, want 1", got)
	}
	if got := strings.Join(rules(), ","); got != "deny-ssh,deny-web" {
		t.Fatalf("rules after the override: %s", got)
	}
	st := s.listAll(t, "/state/AclRules", 100)
	if len(st) != 2 || st[0]["Object"].(map[string]any)["RuleName"] != "deny-web" {
		t.Fatalf("AclRuleState after the override: %s", jsonOf(st))
	}
	// Overriding away a rule the ACL goes on naming: refused, nothing changed.
	before = runningRevisionOf(t, s)
	r = runPlaybook(t, env, inv, play(`[{rule_name: deny-ssh, proto: TCP, l4_dst_port: 22, action: Deny}]`, `[deny-web, deny-ssh]`))
	if f := r.failures(); len(f) != 1 || !strings.Contains(f[0], "deny-web") {
		t.Fatalf("overriding away a rule in use: failures %v", f)
	}
	if runningRevisionOf(t, s) != before || strings.Join(rules(), ",") != "deny-ssh,deny-web" {
		t.Fatal("a refused override changed the configuration")
	}
}
