package lldpd

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ports := map[string]Mode{"fpPort1": RxAndTx}
	for _, tc := range []struct {
		name string
		c    Config
		ok   bool
	}{
		{"a host name", Config{SystemName: "sw-1.lab", Ports: ports}, true},
		{"no name: the kernel's", Config{Ports: ports}, true},
		{"a space would make two words", Config{SystemName: "sw configure system description x", Ports: ports}, false},
		{"a new line would make two commands", Config{SystemName: "sw\nconfigure system description x", Ports: ports}, false},
		{"a shell's metacharacters", Config{SystemName: "sw;$(id)", Ports: ports}, false},
		{"a quote", Config{SystemName: `sw"`, Ports: ports}, false},
		{"a name of 65 characters", Config{SystemName: strings.Repeat("a", 65), Ports: ports}, false},
		{"a port that is a pattern", Config{Ports: map[string]Mode{"fp*": RxAndTx}}, false},
		{"a port list", Config{Ports: map[string]Mode{"eth0,eth1": RxAndTx}}, false},
		{"an unknown mode", Config{Ports: map[string]Mode{"eth0": "rx-and-tx now"}}, false},
		{"an interval out of range", Config{TxInterval: 3601, Ports: ports}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate(%+v) = %v, want ok %v", tc.c, err, tc.ok)
			}
		})
	}
}

// TestCommands: every value is a word of its own, the ports in order,
// and the pattern names exactly the ports.
func TestCommands(t *testing.T) {
	c := Config{Enable: true, SystemName: "sw1", TxInterval: 5, Ports: map[string]Mode{"fpPort2": Disabled, "fpPort1": RxOnly}}
	var got []string
	for _, cmd := range c.commands() {
		got = append(got, strings.Join(cmd.args, "|"))
	}
	want := []string{
		"configure|lldp|portidsubtype|ifname",
		"configure|system|interface|pattern|fpPort1,fpPort2",
		"configure|lldp|tx-interval|5",
		"configure|system|hostname|sw1",
		"configure|ports|fpPort1|lldp|status|rx-only",
		"configure|ports|fpPort2|lldp|status|disabled",
		"resume",
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	off := Config{}.commands()
	if last := off[len(off)-1].args; !slices.Equal(last, []string{"pause"}) {
		t.Errorf("disabled: last command %v, want pause", last)
	}
	if p := off[1].args; p[len(p)-1] != "!*" {
		t.Errorf("no port: pattern %v, want one that matches none", p)
	}
}

// TestParseNeighbors reads lldpd 1.0.16's json0 output.
func TestParseNeighbors(t *testing.T) {
	b, err := os.ReadFile("testdata/neighbors.json")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := ParseNeighbors(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 1 {
		t.Fatalf("%d neighbors, want 1", len(ns))
	}
	n := ns[0]
	if n.Port != "eth0" || n.ChassisID != "b6:21:7b:ea:bd:46" || n.ChassisIDType != "mac" || n.PortID != "fpPort1" ||
		n.SystemName != "sw1" || n.TTL != 20 || !slices.Equal(n.MgmtAddresses, []string{"fe80::b421:7bff:feea:bd46"}) ||
		!slices.Equal(n.Capabilities, []string{"Bridge", "Router", "Wlan", "Station"}) || !slices.Equal(n.Enabled, []string{"Station"}) ||
		n.VlanID != 10 || !strings.HasPrefix(n.SystemDescr, "Debian") {
		t.Errorf("neighbor %+v", n)
	}
	if _, err := ParseNeighbors([]byte("not json")); err == nil {
		t.Error("garbage parsed")
	}
}
