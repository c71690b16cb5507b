package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
