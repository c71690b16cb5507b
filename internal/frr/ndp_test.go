package frr

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestRAIntervalsRenderParseDiff: the intervals are zebra's lines, read
// back from its interface blocks (other lines and other interfaces' blocks
// left alone), and the diff sends only what differs.
func TestRAIntervalsRenderParseDiff(t *testing.T) {
	running := strings.Join([]string{
		"frr version 8.4.4",
		"interface eth1",
		" ipv6 nd ra-interval 7",
		" ipv6 nd ra-lifetime 100",
		"exit",
		"!",
		"interface eth2",
		" description not ours",
		"exit",
		"interface eth3 vrf red",
		" ipv6 nd ra-interval 30",
		"exit",
		"router bgp 65001",
		" ipv6 nd ra-interval 9",
		"exit",
	}, "\n")
	got := parseRAIntervals(running)
	if want := map[string]string{"eth1": "ipv6 nd ra-interval 7", "eth3": "ipv6 nd ra-interval 30"}; !maps.Equal(got, want) {
		t.Fatalf("parsed %q, want %q", got, want)
	}
	want, err := renderRAIntervals([]RAInterval{{Interface: "eth1", Seconds: 7}, {Interface: "eth2", Seconds: 60}})
	if err != nil {
		t.Fatal(err)
	}
	cmds := diffRAIntervals(got, want)
	if w := []string{"interface eth2", " ipv6 nd ra-interval 60", "exit", "interface eth3", " no ipv6 nd ra-interval", "exit"}; !slices.Equal(cmds, w) {
		t.Errorf("diff %q, want %q", cmds, w)
	}
	if cmds := diffRAIntervals(want, want); len(cmds) != 0 {
		t.Errorf("nothing changed, yet %q", cmds)
	}
	for _, bad := range [][]RAInterval{
		{{Interface: "eth1", Seconds: 0}},
		{{Interface: "eth1", Seconds: 1801}},
		{{Interface: "eth1\n no router bgp", Seconds: 5}},
		{{Interface: "", Seconds: 5}},
		{{Interface: "eth1", Seconds: 5}, {Interface: "eth1", Seconds: 6}},
	} {
		if _, err := renderRAIntervals(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
		if err := (Config{RAIntervals: bad}).Validate(); err == nil {
			t.Errorf("Validate accepted %v", bad)
		}
	}
}
