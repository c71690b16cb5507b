package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// TestServeLinuxBackend runs `serve --backend linux --netns N --port-map F`
// against a namespace with two veth ports: ports are discovered from the
// map, an IPv4Intf lands on the netdev, and what a veth cannot do is a 400
// naming the device.
func TestServeLinuxBackend(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	ns := fmt.Sprintf("swsrv%05d", rand.IntN(100000))
	ip := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("-n", ns, "link", "add", "eth7", "type", "veth", "peer", "name", "eth8")
	portMap := writeFile(t, "# front panel\nfpPort1 eth7\nfpPort2 eth8\n")

	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", backend: "linux", netns: ns, portMap: portMap})
	r := s.req(false, "GET", "/state/Ports", "", "", "")
	s.want(r, 200, "port states")
	if !strings.Contains(r.raw, `"Name":"fpPort1"`) || !strings.Contains(r.raw, `"Name":"fpPort2"`) || strings.Contains(r.raw, "fpPort3") {
		t.Fatalf("ports: %s", r.raw)
	}
	s.want(s.req(false, "PATCH", "/config/Port", "", "", `{"IntfRef":"fpPort1","AdminState":"UP","Mtu":9000}`), 200, "port up")
	s.want(s.req(false, "POST", "/config/IPv4Intf", "", "", `{"IntfRef":"fpPort1","IpAddr":"192.0.2.1/24"}`), 201, "address")
	if out := ip("-n", ns, "-o", "addr", "show", "dev", "eth7"); !strings.Contains(out, "192.0.2.1/24") {
		t.Errorf("address not on eth7: %s", out)
	}
	if out := ip("-n", ns, "-o", "link", "show", "dev", "eth7"); !strings.Contains(out, "mtu 9000") || !strings.Contains(out, ",UP") {
		t.Errorf("eth7: %s", out)
	}
	// A loopback with an address (a dummy device, or the address on lo
	// where the kernel has no dummies) and a static route: both in the
	// kernel, the route in state/IPv4Routes read from the kernel.
	s.want(s.req(false, "POST", "/config/LogicalIntf", "", "", `{"Name":"Loopback1","Type":"Loopback"}`), 201, "loopback")
	s.want(s.req(false, "POST", "/config/IPv4Intf", "", "", `{"IntfRef":"Loopback1","IpAddr":"198.18.0.1/32"}`), 201, "loopback address")
	if out := ip("-n", ns, "-o", "addr", "show"); !strings.Contains(out, "198.18.0.1/32") {
		t.Errorf("loopback address not in the kernel: %s", out)
	}
	s.want(s.req(false, "POST", "/config/IPv4Route", "", "", `{"DestinationNw":"198.51.100.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"192.0.2.2"}]}`), 201, "route")
	if out := ip("-n", ns, "route", "show", "198.51.100.0/24"); !strings.Contains(out, "via 192.0.2.2 dev eth7 proto static") {
		t.Errorf("route not in the kernel: %q", out)
	}
	r = s.req(false, "GET", "/state/IPv4Routes", "", "", "")
	if s.want(r, 200, "routing table"); !strings.Contains(r.raw, `"DestinationNw":"198.51.100.0/24"`) || !strings.Contains(r.raw, `"NextHopIntRef":"fpPort1"`) || !strings.Contains(r.raw, `"Protocol":"CONNECTED"`) {
		t.Errorf("state/IPv4Routes: %s", r.raw)
	}
	s.want(s.req(false, "DELETE", "/config/IPv4Route", "", "", `{"DestinationNw":"198.51.100.0","NetworkMask":"255.255.255.0"}`), 200, "route delete")
	if out := ip("-n", ns, "route", "show", "198.51.100.0/24"); out != "" {
		t.Errorf("route left in the kernel: %q", out)
	}
	r = s.req(false, "PATCH", "/config/Port", "", "", `{"IntfRef":"fpPort2","Speed":25000}`)
	s.want(r, 400, "speed on a veth")
	if !strings.Contains(r.raw, "fpPort2 (netdev eth8) cannot change Speed 25000") {
		t.Errorf("refusal does not name the device and capability: %s", r.raw)
	}
	// Someone deletes the address by hand: swmgr puts it back and says so
	// in the config log.
	ip("-n", ns, "addr", "del", "192.0.2.1/24", "dev", "eth7")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(ip("-n", ns, "-o", "addr", "show", "dev", "eth7"), "192.0.2.1/24") {
		if time.Now().After(deadline) {
			t.Fatal("the deleted address was not put back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		r = s.req(false, "GET", "/state/ConfigLogs", "", "", "")
		if strings.Contains(r.raw, `"Operation":"RECONCILE"`) && strings.Contains(r.raw, "add address 192.0.2.1/24 to eth7") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no config log entry of the reconciliation: %s", r.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r = s.req(false, "GET", "/state/SystemParam", "", "", "")
	if !strings.Contains(r.raw, "VRFs as") {
		t.Errorf("SystemParam state does not say how VRFs are made: %s", r.raw)
	}
}

// TestServeLinuxBGP: `serve --backend linux --bgp frr` starts FRR in the
// switch namespace; BGP configured over REST peers with a second FRR the
// test runs behind fpPort1, and the REST state shows the session and the
// learned prefix while the kernel has the route.
func TestServeLinuxBGP(t *testing.T) {
	lab := frrtest.New(t, frrtest.Options{Prefix: "rtsrv", SwitchPort: "rtp1", PeerPort: "eth0", Subnet: "10.221.0", Announce: "198.51.100.1/24"})
	sw, dir := lab.SwitchNS, lab.Dir
	ip := func(args ...string) string { t.Helper(); return frrtest.Run(t, append([]string{"ip"}, args...)...) }
	portMap := writeFile(t, "fpPort1 rtp1\n")
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), https: "-", backend: "linux", netns: sw, portMap: portMap,
		daemons: daemonFlags{bgp: "frr", frrDir: dir + "/frr"}})
	s.want(s.req(false, "PATCH", "/config/Port", "", "", `{"IntfRef":"fpPort1","AdminState":"UP"}`), 200, "port up")
	s.want(s.req(false, "POST", "/config/IPv4Intf", "", "", `{"IntfRef":"fpPort1","IpAddr":"10.221.0.1/30"}`), 201, "address")
	s.want(s.req(false, "PATCH", "/config/BGPGlobal", "", "", `{"Vrf":"default","ASNum":"65001","RouterId":"10.221.0.1"}`), 200, "BGPGlobal")
	s.want(s.req(false, "POST", "/config/BGPv4Neighbor", "", "", `{"NeighborAddress":"10.221.0.2","PeerAS":"65002","HoldTime":9,"KeepaliveTime":3,"ConnectRetryTime":1}`), 201, "neighbor")
	deadline := time.Now().Add(40 * time.Second)
	for {
		r := s.req(false, "GET", "/state/BGPv4Neighbors", "", "", "")
		kernel := ip("-n", sw, "route", "show", "198.51.100.0/24")
		if strings.Contains(r.raw, `"SessionState":6`) && !strings.Contains(r.raw, `"TotalPrefixes":0`) && strings.Contains(kernel, "proto bgp") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Established session with a learned prefix: %s\nkernel: %q", r.raw, kernel)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// SystemStatus lists the daemons swmgr supervises.
	r := s.req(false, "GET", "/state/SystemStatus", "", "", "")
	for _, d := range []string{`"Name":"zebra"`, `"Name":"bgpd"`} {
		if !strings.Contains(r.raw, d) {
			t.Errorf("SystemStatus FlexDaemons lacks %s: %s", d, r.raw)
		}
	}
	if !strings.Contains(r.raw, `"Name":"ntp"`) {
		t.Errorf("SystemStatus does not say NTP is not run: %s", r.raw)
	}
	r = s.req(false, "GET", "/state/BGPGlobal", "", "", "")
	if !strings.Contains(r.raw, `"AS":"65001"`) {
		t.Errorf("BGPGlobal state: %s", r.raw)
	}
	// FRR refuses a route-reflector client that is not internal: a 400
	// with FRR's message, and nothing stored.
	r = s.req(false, "POST", "/config/BGPv4Neighbor", "", "", `{"NeighborAddress":"10.221.9.9","PeerAS":"65009","RouteReflectorClient":true}`)
	s.want(r, 400, "FRR's refusal")
	if !strings.Contains(r.raw, "Not an internal neighbor") {
		t.Errorf("refusal does not carry FRR's message: %s", r.raw)
	}
	s.want(s.req(false, "GET", "/config/BGPv4Neighbor", "", "", `{"Vrf":"default","NeighborAddress":"10.221.9.9"}`), 404, "refused neighbor not stored")
}
