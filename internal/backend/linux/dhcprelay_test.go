package linux

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/dhcrelay"
	"github.com/swmgr/swmgr/internal/dhcrelay/dhcptest"
	"github.com/swmgr/swmgr/internal/model"
)

// TestDHCPRelayOnLinux: a client behind fpPort1 (host 1) gets an address
// of its subnet from a dnsmasq behind fpPort2 (host 2), through the
// dhcrelay the backend runs in the switch's namespace; the request
// reaches dnsmasq with option 82's circuit id fpPort1 (dnsmasq's lease
// script says so), and the relayed packets are counted. Bad input
// changes nothing: an interface that does not exist or has no address, a
// VRF that does not exist, a server that is not unicast, two servers
// lists in one VRF (dhcrelay cannot), each refused with the dhcrelay
// running as it was. A killed dhcrelay is started again.
func TestDHCPRelayOnLinux(t *testing.T) {
	l, s, _ := startRelaySwitch(t, "dr")

	// The server: 10.0.2.1 behind fpPort2, leasing in the clients' subnet.
	l.host(2, "ip", "addr", "add", "10.0.2.1/24", "dev", "eth0")
	l.host(2, "ip", "route", "add", "10.0.1.0/24", "via", "10.0.2.254")
	server := dhcptest.StartServer(t, l.hosts[1], "10.0.1.100", "10.0.1.150", "255.255.255.0")

	s.mustCommit(
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}),
		s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "AdminState": "UP"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24"}),
		s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.2.254/24"}),
		s.edit(backend.Update, "DhcpRelayGlobal", model.Object{"Enable": true}),
		s.edit(backend.Create, "DhcpRelayIntf", model.Object{"IntfRef": "fpPort1", "ServerIp": []string{"10.0.2.1"}}),
	)
	relay := s.be.DHCPRelay()
	if relay.Pid("default") == 0 {
		t.Fatalf("no dhcrelay runs: %+v", s.be.Daemons())
	}

	lease := func(t *testing.T) string { return dhcptest.Lease(t, l.hosts[0], "eth0") }

	t.Run("a client gets an address through the relay, with the port in option 82", func(t *testing.T) {
		if out := lease(t); !strings.Contains(out, "lease of 10.0.1.") || !strings.Contains(out, "obtained from 10.0.2.1") {
			t.Fatalf("udhcpc: %s\ndnsmasq: %s", out, server.Log())
		}
		if ids := server.CircuitIDs(); !slices.Equal(ids, []string{"fpPort1"}) {
			t.Errorf("circuit ids %q in dnsmasq's lease script, want fpPort1; dnsmasq: %s", ids, server.Log())
		}
		st := s.stateOf("DhcpRelayIntf", model.Object{"IntfRef": "fpPort1"})
		relayedOnce(t, st)
		// The client, by its hardware address: all of the interface's
		// requests and answers are its own.
		mac := strings.Fields(l.host(1, "cat", "/sys/class/net/eth0/address"))[0]
		hosts, err := s.be.relayHosts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(hosts) != 1 || hosts[0].Str("MacAddr") != mac || hosts[0].Str("IntfRef") != "fpPort1" ||
			float64(hosts[0].Int("ClientRequests")) != st["TotalDhcpClientRx"] || float64(hosts[0].Int("ClientResponses")) != st["TotalDhcpClientTx"] {
			t.Errorf("DhcpRelayHostDhcpState %v: want client %s on fpPort1 with the interface's counts %v", hosts, mac, st)
		}
		servers, err := s.be.relayServers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(servers) != 1 || servers[0].Str("ServerIp") != "10.0.2.1" || servers[0].Int("Request") < 2 || servers[0].Int("Responses") < 2 {
			t.Errorf("DhcpRelayIntfServerState %v: want 10.0.2.1 with 2 requests and 2 answers or more", servers)
		}
		// A commit that leaves the relay's interfaces as they are neither
		// restarts dhcrelay nor resets its counts.
		pid := relay.Pid("default")
		s.mustCommit(s.edit(backend.Update, "Port", model.Object{"IntfRef": "fpPort2", "Description": "to the DHCP server"}))
		if st := s.stateOf("DhcpRelayIntf", model.Object{"IntfRef": "fpPort1"}); relay.Pid("default") != pid || st["TotalDhcpClientRx"].(float64) < 2 {
			t.Errorf("after a Port change: dhcrelay %d (was %d), %v", relay.Pid("default"), pid, st)
		}
	})

	t.Run("bad input changes nothing", func(t *testing.T) {
		pid, rev := relay.Pid("default"), s.e.Revision()
		for _, c := range []struct {
			name   string
			fields model.Object
			status int
			want   string
		}{
			{"unknown interface", model.Object{"IntfRef": "fpPort9", "ServerIp": []string{"10.0.2.1"}}, http.StatusBadRequest, "fpPort9"},
			{"interface without an address", model.Object{"IntfRef": "Loopback1", "ServerIp": []string{"10.0.2.1"}}, http.StatusBadRequest, "no IPv4 address"},
			{"VRF that does not exist", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"10.0.1.9"}, "Vrf": "tenant1"}, http.StatusBadRequest, "tenant1"},
			{"multicast server", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"224.0.0.9"}}, http.StatusBadRequest, "unicast"},
			{"broadcast server", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"255.255.255.255"}}, http.StatusBadRequest, "unicast"},
			{"unspecified server", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"0.0.0.0"}}, http.StatusBadRequest, "unicast"},
			{"loopback server", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"127.0.0.1"}}, http.StatusBadRequest, "loopback"},
			{"a word for dhcrelay", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"-d"}}, http.StatusBadRequest, "ServerIp"},
			{"other servers in the same VRF", model.Object{"IntfRef": "fpPort2", "ServerIp": []string{"10.0.1.9"}}, http.StatusBadRequest, "same servers"},
		} {
			// Loopback1 exists, without an address, if the commit is taken.
			err := s.commit(s.edit(backend.Create, "LogicalIntf", model.Object{"Name": "Loopback1"}), s.edit(backend.Create, "DhcpRelayIntf", c.fields))
			t.Logf("%s: %v", c.name, err)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != c.status || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %d naming %q", c.name, err, c.status, c.want)
			}
		}
		if s.e.Revision() != rev || relay.Pid("default") != pid {
			t.Errorf("revision %d, dhcrelay %d; want %d and %d as before", s.e.Revision(), relay.Pid("default"), rev, pid)
		}
	})

	t.Run("a killed dhcrelay is started again", func(t *testing.T) {
		syscall.Kill(relay.Pid("default"), syscall.SIGKILL)
		if !eventually(20*time.Second, func() bool {
			for _, d := range s.be.Daemons() {
				if d.Name == "dhcrelay-default" && d.State == "up" && d.RestartCount == 1 {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("dhcrelay not restarted: %+v", s.be.Daemons())
		}
		if out := lease(t); !strings.Contains(out, "obtained from 10.0.2.1") {
			t.Errorf("after the restart, udhcpc: %s", out)
		}
	})

	t.Run("in a VRF, the relay runs where the VRF's interfaces are", func(t *testing.T) {
		s.mustCommit(
			s.edit(backend.Delete, "DhcpRelayIntf", model.Object{"IntfRef": "fpPort1"}),
			s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort1"}),
			s.edit(backend.Delete, "IPv4Intf", model.Object{"IntfRef": "fpPort2"}),
		)
		if relay.Pid("default") != 0 {
			t.Fatalf("with no relay interface, dhcrelay %d still runs", relay.Pid("default"))
		}
		s.mustCommit(
			s.edit(backend.Create, "Vrf", model.Object{"Vrf": "red"}),
			s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort1", "IpAddr": "10.0.1.1/24", "Vrf": "red"}),
			s.edit(backend.Create, "DhcpRelayIntf", model.Object{"IntfRef": "fpPort1", "ServerIp": []string{"10.0.2.1"}, "Vrf": "red"}),
		)
		if relay.Pid("red") == 0 || relay.Pid("default") != 0 {
			t.Fatalf("dhcrelay of red %d, of default %d: want red's only", relay.Pid("red"), relay.Pid("default"))
		}
		// The servers' side joins red after the relay: its answers arrive
		// on an interface the relay had not when it started.
		s.mustCommit(s.edit(backend.Create, "IPv4Intf", model.Object{"IntfRef": "fpPort2", "IpAddr": "10.0.2.254/24", "Vrf": "red"}))
		server.CircuitIDs() // those of the restart's lease
		if out := lease(t); !strings.Contains(out, "obtained from 10.0.2.1") {
			t.Fatalf("udhcpc in red: %s\ndnsmasq: %s", out, server.Log())
		}
		if ids := server.CircuitIDs(); !slices.Equal(ids, []string{"fpPort1"}) {
			t.Errorf("circuit ids %q in dnsmasq's lease script, want fpPort1", ids)
		}
		relayedOnce(t, s.stateOf("DhcpRelayIntf", model.Object{"IntfRef": "fpPort1"}))
	})

	t.Run("disabled, no relay runs and no counter is left", func(t *testing.T) {
		s.mustCommit(s.edit(backend.Update, "DhcpRelayGlobal", model.Object{"Enable": false}))
		if relay.Pid("default") != 0 || relay.Pid("red") != 0 {
			t.Errorf("dhcrelay %d/%d still runs", relay.Pid("default"), relay.Pid("red"))
		}
		// VRF red is a namespace where the kernel has no VRF devices.
		namespaces := []string{l.sw}
		if !s.be.Kernel().Features().VRFDevice {
			namespaces = append(namespaces, l.prefix+"vrf-red")
		}
		for _, ns := range namespaces {
			if out := run(t, "ip", "netns", "exec", ns, "nft", "list", "tables"); strings.Contains(out, "swmgr_dhcp_relay") {
				t.Errorf("counter tables left in %s: %s", ns, out)
			}
		}
	})
}

// relayedOnce checks a relay interface's counts after leases through one
// server: at least a DISCOVER and a REQUEST, an OFFER and an ACK, and
// each packet counted once on its way (every request from a client
// relayed to the server once, every answer to the client once), which a
// count taken twice (a VRF device's packets at the IP hooks) breaks.
func relayedOnce(t *testing.T, st map[string]any) {
	t.Helper()
	n := func(f string) float64 { v, _ := st[f].(float64); return v }
	if n("TotalDhcpClientRx") < 2 || n("TotalDhcpServerRx") < 2 || n("TotalDhcpServerTx") != n("TotalDhcpClientRx") || n("TotalDhcpClientTx") != n("TotalDhcpServerRx") {
		t.Errorf("DhcpRelayIntfState %v: want 2 requests or more from clients, each relayed to the server once, and 2 answers or more, each relayed to the client once", st)
	}
}

// startRelaySwitch starts a switch of two ports, each to a host, that
// runs its DHCP relays with dhcrelay (and its other daemons as tweaks
// say), in dir.
func startRelaySwitch(t *testing.T, area string, tweaks ...func(o *switchOptions, dir string)) (l *lab, s *sw, dir string) {
	t.Helper()
	needProgram(t, "isc-dhcp-relay", "/usr/sbin/dhcrelay")
	needProgram(t, "nftables", "/usr/sbin/nft")
	l = newLabNamed(t, area, 2, KernelOptions{})
	l.k.Close()
	l.k = nil
	dir = daemonDir(t, l.prefix)
	s = startSwitch(t, l, t.TempDir(), func(o *switchOptions) {
		o.DHCPRelay = &dhcrelay.Options{Dir: filepath.Join(dir, "dhcrelay")}
		for _, tweak := range tweaks {
			tweak(o, dir)
		}
	})
	return l, s, dir
}
