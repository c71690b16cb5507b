package nftacl

import (
	"net/netip"
	"strings"
	"testing"
)

func edge(rules ...Rule) ACL {
	return ACL{Name: "edge", Direction: "IN", Type: IPv4, Devices: []string{"swp1"}, Rules: rules}
}

var denySSH = Rule{Name: "deny-ssh", Src: netip.MustParsePrefix("192.0.2.0/24"), Proto: "TCP", DstPort: 22, PortMatch: "NA", DSCP: -1, Deny: true}

// TestScript: what each transition writes, and what it must not.
func TestScript(t *testing.T) {
	permit := Rule{Name: "permit", DSCP: -1}
	for _, c := range []struct {
		name       string
		old        *Ruleset
		want       Ruleset
		has, lacks []string
	}{
		{"the start replaces the tables whole", nil, Ruleset{ACLs: []ACL{edge(denySSH)}},
			[]string{"table netdev swmgr_acl {}\ndelete table netdev swmgr_acl\n", "delete table inet swmgr_cpacl",
				"add rule netdev swmgr_acl acl_edge_IN ip saddr 192.0.2.0/24 meta l4proto tcp tcp dport 22 counter drop comment \"deny-ssh\"",
				`add chain netdev swmgr_acl hook_IN_swp1 { type filter hook ingress device "swp1" priority 0; policy accept; }`,
				"add rule netdev swmgr_acl hook_IN_swp1 meta protocol ip jump acl_edge_IN"}, nil},
		{"a changed ACL is flushed and filled, its hook kept", &Ruleset{ACLs: []ACL{edge(denySSH)}}, Ruleset{ACLs: []ACL{edge(denySSH, permit)}},
			[]string{"flush chain netdev swmgr_acl acl_edge_IN\n", "counter return comment \"permit\""},
			[]string{"delete table", "hook_IN_swp1"}},
		{"an unchanged ACL is not touched (its counters go on)", &Ruleset{ACLs: []ACL{edge(denySSH)}}, Ruleset{ACLs: []ACL{edge(denySSH)}},
			nil, []string{"acl_edge_IN", "hook_IN_swp1"}},
		{"a deleted ACL: its hook first, then its chain", &Ruleset{ACLs: []ACL{edge(denySSH)}}, Ruleset{},
			[]string{"add chain netdev swmgr_acl hook_IN_swp1\ndelete chain netdev swmgr_acl hook_IN_swp1\nadd chain netdev swmgr_acl acl_edge_IN\nflush chain netdev swmgr_acl acl_edge_IN\ndelete chain netdev swmgr_acl acl_edge_IN\n"}, nil},
		{"egress, IPv6, a range, a log", nil, Ruleset{ACLs: []ACL{{Name: "v6", Direction: "OUT", Type: IPv6, Devices: []string{"PortChannel1"}, Rules: []Rule{
			{Name: "r", Dst: netip.MustParsePrefix("2001:db8::/32"), Proto: "UDP", PortMatch: "RANGE", MinPort: 1000, MaxPort: 2000, DSCP: 46, Deny: true, Log: true}}}}},
			[]string{"hook egress device \"PortChannel1\"", "meta protocol ip6 jump acl_v6_OUT",
				"ip6 daddr 2001:db8::/32 ip6 dscp 46 meta l4proto udp udp dport 1000-2000 limit rate 10/second log prefix \"v6 OUT r: \" comment \"r\"\n",
				"ip6 daddr 2001:db8::/32 ip6 dscp 46 meta l4proto udp udp dport 1000-2000 counter drop comment \"r\"\n"}, nil},
		{"a device name nft's identifiers refuse", nil, Ruleset{ACLs: []ACL{{Name: "a", Direction: "IN", Type: MAC, Devices: []string{"eth@0"}, Rules: []Rule{{Name: "m", SrcMAC: "02:00:00:00:00:01", DSCP: -1, Deny: true}}}}},
			[]string{"hook_IN_eth_x400 { type filter hook ingress device \"eth@0\"", "ether saddr 02:00:00:00:00:01 counter drop"}, nil},
		{"the control plane keeps the loopback first", &Ruleset{}, Ruleset{ControlPlane: []ControlRule{{Name: "ssh", Port: 22, Src: netip.MustParsePrefix("198.51.100.0/24"), Allow: true}, {Name: "rest", Port: 22}}},
			[]string{"input iifname \"lo\" accept comment \"loopback\"\nadd rule inet swmgr_cpacl input ip saddr 198.51.100.0/24 tcp dport 22 counter accept comment \"ssh\"\nadd rule inet swmgr_cpacl input tcp dport 22 counter drop comment \"rest\""}, nil},
	} {
		got := Script(c.old, c.want)
		for _, s := range c.has {
			if !strings.Contains(got, s) {
				t.Errorf("%s: the script lacks %q:\n%s", c.name, s, got)
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(got, s) {
				t.Errorf("%s: the script has %q:\n%s", c.name, s, got)
			}
		}
	}
}

// TestCounters reads nft's JSON listing: counted rules by chain and
// comment; the log rule (no counter) is skipped.
func TestCounters(t *testing.T) {
	listing := `{"nftables":[{"metainfo":{"version":"1.0.6"}},{"table":{"family":"netdev","name":"swmgr_acl"}},
{"rule":{"family":"netdev","table":"swmgr_acl","chain":"acl_edge_IN","handle":3,"comment":"r1","expr":[{"limit":{"rate":10,"per":"second"}},{"log":{"prefix":"edge IN r1: "}}]}},
{"rule":{"family":"netdev","table":"swmgr_acl","chain":"acl_edge_IN","handle":4,"comment":"r1","expr":[{"counter":{"packets":7,"bytes":420}},{"drop":null}]}},
{"rule":{"family":"netdev","table":"swmgr_acl","chain":"acl_edge_IN","handle":5,"comment":"r2","expr":[{"counter":{"packets":1,"bytes":60}},{"return":null}]}}]}`
	got, err := Counters([]byte(listing))
	if err != nil {
		t.Fatal(err)
	}
	if got["acl_edge_IN"]["r1"] != (Count{7, 420}) || got["acl_edge_IN"]["r2"] != (Count{1, 60}) || len(got["acl_edge_IN"]) != 2 {
		t.Fatalf("counters: %v", got)
	}
	if _, err := Counters([]byte("not json")); err == nil {
		t.Fatal("a broken listing was read")
	}
}
