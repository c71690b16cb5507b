package linux

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/frr/frrtest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestIPv4UnnumberedOnLinux: fpPort1 borrows Loopback1's address: the
// kernel has it as a /32, scope global, on fpPort1 (and still on the
// loopback), zebra lists it as fpPort1's address, and the state says it.
// A relay that runs before fpPort1 borrows is started again when it
// does (dhcrelay reads its interfaces' addresses only at its start). The
// lent address changes in a commit that makes the borrower again; the
// borrower's delete takes the /32 away and leaves the loopback's.
func TestIPv4UnnumberedOnLinux(t *testing.T) {
	frrtest.Need(t)
	l, s, dir := startRelaySwitch(t, "ub", func(o *switchOptions, dir string) {
		o.FRR = &frr.Options{Dir: filepath.Join(dir, "frr")}
	})
	addrs := func(dev string) string {
		return frrtest.Run(t, "ip", "-n", l.sw, "-4", "-o", "addr", "show", "dev", dev)
	}
	zebra := func() string {
		return frrtest.Run(t, "ip", "netns", "exec", l.sw, "vtysh", "--vty_socket", filepath.Join(dir, "frr"), "-c", "show interface fpPort1")
	}

	// The relay runs first, its clients behind fpPort2, its server
	// behind fpPort1, which has no address yet.
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
		s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.1/32"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.2.1/24"}),
		s.edit(backend.Update, "DhcpRelayGlobal", model.Object{"Enable": true}),
		s.edit(backend.Create, "DhcpRelayIntf", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"10.0.9.9"}}),
	)
	relay := s.be.DHCPRelay()
	before := relay.Pid("default")
	if before == 0 {
		t.Fatal("no dhcrelay runs")
	}
	if got := addrs("fpPort1"); strings.Contains(got, "inet ") {
		t.Fatalf("fpPort1 has an address before it borrows one: %s", got)
	}

	s.mustCommit(s.edit(backend.Create, "IPv4Unnumbered", model.Object{"IntfRef": "fpPort1", "Interface": "Loopback1"}))
	if got := addrs("fpPort1"); !strings.Contains(got, "inet 10.255.0.1/32 scope global fpPort1") {
		t.Errorf("fpPort1 does not carry Loopback1's address as a /32 of scope global: %q", got)
	}
	if got := addrs("lo"); !strings.Contains(got, "10.255.0.1/32") {
		t.Errorf("Loopback1's address left the loopback: %q", got)
	}
	var z string
	if !eventually(10*time.Second, func() bool { z = zebra(); return strings.Contains(z, "inet 10.255.0.1/32") }) {
		t.Errorf("zebra does not list fpPort1's borrowed address:\n%s", z)
	}
	st := s.stateOf("IPv4Unnumbered", model.Object{"IntfRef": "fpPort1"})
	if st["IpAddr"] != "10.255.0.1/32" || st["OperState"] != "UP" {
		t.Errorf("the state: %v, want IpAddr 10.255.0.1/32, OperState UP", st)
	}
	if after := relay.Pid("default"); after == before || after == 0 {
		t.Errorf("dhcrelay (pid %d, was %d) was not started again when its upstream fpPort1 got an address", after, before)
	}

	// The lent address changes with its borrower made again.
	s.mustCommit(
		s.edit(backend.Delete, "IPv4Unnumbered", model.Object{"IntfRef": "fpPort1"}),
		s.edit(backend.Update, "IPv4Intf", model.Object{"IntfRef": "Loopback1", "IpAddr": "10.255.0.7/32"}),
		s.edit(backend.Create, "IPv4Unnumbered", model.Object{"IntfRef": "fpPort1", "Interface": "Loopback1"}),
	)
	if got := addrs("fpPort1"); !strings.Contains(got, "inet 10.255.0.7/32 scope global fpPort1") || strings.Contains(got, "10.255.0.1/") {
		t.Errorf("after the renumbering fpPort1 has %q, want 10.255.0.7/32 alone", got)
	}

	s.mustCommit(s.edit(backend.Delete, "IPv4Unnumbered", model.Object{"IntfRef": "fpPort1"}))
	if got := addrs("fpPort1"); strings.Contains(got, "inet ") {
		t.Errorf("fpPort1 keeps an address after its IPv4Unnumbered is deleted: %q", got)
	}
	if got := addrs("lo"); !strings.Contains(got, "10.255.0.7/32") {
		t.Errorf("the loopback lost its address with the borrower: %q", got)
	}
}
