package linux

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// TestNeighborActionsOnLinux: the ARP and NDP actions on the kernel's
// neighbour tables of the switch, learned from a real host behind fpPort1:
// a refresh has a stale entry confirmed again (the host answers the
// probe: REACHABLE), a delete by address removes that entry, a delete by
// interface every learned one there, permanent entries stay; an address
// with no entry is a 404.
func TestNeighborActionsOnLinux(t *testing.T) {
	l := newLabNamed(t, "nb", 1, KernelOptions{})
	l.k.Close()
	l.k = nil
	s := startSwitch(t, l, t.TempDir())
	ctx := context.Background()
	l.host(1, "sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0")
	l.host(1, "ip", "addr", "add", "10.9.0.2/24", "dev", "eth0")
	l.host(1, "ip", "-6", "addr", "add", "2001:db8:9::2/64", "dev", "eth0", "nodad")
	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.9.0.1/24"}),
		s.edit(backend.Create, "IPv6Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "2001:db8:9::1/64"}),
	)
	reg, actions := model.Builtin(), s.be.DataplaneActions()
	call := func(name string, fields model.Object) error {
		_, err := actions[name].Run(ctx, bind.Call{Kind: reg.Named(name), Fields: fields})
		return err
	}
	state := func(family int, addr string) string {
		t.Helper()
		list, err := s.be.Neighbors(family)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			if o.Str("IpAddr") == addr {
				return o.Str("State")
			}
		}
		return ""
	}
	for _, f := range []struct {
		family                          int
		name, self, host, perm, permMAC string
		refresh, deleteAddr, deleteIntf string
		unknown                         string
	}{
		{netlink.FAMILY_V4, "ARP", "10.9.0.1", "10.9.0.2", "10.9.0.77", "02:00:00:00:00:77", "ArpRefreshByIPv4Addr", "ArpDeleteByIPv4Addr", "ArpDeleteByIfName", "10.9.0.99"},
		{netlink.FAMILY_V6, "NDP", "2001:db8:9::1", "2001:db8:9::2", "2001:db8:9::77", "02:00:00:00:00:77", "NdpRefreshByIPv6Addr", "NdpDeleteByIPv6Addr", "NdpDeleteByIfName", "2001:db8:9::99"},
	} {
		t.Run(f.name, func(t *testing.T) {
			learn := func() {
				t.Helper()
				if !eventually(10*time.Second, func() bool { return l.ping(1, f.self) && state(f.family, f.host) != "" }) {
					t.Fatalf("the switch learned no entry for %s: %s", f.host, run(t, "ip", "-n", l.sw, "neigh", "show"))
				}
			}
			learn()
			run(t, "ip", "-n", l.sw, "neigh", "add", f.perm, "lladdr", f.permMAC, "nud", "permanent", "dev", "fpPort1")
			// Stale, it stays so until traffic or a refresh.
			run(t, "ip", "-n", l.sw, "neigh", "change", f.host, "dev", "fpPort1", "nud", "stale")
			if err := call(f.refresh, model.Object{"IpAddr": f.host}); err != nil {
				t.Fatal(err)
			}
			if !eventually(10*time.Second, func() bool { return state(f.family, f.host) == "REACHABLE" }) {
				t.Errorf("after %s: %s is %s, want REACHABLE (probed, answered)", f.refresh, f.host, state(f.family, f.host))
			}
			if err := call(f.deleteAddr, model.Object{"IpAddr": f.host}); err != nil {
				t.Fatal(err)
			}
			if st := state(f.family, f.host); st != "" {
				t.Errorf("after %s: %s is still there (%s)", f.deleteAddr, f.host, st)
			}
			if err := call(f.deleteAddr, model.Object{"IpAddr": f.unknown}); statusOf(err) != http.StatusNotFound {
				t.Errorf("%s of an address with no entry: %v, want a 404", f.deleteAddr, err)
			}
			learn()
			if err := call(f.deleteIntf, model.Object{"IfName": "fpPort1"}); err != nil {
				t.Fatal(err)
			}
			if st := state(f.family, f.host); st != "" {
				t.Errorf("after %s: %s is still there (%s)", f.deleteIntf, f.host, st)
			}
			if st := state(f.family, f.perm); st != "PERMANENT" {
				t.Errorf("the permanent entry %s: %q, want it kept", f.perm, st)
			}
		})
	}
}
