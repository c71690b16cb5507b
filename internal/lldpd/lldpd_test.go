package lldpd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestParseStatistics reads lldpd 1.0.16's `lldpcli -f json0 show
// statistics` of two ports (the counts changed to tell them apart).
func TestParseStatistics(t *testing.T) {
	b, err := os.ReadFile("testdata/statistics.json")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseStatistics(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Counters{
		{Port: "v2", Tx: 7, Rx: 5, RxDiscarded: 1, RxUnrecognized: 2, AgedOut: 0, Inserted: 3, Deleted: 1},
		{Port: "v1", Tx: 4, Rx: 6, AgedOut: 1, Inserted: 1},
	}
	if !slices.Equal(cs, want) {
		t.Errorf("counters %+v, want %+v", cs, want)
	}
	for _, bad := range []string{"not json", `{"lldp":[{"interface":[{"name":"v1","tx":[{"tx":"many"}]}]}]}`} {
		if _, err := ParseStatistics([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// TestStartEndsAStaleLLDPD: an lldpd of the directory that outlived its
// swmgr (its pid in the directory's pid file, holding the socket's lock)
// is ended by the next Start, which then runs and answers; a directory
// lldpcli's user cannot reach is refused with the reason.
func TestStartEndsAStaleLLDPD(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("lldpd needs root")
	}
	for _, p := range []string{"/usr/sbin/lldpd", "/usr/sbin/lldpcli"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run installs Debian's lldpd", p)
			}
			t.Skipf("Debian's lldpd is not installed (%s)", p)
		}
	}
	top, err := os.MkdirTemp("", "lldpd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	// The daemon's parent directory is made traversable; one above it is
	// the operator's to open.
	os.Chmod(top, 0o700)
	os.Mkdir(filepath.Join(top, "run"), 0o755)
	dir := filepath.Join(top, "run", "lldpd")
	d, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		d.Stop()
		t.Fatalf("a directory below %s (mode 0700) was taken: %v", top, err)
	}
	os.Chmod(top, 0o755)

	stale := exec.Command("/usr/sbin/lldpd", "-d", "-u", filepath.Join(dir, "lldpd.socket"), "-L", "/bin/true", "-I", "none")
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { stale.Wait(); close(exited) }()
	t.Cleanup(func() { stale.Process.Kill() })
	os.WriteFile(filepath.Join(dir, "lldpd.pid"), []byte(strconv.Itoa(stale.Process.Pid)+"\n"), 0o644)
	// Up and holding the socket's lock: another lldpd of the socket gives
	// up ("another instance is running").
	for i := 0; exec.Command("/usr/sbin/lldpcli", "-u", filepath.Join(dir, "lldpd.socket"), "show", "configuration").Run() != nil; i++ {
		if i == 100 {
			t.Fatal("the stale lldpd does not answer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Start(ctx); err != nil {
		t.Fatalf("start beside a stale lldpd: %v", err)
	}
	defer d.Stop()
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("the stale lldpd still runs")
	}
	if err := d.Apply(ctx, Config{Enable: true, SystemName: "sw1", Ports: map[string]Mode{"none": RxAndTx}}); err != nil {
		t.Fatalf("the new lldpd does not take its configuration: %v", err)
	}
	// A change whose time has run out fails, and the configuration before
	// it goes back all the same, within a bound of its own.
	late, cancelLate := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelLate()
	err = d.Apply(late, Config{Enable: true, SystemName: "sw2", Ports: map[string]Mode{"none": RxAndTx}})
	if err == nil || strings.Contains(err.Error(), "sending the previous configuration back") {
		t.Fatalf("a change past its deadline: %v (want its own error, the previous configuration sent back)", err)
	}
	if out, err := exec.Command("/usr/sbin/lldpcli", "-u", filepath.Join(dir, "lldpd.socket"), "show", "chassis").CombinedOutput(); err != nil || !strings.Contains(string(out), "sw1") {
		t.Fatalf("after the failed change lldpd announces: %v %s (want sw1)", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "lldpd.pid"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(d.Pid()) {
		t.Errorf("pid file %q, want the new lldpd's %d", b, d.Pid())
	}
}
