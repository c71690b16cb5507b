package frr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// policySample is a policy as FRR 8.4's bgpd prints it (`show
// running-config`, read from a real bgpd): prefix-lists, then route-maps.
const policySample = `router bgp 65001
 no bgp ebgp-requires-policy
 neighbor 10.0.0.2 remote-as 65002
 !
 address-family ipv4 unicast
  maximum-paths 1
  maximum-paths ibgp 1
  neighbor 10.0.0.2 soft-reconfiguration inbound
  neighbor 10.0.0.2 route-map LEAF in
 exit-address-family
exit
!
ip prefix-list LOOPS seq 5 permit 10.255.0.0/16 ge 32 le 32
ip prefix-list LOOPS seq 10 permit 192.0.2.0/24
ip prefix-list cond:DEFAULT seq 5 permit 0.0.0.0/0
!
ipv6 prefix-list LOOPS6 seq 5 permit 2001:db8::/32 le 64
!
route-map LEAF permit 10
 match ip address prefix-list LOOPS
 on-match next
exit
!
route-map LEAF deny 20
 match ip address prefix-list cond:DEFAULT
exit
!
end
`

func samplePolicies() Policies {
	return Policies{
		PrefixSets: []PrefixSet{
			{Name: "LOOPS", Entries: []PrefixEntry{{"10.255.0.0/16", "32-32"}, {"192.0.2.0/24", "exact"}}},
			{Name: "LOOPS6", Entries: []PrefixEntry{{"2001:db8::/32", "32-64"}}},
		},
		Conditions: []Condition{
			{Name: "IS-LOOP", Type: "MatchDstIpPrefix", PrefixSet: "LOOPS"},
			{Name: "DEFAULT", Type: "MatchDstIpPrefix", IpPrefix: "0.0.0.0/0"},
			{Name: "FROM-SPINE", Type: "MatchSrcIpPrefix", IpPrefix: "10.0.0.0/24", MaskLengthRange: "24-32"},
		},
		Statements: []Statement{
			{Name: "LOOPS-IN", Conditions: []string{"IS-LOOP"}, Action: "permit"},
			{Name: "NO-DEFAULT", Conditions: []string{"DEFAULT"}, Action: "deny"},
		},
		Definitions: []Definition{{Name: "LEAF", Statements: []string{"LOOPS-IN", "NO-DEFAULT"}}},
	}
}

// TestRenderPoliciesAsFRRPrintsThem: the rendered policy is the lines a
// real bgpd prints for it, so an unchanged policy sends nothing.
func TestRenderPoliciesAsFRRPrintsThem(t *testing.T) {
	got, err := samplePolicies().render()
	if err != nil {
		t.Fatal(err)
	}
	run := parsePolicies(policySample)
	// The sample has no condition FROM-SPINE's implicit list; every other
	// line is FRR's.
	before, after := diffPolicies(run, got)
	want := []string{"ip prefix-list cond:FROM-SPINE seq 5 permit 10.0.0.0/24 le 32"}
	if !slices.Equal(before, want) || len(after) != 0 {
		t.Errorf("before %q after %q; want before %q and nothing after", before, after, want)
	}
}

func TestPolicyRendering(t *testing.T) {
	cases := []struct {
		name string
		p    Policies
		want []string // lines of the render, prefix-lists then route-maps ("route-map ...", " match ...")
	}{
		{"exact, ge-le, le only, both families",
			Policies{PrefixSets: []PrefixSet{{Name: "P", Entries: []PrefixEntry{{"10.0.0.0/8", ""}, {"10.0.0.0/8", "16-24"}, {"10.0.0.0/8", "8-24"}, {"2001:db8::/32", "exact"}, {"10.0.0.0/8", "8-8"}}}}},
			[]string{"ip prefix-list P seq 5 permit 10.0.0.0/8", "ip prefix-list P seq 10 permit 10.0.0.0/8 ge 16 le 24",
				"ip prefix-list P seq 15 permit 10.0.0.0/8 le 24", "ip prefix-list P seq 20 permit 10.0.0.0/8", "ipv6 prefix-list P seq 5 permit 2001:db8::/32"}},
		{"match any: an entry per condition; any: no on-match next",
			Policies{
				Conditions:  []Condition{{Name: "C1", Type: "MatchSrcIpPrefix", IpPrefix: "10.0.0.0/24"}, {Name: "C2", Type: "MatchDstIpPrefix", IpPrefix: "2001:db8::/48"}},
				Statements:  []Statement{{Name: "S", Conditions: []string{"C1", "C2"}, Action: "permit", MatchAny: true}},
				Definitions: []Definition{{Name: "RM", Statements: []string{"S"}, MatchAny: true}}},
			[]string{"ip prefix-list cond:C1 seq 5 permit 10.0.0.0/24", "ipv6 prefix-list cond:C2 seq 5 permit 2001:db8::/48",
				"route-map RM permit 10", " match ip route-source prefix-list cond:C1",
				"route-map RM permit 20", " match ipv6 address prefix-list cond:C2"}},
		{"match all: one entry; a permit goes on to the next statement",
			Policies{
				Conditions:  []Condition{{Name: "C1", Type: "MatchDstIpPrefix", IpPrefix: "192.0.2.0/24", MaskLengthRange: "24-32"}, {Name: "C2", Type: "MatchSrcIpPrefix", IpPrefix: "10.0.0.0/24"}},
				Statements:  []Statement{{Name: "S", Conditions: []string{"C1", "C2"}, Action: "permit"}, {Name: "ALL", Action: "deny"}},
				Definitions: []Definition{{Name: "RM", Statements: []string{"S", "ALL"}}}},
			[]string{"ip prefix-list cond:C1 seq 5 permit 192.0.2.0/24 le 32", "ip prefix-list cond:C2 seq 5 permit 10.0.0.0/24",
				"route-map RM permit 10", " match ip address prefix-list cond:C1", " match ip route-source prefix-list cond:C2", " on-match next",
				"route-map RM deny 20"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pc, err := c.p.render()
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(pc.prefixLists)
			for _, m := range pc.routeMaps {
				got = append(got, m.header())
				got = append(got, indent(m.lines)...)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestPolicyRefusals: what FRR cannot express, or a name it would read
// as something else, is refused before anything is sent.
func TestPolicyRefusals(t *testing.T) {
	stmt := func(conds ...string) []Statement {
		return []Statement{{Name: "S", Conditions: conds, Action: "permit"}}
	}
	cases := []struct {
		name string
		p    Policies
		want string
	}{
		{"name with a blank", Policies{PrefixSets: []PrefixSet{{Name: "P permit 0.0.0.0/0", Entries: []PrefixEntry{{"10.0.0.0/8", ""}}}}}, "prefix set name"},
		{"name with a newline", Policies{Definitions: []Definition{{Name: "RM\nrouter bgp 1", Statements: []string{"S"}}}, Statements: stmt()}, "policy name"},
		{"colon of the implicit lists", Policies{PrefixSets: []PrefixSet{{Name: "cond:X", Entries: []PrefixEntry{{"10.0.0.0/8", ""}}}}}, "prefix set name"},
		{"host bits", Policies{PrefixSets: []PrefixSet{{Name: "P", Entries: []PrefixEntry{{"10.0.0.1/8", ""}}}}}, "not a network prefix"},
		{"range below the prefix", Policies{PrefixSets: []PrefixSet{{Name: "P", Entries: []PrefixEntry{{"10.0.0.0/16", "8-24"}}}}}, "MaskLengthRange"},
		{"range past the family", Policies{PrefixSets: []PrefixSet{{Name: "P", Entries: []PrefixEntry{{"10.0.0.0/16", "16-33"}}}}}, "MaskLengthRange"},
		{"missing prefix set", Policies{Conditions: []Condition{{Name: "C", Type: "MatchDstIpPrefix", PrefixSet: "NOPE"}}}, `prefix set "NOPE" does not exist`},
		{"missing statement", Policies{Definitions: []Definition{{Name: "RM", Statements: []string{"NOPE"}}}}, `statement "NOPE" does not exist`},
		{"missing condition", Policies{Statements: stmt("NOPE"), Definitions: []Definition{{Name: "RM", Statements: []string{"S"}}}}, `condition "NOPE" does not exist`},
		{"two of a kind under all", Policies{
			Conditions: []Condition{{Name: "A", Type: "MatchDstIpPrefix", IpPrefix: "10.0.0.0/8"}, {Name: "B", Type: "MatchDstIpPrefix", IpPrefix: "11.0.0.0/8"}},
			Statements: stmt("A", "B"), Definitions: []Definition{{Name: "RM", Statements: []string{"S"}}}}, "same kind"},
		{"protocol", Policies{Conditions: []Condition{{Name: "C", Type: "MatchProtocol", Protocol: "STATIC"}}}, "MatchProtocol"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Config{Policies: c.p}.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestPolicyDiffTouchesOnlyWhatChanged: a changed prefix is its one line
// (FRR replaces the entry of that sequence number), and nothing names a
// neighbor: no session is reset by a policy change.
func TestPolicyDiffTouchesOnlyWhatChanged(t *testing.T) {
	running := parseAll(policySample)
	base := func() Config {
		return Config{
			Instances: []Instance{{ASNum: "65001"}},
			Neighbors: []Neighbor{{NeighborAddress: "10.0.0.2", PeerAS: "65002", AdjRIBInFilter: "LEAF", AddPathsRx: true}},
			Policies:  samplePolicies(),
		}
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   []string
	}{
		{"one prefix changed", func(c *Config) { c.Policies.PrefixSets[0].Entries[1].MaskLengthRange = "24-28" },
			[]string{"ip prefix-list LOOPS seq 10 permit 192.0.2.0/24 le 28"}},
		{"one prefix added", func(c *Config) {
			c.Policies.PrefixSets[0].Entries = append(c.Policies.PrefixSets[0].Entries, PrefixEntry{"198.51.100.0/24", "exact"})
		}, []string{"ip prefix-list LOOPS seq 15 permit 198.51.100.0/24"}},
		{"last prefix removed", func(c *Config) { c.Policies.PrefixSets[0].Entries = c.Policies.PrefixSets[0].Entries[:1] },
			[]string{"no ip prefix-list LOOPS seq 10 permit 192.0.2.0/24"}},
		{"statement action changed", func(c *Config) { c.Policies.Statements[1].Action = "permit" },
			[]string{"no route-map LEAF deny 20", "route-map LEAF permit 20", " match ip address prefix-list cond:DEFAULT", " on-match next", "exit"}},
		{"match type any", func(c *Config) { c.Policies.Definitions[0].MatchAny = true },
			[]string{"route-map LEAF permit 10", " no on-match next", "exit"}},
		{"filter dropped, then its policy", func(c *Config) {
			c.Neighbors[0].AdjRIBInFilter = ""
			c.Policies.Definitions = nil
		}, []string{"router bgp 65001", " address-family ipv4 unicast", "no neighbor 10.0.0.2 soft-reconfiguration inbound", "no neighbor 10.0.0.2 route-map LEAF in", " exit-address-family", "exit",
			"no route-map LEAF permit 10", "no route-map LEAF deny 20"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base()
			cfg.Policies.Conditions = cfg.Policies.Conditions[:2] // the sample's
			c.change(&cfg)
			want, err := cfg.renderAll()
			if err != nil {
				t.Fatal(err)
			}
			got := diffAll(running, want)
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestThousandPrefixesDiffOneLine: in a list of 1,000 entries a change to
// one sends one line.
func TestThousandPrefixesDiffOneLine(t *testing.T) {
	var entries []PrefixEntry
	for i := range 1000 {
		entries = append(entries, PrefixEntry{fmt.Sprintf("10.%d.%d.0/24", i/256, i%256), "exact"})
	}
	p := Policies{PrefixSets: []PrefixSet{{Name: "BIG", Entries: entries}}}
	run, err := p.render()
	if err != nil || len(run.prefixLists) != 1000 {
		t.Fatal(len(run.prefixLists), err)
	}
	p.PrefixSets[0].Entries[500].MaskLengthRange = "24-32"
	want, _ := p.render()
	before, after := diffPolicies(run, want)
	if len(before) != 1 || len(after) != 0 || !strings.Contains(before[0], "seq 2505 permit 10.1.244.0/24 le 32") {
		t.Errorf("before %q after %q", before, after)
	}
}
