package test

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/model"
)

// inBand moves the provisioning server's side from the management link to
// a front-panel link: the switch's dataplane namespace (dp) has swp1,
// joined by a veth to the server's inb0, which takes the server's address
// (the HTTP server keeps listening on it) and is the interface dnsmasq
// serves. The management link stays, with no DHCP server on it.
func (l *ztpLab) inBand(t *testing.T) (dp string) {
	t.Helper()
	ip := func(args ...string) { t.Helper(); run(t, "ip", args...) }
	dp = l.swNS + "dp"
	ip("netns", "add", dp)
	t.Cleanup(func() { run(t, "ip", "netns", "del", dp) })
	ip("-n", dp, "link", "set", "lo", "up")
	ip("-n", l.srvNS, "addr", "del", l.srvAddr+"/24", "dev", "prov0")
	ip("-n", dp, "link", "add", "swp1", "type", "veth", "peer", "name", "inb0", "netns", l.srvNS)
	ip("-n", l.srvNS, "addr", "add", l.srvAddr+"/24", "dev", "inb0")
	ip("-n", l.srvNS, "link", "set", "inb0", "up")
	// A second port, its peer down: no link, so no DHCP on it.
	ip("-n", dp, "link", "add", "swp2", "type", "veth", "peer", "name", "dead0", "netns", l.srvNS)
	l.srvIf = "inb0"
	return dp
}

// startupPortsUp writes a startup configuration (the factory one) that
// brings fpPort1 and fpPort2 up: provisioning uses the ports that are up
// with link, and changes no port itself.
func startupPortsUp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	doc := fmt.Sprintf(`{"SchemaVersion":%d,"ConfigData":{"Port":[{"IntfRef":"fpPort1","AdminState":"UP","Speed":10000},{"IntfRef":"fpPort2","AdminState":"UP","Speed":10000}]}}`, model.Builtin().SchemaVersion())
	if err := os.WriteFile(filepath.Join(dir, "startup-config"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestZTPInBand: with dnsmasq serving only on a front-panel port's link,
// a fresh swmgr on the Linux dataplane (its ports in a namespace of their
// own) runs DHCP on the management interface and on every port up with
// link; the port's answer wins, its lease is on swp1 (ZtpState's
// LeaseInterface), and the signed document fetched through it is applied
// and confirmed.
func TestZTPInBand(t *testing.T) {
	t.Parallel()
	l := newZTPLab(t)
	dp := l.inBand(t)
	doc := fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Port":[{"IntfRef":"fpPort1","AdminState":"UP","Speed":10000,"Description":"provisioned in-band"}]}}`, model.Builtin().SchemaVersion())
	l.serve("/switch.json", doc)
	l.dhcp(t, "67,"+l.base+"/switch.json")
	sw := l.start(t, startupPortsUp(t), "--backend", "linux", "--netns", dp, "--bgp", "sim", "--ntp", "sim", "--system", "sim",
		"--ztp-key", l.keyFile, "--ztp-health-url", l.base+"/health", "--ztp-confirm-wait", "30s")
	st := sw.await(t, "done", 60*time.Second, phaseIs("done"))
	if st["LeaseInterface"] != "swp1" || st["Verified"] != "signature" || st["LastError"] != "" {
		t.Errorf("state %v: want the lease on swp1, the document's signature verified", st)
	}
	t.Logf("lease on %v; DHCP offer to confirmation: %v", st["LeaseInterface"], stamp(t, st, "ConfirmedAt").Sub(stamp(t, st, "OfferAt")))
	if !strings.Contains(sw.logs.String(), `interfaces="[mgmt0 swp1]"`) {
		t.Errorf("DHCP did not run on mgmt0 and swp1 only (swp2 has no link)")
	}
	code, port, err := sw.get("/config/Ports")
	if err != nil || code != 200 || !strings.Contains(jsonOf(port), "provisioned in-band") {
		t.Errorf("fpPort1 after provisioning: %d %v %s", code, err, jsonOf(port))
	}
	if out := run(t, "ip", "-n", dp, "-4", "-o", "addr", "show", "dev", "swp1"); !strings.Contains(out, l.srvAddr[:strings.LastIndex(l.srvAddr, ".")+1]) {
		t.Errorf("swp1 has no leased address: %s", out)
	}
}

// TestZTPTFTPBareFileName: option 67 a bare file name, option 66 the TFTP
// server, as ISC dhcpd and dnsmasq configurations give them: the document
// and its signature are fetched from dnsmasq's own TFTP server, verified
// as over HTTP, applied and confirmed. A document over the size bound is
// refused with the reason.
func TestZTPTFTPBareFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int // padding that makes the document larger
		want string
	}{
		{"fetched", 0, ""},
		{"too large", 17 << 20, "larger than 16777216"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newZTPLab(t)
			dir := t.TempDir()
			root := filepath.Join(dir, "tftp")
			os.Mkdir(root, 0o755)
			os.Chmod(dir, 0o755)
			doc := ztpDocument(42)
			if tc.size > 0 {
				doc = fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Vlan":[{"VlanId":42,"Description":%q}]}}`, model.Builtin().SchemaVersion(), strings.Repeat("x", tc.size))
			}
			os.WriteFile(filepath.Join(root, "switch.json"), doc, 0o644)
			os.WriteFile(filepath.Join(root, "switch.json.sig"), []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(l.key, doc))), 0o644)
			l.dhcpArgs = []string{"--enable-tftp", "--tftp-root=" + root, "--user=root"}
			l.dhcp(t, "67,switch.json", "66,"+l.srvAddr)
			sw := l.start(t, "", "--ztp-key", l.keyFile)
			if tc.want != "" {
				st := sw.await(t, "a failed attempt", 60*time.Second, func(st map[string]any) bool { return st["LastError"] != "" && st["Phase"] == "backoff" })
				if !strings.Contains(fmt.Sprint(st["LastError"]), tc.want) || len(sw.vlans(t)) != 0 {
					t.Errorf("state %v, VLANs %v: want %q and nothing applied", st, sw.vlans(t), tc.want)
				}
				return
			}
			st := sw.await(t, "done", 60*time.Second, phaseIs("done"))
			if st["ConfigURL"] != "tftp://"+l.srvAddr+"/switch.json" || st["Verified"] != "signature" {
				t.Errorf("state %v: want the TFTP URL, verified by its signature", st)
			}
			t.Logf("DHCP offer to confirmation over TFTP: %v", stamp(t, st, "ConfirmedAt").Sub(stamp(t, st, "OfferAt")))
			if got := sw.vlans(t); len(got) != 1 || got[0] != 42 {
				t.Errorf("VLANs %v, want [42]", got)
			}
		})
	}
}

// TestZTPRefusesHostileDHCPFields: an answer with a control character in
// any field it gives provisioning (here option 239, a newline and a
// second URL after it, in hex for dnsmasq to send its bytes) is refused
// whole, with the reason in ZtpState, even with scripts not allowed:
// nothing is fetched, nothing changes.
func TestZTPRefusesHostileDHCPFields(t *testing.T) {
	t.Parallel()
	l := newZTPLab(t)
	l.serve("/switch.json", ztpDocument(42))
	var hostile []string
	for _, c := range []byte(l.base + "/setup.sh\nhttp://evil/") {
		hostile = append(hostile, fmt.Sprintf("%02x", c))
	}
	l.dhcp(t, "67,"+l.base+"/switch.json", "239,"+strings.Join(hostile, ":"))
	sw := l.start(t, "", "--ztp-key", l.keyFile)
	st := sw.await(t, "an attempt's end", 40*time.Second, func(st map[string]any) bool { return st["Phase"] == "done" || st["Phase"] == "backoff" })
	if msg := fmt.Sprint(st["LastError"]); !strings.Contains(msg, "refused: option 239: byte") || !strings.Contains(msg, "is 0x0a") {
		t.Errorf("state %v: want the answer refused for its newline", st)
	}
	if got := sw.vlans(t); len(got) != 0 {
		t.Errorf("VLANs %v, want none", got)
	}
}
