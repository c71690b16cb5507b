package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/frr/frrtest"
)

// frrRunning is the running configuration of the FRR swmgr runs in dir.
func frrRunning(t *testing.T, frrDir string) string {
	t.Helper()
	out, err := exec.Command("vtysh", "--vty_socket", frrDir, "-d", "bgpd", "-c", "show running-config").CombinedOutput()
	if err != nil {
		t.Fatalf("vtysh: %v\n%s", err, out)
	}
	return string(out)
}

// TestLinuxFreeTextReachesKernelAndFRRAsStored: on the Linux backend a
// Port Description is the netdev's ifalias and a BGP neighbor's
// Description is FRR's. A newline can reach neither (it would forge a line
// of `ip -o link`): refused with 400, the kernel unchanged. A NUL in a
// Description or AuthPassword is a 400, not FRR's 503. FRR's vty reads
// "| " as an output filter; the descriptions "uplink | include x" and
// "uplink | core" are stored, and FRR holds exactly them.
func TestLinuxFreeTextReachesKernelAndFRRAsStored(t *testing.T) {
	frrtest.Need(t)
	ns := fmt.Sprintf("swft%05d", rand.IntN(100000))
	frrtest.Run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	dev := "ft" + ns[4:] + "a"
	frrtest.Run(t, "ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", "ft"+ns[4:]+"b")
	dir := frrtest.Dir(t, "swft")
	frrDir := filepath.Join(dir, "frr")
	t.Cleanup(func() { killDaemonsOf(frrDir) })
	portMap := filepath.Join(dir, "ports.conf")
	if err := os.WriteFile(portMap, []byte("fpPort1 "+dev+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir(), "--backend", "linux", "--netns", ns, "--port-map", portMap, "--bgp", "frr", "--frr-dir", frrDir, "--ntp", "sim", "--system", "sim")

	// Port Description: the ifalias, one line.
	links := func() string { return frrtest.Run(t, "ip", "-n", ns, "-o", "link", "show") }
	s.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Description":"uplink | core"}`)
	if out := frrtest.Run(t, "ip", "-n", ns, "-o", "link", "show", "dev", dev); !strings.Contains(out, "alias uplink | core") {
		t.Errorf("the ifalias is not the Description: %s", out)
	}
	before := links()
	for _, d := range []string{"x\n99: forged0: <UP,LOWER_UP> mtu 1500", "x\r\n99: forged0", "x\x00y", "x\x1b[2J"} {
		r := s.expect(t, 400, "PATCH", "/config/Port", jsonOf(map[string]any{"IntfRef": "fpPort1", "Description": d}))
		if !strings.Contains(string(r.raw), "a control character") {
			t.Errorf("Description %q: %s", d, r)
		}
	}
	if after := links(); after != before || strings.Contains(after, "forged0") {
		t.Errorf("the links changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := s.do(t, "GET", "/config/Port?IntfRef=fpPort1", "").object()["Description"]; got != "uplink | core" {
		t.Errorf("stored Description %q", got)
	}

	// BGP neighbor Description: FRR holds what the store holds.
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"Vrf":"default","ASNum":"65001","RouterId":"10.251.0.1"}`)
	s.expect(t, 201, "POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.251.0.2","PeerAS":"65002","Description":"uplink | include x"}`)
	if run := frrRunning(t, frrDir); !strings.Contains(run, " neighbor 10.251.0.2 description uplink | include x\n") {
		t.Errorf("FRR does not hold the stored description:\n%s", run)
	}
	s.expect(t, 200, "PATCH", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.251.0.2","Description":"uplink | core"}`)
	if run := frrRunning(t, frrDir); !strings.Contains(run, " neighbor 10.251.0.2 description uplink | core\n") {
		t.Errorf("FRR does not hold the stored description:\n%s", run)
	}
	for _, body := range []string{
		`{"NeighborAddress":"10.251.0.2","Description":"a\u0000b"}`,
		`{"NeighborAddress":"10.251.0.2","AuthPassword":"pw0rdQ\u0000x"}`,
		`{"NeighborAddress":"10.251.0.2","Description":"a\nno router bgp 65001"}`,
	} {
		r := s.expect(t, 400, "PATCH", "/config/BGPv4Neighbor", body)
		if strings.Contains(string(r.raw), "pw0rdQ") {
			t.Errorf("the refusal tells the password: %s", r)
		}
	}
	got := s.do(t, "GET", "/config/BGPv4Neighbor?NeighborAddress=10.251.0.2", "").object()["Description"]
	if run := frrRunning(t, frrDir); got != "uplink | core" || !strings.Contains(run, " neighbor 10.251.0.2 description uplink | core\n") {
		t.Errorf("store %q; FRR:\n%s", got, run)
	}
}
