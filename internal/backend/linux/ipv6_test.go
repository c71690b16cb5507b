package linux

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/model"
)

// dump6 is the IPv6 side of a namespace the lab's dump leaves out: the
// addresses, every table's routes, and the IPv6 settings of the ports.
func (l *lab) dump6(ports ...string) string {
	l.t.Helper()
	out := indexRE.ReplaceAllString(run(l.t, "ip", "-n", l.sw, "-6", "-o", "addr", "show"), "") +
		run(l.t, "ip", "-n", l.sw, "-6", "route", "show", "table", "all")
	for _, p := range ports {
		out += p + " " + run(l.t, "ip", "netns", "exec", l.sw, "sysctl", "-n", "net.ipv6.conf."+p+".disable_ipv6", "net.ipv6.conf."+p+".addr_gen_mode")
	}
	// Lifetimes count down between two dumps.
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "valid_lft") || strings.Contains(line, "inet6") {
			keep = append(keep, strings.Split(line, "\\")[0])
		}
	}
	return strings.Join(keep, "\n")
}

// TestIPv6OnLinux: an IPv6Intf turns IPv6 on for its port with its
// link-local and global addresses, a host pings it, an IPv6Route is in
// the kernel, the IPv6 routing table and the neighbour tables (NDP and
// ARP) are read from the kernel, a commit failing midway leaves the IPv6
// side as it was, and a delete turns IPv6 off again.
func TestIPv6OnLinux(t *testing.T) {
	l := newLab(t, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	ctx := context.Background()
	before := l.dump6("fpPort1")
	s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.2.1/24"}))
	// A commit failing at its last kernel change (the address, after IPv6
	// was turned on and the kernel made the link-local address) leaves
	// nothing of it.
	k := s.be.Kernel()
	k.FailAt = func(n int, what string) error {
		if n == 2 {
			return errors.New("injected")
		}
		return nil
	}
	err := s.commit(s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "2001:db8:1::1/64"}))
	k.FailAt = nil
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("injected failure: %v", err)
	}
	if d := diffLines(before, l.dump6("fpPort1")); d != "" {
		t.Fatalf("a failed commit changed the kernel's IPv6:\n%s", d)
	}

	s.mustCommit(s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "2001:DB8:1:0::1/64"}),
		s.edit(backend.Create, "IPv6Route", model.Object{"DestinationNw": "2001:db8:99::", "NetworkMask": "48",
			"NextHop": []model.Object{{"NextHopIp": "2001:db8:1::2"}}}),
		s.edit(backend.Create, "IPv6Route", model.Object{"DestinationNw": "2001:db8:98::", "NetworkMask": "/48",
			"NextHop": []model.Object{{"NextHopIp": "fe80::2", "NextHopIntRef": "fpPort1"}}}))
	addrs := run(t, "ip", "-n", l.sw, "-6", "addr", "show", "dev", "fpPort1")
	if !strings.Contains(addrs, "inet6 2001:db8:1::1/64") || !strings.Contains(addrs, "inet6 fe80::") {
		t.Errorf("fpPort1's IPv6 addresses: %s", addrs)
	}
	routes := run(t, "ip", "-n", l.sw, "-6", "route", "show")
	for _, want := range []string{"2001:db8:99::/48 via 2001:db8:1::2 dev fpPort1 proto static", "2001:db8:98::/48 via fe80::2 dev fpPort1 proto static"} {
		if !strings.Contains(routes, want) {
			t.Errorf("no %q in the kernel's routes:\n%s", want, routes)
		}
	}

	l.host(1, "sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0")
	l.host(1, "ip", "-6", "addr", "add", "2001:db8:1::2/64", "dev", "eth0", "nodad")
	l.host(2, "ip", "addr", "add", "10.0.2.2/24", "dev", "eth0")
	if !eventually(10*time.Second, func() bool { return l.ping(1, "2001:db8:1::1") }) {
		t.Fatal("host 1 cannot reach 2001:db8:1::1")
	}
	if !eventually(5*time.Second, func() bool { return l.ping(2, "10.0.2.1") }) {
		t.Fatal("host 2 cannot reach 10.0.2.1")
	}
	var st string
	if !eventually(10*time.Second, func() bool {
		st = s.state("IPv6Intf", model.Object{"IntfRef": "fpPort1"})
		return strings.Contains(st, `"OperState":"UP"`) && strings.Contains(st, `"LinkLocalIp":"fe80::`)
	}) {
		t.Errorf("IPv6Intf state: %s", st)
	}
	lists := s.be.Dataplane()
	table, err := lists["IPv6RouteState"].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range table {
		got[r.Str("DestinationNw")] = r.Str("Protocol")
	}
	if got["2001:db8:1::/64"] != "CONNECTED" || got["2001:db8:99::/48"] != "STATIC" || got["fe80::/64"] != "" {
		t.Errorf("IPv6 routing table: %v", got)
	}
	find := func(kind, addr string) model.Object {
		es, err := lists[kind].List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Str("IpAddr") == addr {
				return e
			}
		}
		return nil
	}
	if e := find("NDPEntryState", "2001:db8:1::2"); e == nil || e.Str("Intf") != "fpPort1" || e.Str("MacAddr") == "" {
		t.Errorf("NDP entry of host 1: %v", e)
	}
	if e := find("ArpEntryState", "10.0.2.2"); e == nil || e.Str("Intf") != "fpPort2" || e.Str("MacAddr") == "" {
		t.Errorf("ARP entry of host 2: %v", e)
	}

	// LinkIp false takes the link-local address away; the delete turns
	// IPv6 off.
	s.mustCommit(s.edit(backend.Update, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "LinkIp": false}))
	if addrs := run(t, "ip", "-n", l.sw, "-6", "addr", "show", "dev", "fpPort1"); strings.Contains(addrs, "fe80::") || !strings.Contains(addrs, "2001:db8:1::1/64") {
		t.Errorf("after LinkIp false: %s", addrs)
	}
	s.mustCommit(s.edit(backend.Delete, "IPv6Route", model.Object{"DestinationNw": "2001:db8:99::", "NetworkMask": "ffff:ffff:ffff::"}),
		s.edit(backend.Delete, "IPv6Route", model.Object{"DestinationNw": "2001:db8:98::", "NetworkMask": "ffff:ffff:ffff::"}),
		s.edit(backend.Delete, "IPv6Intf", model.Object{"IntfRef": "fpPort1"}))
	if d := diffLines(before, l.dump6("fpPort1")); d != "" {
		t.Errorf("the deletes left IPv6 behind:\n%s", d)
	}
}
