package dhcrelay

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/testneed"
)

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// TestValidate: what would reach dhcrelay's or nft's command line as
// anything but a device name, a VRF name or a unicast IPv4 address is
// refused.
func TestValidate(t *testing.T) {
	good := VRF{Downstream: []string{"fpPort1"}, Upstream: []string{"fpPort2"}, Servers: addrs("10.0.2.1")}
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "" valid
	}{
		{"valid", Config{HopCount: 32, VRFs: map[string]VRF{"default": good}}, ""},
		{"no relay", Config{HopCount: 32}, ""},
		{"hop count 0", Config{HopCount: 0}, "hop count"},
		{"hop count 256", Config{HopCount: 256}, "hop count"},
		{"option as a device", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"-d"}, Servers: addrs("10.0.2.1")}}}, "not a network device"},
		{"space in a device", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a b"}, Servers: addrs("10.0.2.1")}}}, "not a network device"},
		{"quote in an upstream", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}, Upstream: []string{`x"`}, Servers: addrs("10.0.2.1")}}}, "not a network device"},
		{"VRF with a space", Config{HopCount: 1, VRFs: map[string]VRF{"red x": good}}, "not a VRF name"},
		{"namespace as an option", Config{HopCount: 1, VRFs: map[string]VRF{"red": {Netns: "-all", Downstream: []string{"a"}, Servers: addrs("10.0.2.1")}}}, "not a namespace"},
		{"both ways", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}, Upstream: []string{"a"}, Servers: addrs("10.0.2.1")}}}, "both"},
		{"no server", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}}}}, "no server"},
		{"multicast server", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}, Servers: addrs("224.0.0.1")}}}, "unicast"},
		{"broadcast server", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}, Servers: addrs("255.255.255.255")}}}, "unicast"},
		{"IPv6 server", Config{HopCount: 1, VRFs: map[string]VRF{"default": {Downstream: []string{"a"}, Servers: addrs("2001:db8::1")}}}, "unicast"},
	} {
		err := c.cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestArgv: the command line of a VRF's dhcrelay: option 82 appended,
// interfaces sorted, a VRF device's bound with ip vrf exec.
func TestArgv(t *testing.T) {
	o := Options{Dhcrelay: "/usr/sbin/dhcrelay", Dir: "/run/swmgr/dhcrelay"}
	v := VRF{Downstream: []string{"vlan20", "fpPort1"}, Upstream: []string{"fpPort3"}, Servers: addrs("10.0.2.1", "10.0.2.2")}
	want := []string{"/usr/sbin/dhcrelay", "-d", "-4", "-pf", "/run/swmgr/dhcrelay/dhcrelay-default.pid", "-a", "-m", "replace", "-c", "8", "-id", "fpPort1", "-id", "vlan20", "-iu", "fpPort3", "10.0.2.1", "10.0.2.2"}
	if got := o.argv("default", v, 8); !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	v.Exec = true
	want[4] = "/run/swmgr/dhcrelay/dhcrelay-red.pid"
	if got := o.argv("red", v, 8); !slices.Equal(got[:4], []string{"ip", "vrf", "exec", "red"}) || !slices.Equal(got[4:], want) {
		t.Errorf("argv in VRF red %q", got)
	}
}

// TestCountersRoundTrip: the counters rulesFor declares, at the clients'
// and the upstream interfaces' own hooks, are those Counters reads back
// from nft's JSON, by interface and server.
func TestCountersRoundTrip(t *testing.T) {
	vrfs := []VRF{{Downstream: []string{"fpPort2", "fpPort1"}, Upstream: []string{"fpPort3"}, Servers: addrs("10.0.2.9", "10.0.2.1")},
		{Downstream: []string{"vlan10"}, Upstream: []string{"fpPort3"}, Servers: addrs("10.0.2.9")}}
	script := rulesFor(vrfs, true)
	for _, want := range []string{
		"chain d0in { type filter hook ingress device \"fpPort1\" priority 0;\n\t\tudp dport 67 counter name rx0 update",
		"chain d1out { type filter hook egress device \"fpPort2\" priority 0;\n\t\tudp sport 67 udp dport 68 counter name tx1 update",
		"chain u0out { type filter hook egress device \"fpPort3\" priority 0;\n\t\tip daddr 10.0.2.1 udp dport 67 counter name req0\n\t\tip daddr 10.0.2.9 udp dport 67 counter name req1\n",
		"chain u0in { type filter hook ingress device \"fpPort3\" priority 0;\n\t\tip saddr 10.0.2.1 udp sport 67 udp dport 67 counter name resp0\n",
		"delete table netdev swmgr_dhcp_relay",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("rules lack %q:\n%s", want, script)
		}
	}
	if strings.Count(script, "device \"fpPort3\"") != 2 {
		t.Errorf("an upstream interface of two VRFs has not one chain per hook:\n%s", script)
	}
	if strings.Contains(rulesFor(vrfs, false), "egress") {
		t.Error("rules without the egress hook use it")
	}
	if got := rulesFor(nil, true); strings.Contains(got, "counter") {
		t.Errorf("no relay, yet counters:\n%s", got)
	}
	for _, want := range []string{"set h0rx { typeof @th,288,48; flags dynamic,timeout; timeout 1d; size 4096; counter; }",
		"udp dport 67 counter name rx0 update @h0rx { @th,288,48 }", "udp sport 67 udp dport 68 counter name tx1 update @h1tx { @th,288,48 }"} {
		if !strings.Contains(script, want) {
			t.Errorf("rules lack %q:\n%s", want, script)
		}
	}
	// What nft 1.0.6 lists of such a table (trimmed), for client
	// 02:00:5e:10:00:01 (2200601362433) on fpPort2.
	raw := []byte(`{"nftables": [{"metainfo": {"version": "1.0.6"}},
		{"table": {"family": "netdev", "name": "swmgr_dhcp_relay", "handle": 1}},
		{"counter": {"family": "netdev", "name": "rx1", "table": "swmgr_dhcp_relay", "handle": 2, "packets": 4, "bytes": 1}},
		{"counter": {"family": "netdev", "name": "tx1", "table": "swmgr_dhcp_relay", "handle": 3, "packets": 3, "bytes": 1}},
		{"counter": {"family": "netdev", "name": "req1", "table": "swmgr_dhcp_relay", "handle": 4, "packets": 2, "bytes": 1}},
		{"set": {"family": "netdev", "name": "h1rx", "table": "swmgr_dhcp_relay", "type": "integer", "handle": 5, "size": 4096, "flags": ["timeout", "dynamic"], "timeout": 86400,
			"elem": [{"elem": {"val": 2200601362433, "timeout": 86400, "expires": 86390, "counter": {"packets": 4, "bytes": 1312}}}], "stmt": [{"counter": null}]}},
		{"set": {"family": "netdev", "name": "h1tx", "table": "swmgr_dhcp_relay", "type": "integer", "handle": 6, "size": 4096, "flags": ["timeout", "dynamic"], "timeout": 86400,
			"elem": [{"elem": {"val": 2200601362433, "timeout": 86400, "expires": 86390, "counter": {"packets": 3, "bytes": 1000}}}], "stmt": [{"counter": null}]}}]}`)
	got, err := parseTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	devs, ups, servers := counterIndex(vrfs)
	if !slices.Equal(devs, []string{"fpPort1", "fpPort2", "vlan10"}) || !slices.Equal(ups, []string{"fpPort3"}) || servers[1] != netip.MustParseAddr("10.0.2.9") {
		t.Fatalf("index %v %v %v", devs, ups, servers)
	}
	if got.counters["rx1"] != 4 || got.counters["tx1"] != 3 || got.counters["req1"] != 2 || len(got.counters) != 3 {
		t.Errorf("counters %v", got.counters)
	}
	if got.sets["h1rx"]["02:00:5e:10:00:01"] != 4 || got.sets["h1tx"]["02:00:5e:10:00:01"] != 3 {
		t.Errorf("clients %v", got.sets)
	}
}

// TestStartEndsAStaleDhcrelay: a dhcrelay of the directory that outlived
// its swmgr (its pid file there) is ended at the start, a process the
// pid file names that is not that dhcrelay is left alone; Apply then runs
// the relay with its counters, Stop ends it and removes them.
func TestStartEndsAStaleDhcrelay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	testneed.Program(t, "isc-dhcp-relay", "/usr/sbin/dhcrelay")
	testneed.Program(t, "nftables", "/usr/sbin/nft")
	ns := fmt.Sprintf("dhcrelay-test-%d", os.Getpid())
	for _, args := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "add", "down0", "type", "veth", "peer", "name", "up0"},
		{"-n", ns, "link", "set", "down0", "up"}, {"-n", ns, "link", "set", "up0", "up"}, {"-n", ns, "addr", "add", "10.9.0.1/24", "dev", "down0"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	opts := Options{Dir: t.TempDir(), Netns: ns}
	v := VRF{Downstream: []string{"down0"}, Upstream: []string{"up0"}, Servers: addrs("10.9.1.1")}

	// Not a dhcrelay: left alone.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	os.WriteFile(filepath.Join(opts.Dir, "dhcrelay-red.pid"), []byte(strconv.Itoa(other.Process.Pid)+"\n"), 0o644)
	// The stale dhcrelay, as an earlier swmgr started it.
	stale := exec.Command("ip", append([]string{"netns", "exec", ns}, (Options{Dir: opts.Dir, Dhcrelay: "/usr/sbin/dhcrelay"}).argv("default", v, 32)...)...)
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { stale.Wait(); close(exited) }()
	t.Cleanup(func() { stale.Process.Kill() })
	os.WriteFile(filepath.Join(opts.Dir, "dhcrelay-default.pid"), []byte(strconv.Itoa(stale.Process.Pid)+"\n"), 0o644)
	// Stale means long running: wait until `ip netns exec` has become
	// dhcrelay (mid-exec, /proc/<pid>/cmdline can read empty, which would
	// make it no dhcrelay of the directory).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", stale.Process.Pid)); strings.TrimSpace(string(comm)) == "dhcrelay" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stale dhcrelay did not start")
		}
	}

	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the stale dhcrelay still runs")
	}
	if other.ProcessState != nil || syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("a process that is no dhcrelay of the directory was killed")
	}

	if err := d.Apply(context.Background(), Config{HopCount: 4, VRFs: map[string]VRF{"default": v}}); err != nil {
		t.Fatal(err)
	}
	pid := d.Pid("default")
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if pid == 0 || !strings.Contains(string(cmdline), "down0") {
		t.Fatalf("dhcrelay %d: %q", pid, cmdline)
	}
	if c, err := d.Counters(context.Background()); err != nil || len(c.ClientRx) != 1 {
		t.Fatalf("counters %+v: %v", c, err)
	}
	// A client's DISCOVER on down0, as nft counts it (the relay drops it:
	// its server is not reachable here).
	if out, err := exec.Command("ip", "netns", "exec", ns, "/bin/busybox", "udhcpc", "-i", "up0", "-n", "-q", "-t", "1", "-T", "1", "-s", "/bin/true").CombinedOutput(); err == nil {
		t.Fatalf("udhcpc got a lease: %s", out)
	}
	c, err := d.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.ClientRx["down0"] < 1 || len(c.Hosts) != 1 || c.Hosts[0].Netdev != "down0" || c.Hosts[0].Requests != c.ClientRx["down0"] {
		t.Errorf("after a DISCOVER: %+v", c)
	}
	d.Stop()
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("dhcrelay %d still runs after Stop", pid)
	}
	if out, _ := exec.Command("ip", "netns", "exec", ns, "nft", "list", "tables").CombinedOutput(); strings.Contains(string(out), counterTable) {
		t.Errorf("counter tables left after Stop: %s", out)
	}
}
