package test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/testneed"
)

// ztpLab is a switch's management network in two network namespaces: the
// switch's (swmgr runs there, its management interface is one end of a
// veth) and the provisioning server's (dnsmasq, and the test's own HTTP
// server serving the document, its signature, a script and the health
// check).
type ztpLab struct {
	swNS, srvNS string
	swIf        string
	srvIf       string   // the server's interface dnsmasq serves
	srvAddr     string   // the server's address on the link
	dhcpArgs    []string // more dnsmasq arguments (its TFTP server)
	base        string   // http://srvAddr:port
	files       map[string][]byte
	healthy     atomic.Bool
	key         ed25519.PrivateKey
	keyFile     string
}

var ztpLabs atomic.Int32

func newZTPLab(t *testing.T) *ztpLab {
	t.Helper()
	testneed.Root(t, "network namespaces")
	testneed.Program(t, "iproute2", "ip")
	testneed.Program(t, "dnsmasq-base", "dnsmasq", "/usr/sbin/dnsmasq")
	n := int(ztpLabs.Add(1)) + os.Getpid()%100*10
	l := &ztpLab{swNS: fmt.Sprintf("ztpsw%d", n), srvNS: fmt.Sprintf("ztpsrv%d", n), swIf: "mgmt0",
		srvIf: "prov0", srvAddr: fmt.Sprintf("10.%d.%d.1", 100+n/250%100, n%250), files: map[string][]byte{}}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	for _, ns := range []string{l.swNS, l.srvNS} {
		run("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		run("-n", ns, "link", "set", "lo", "up")
	}
	run("-n", l.swNS, "link", "add", l.swIf, "type", "veth", "peer", "name", "prov0", "netns", l.srvNS)
	run("-n", l.srvNS, "addr", "add", l.srvAddr+"/24", "dev", "prov0")
	run("-n", l.srvNS, "link", "set", "prov0", "up")
	run("-n", l.swNS, "link", "set", l.swIf, "up")
	l.serveHTTP(t)
	return l
}

// serveHTTP makes the signing key and starts the test's HTTP server on
// the server's address.
func (l *ztpLab) serveHTTP(t *testing.T) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l.key = priv
	der, _ := x509.MarshalPKIXPublicKey(pub)
	l.keyFile = filepath.Join(t.TempDir(), "ztp.pub")
	os.WriteFile(l.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
	l.healthy.Store(true)

	var ln net.Listener
	aaatest.InNetns(t, l.srvNS, func() { ln, err = net.Listen("tcp", l.srvAddr+":0") })
	if err != nil {
		t.Fatal(err)
	}
	l.base = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			if !l.healthy.Load() {
				http.Error(w, "not yet", http.StatusServiceUnavailable)
			}
			return
		}
		data, ok := l.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// serve puts data at path, with its signature at path.sig.
func (l *ztpLab) serve(path string, data []byte) {
	l.files[path] = data
	l.files[path+".sig"] = []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(l.key, data)))
}

// dhcp starts dnsmasq on the server's side giving options (dnsmasq's
// --dhcp-option values, such as 67,http://...; a quoted value keeps its quotes on the command line).
func (l *ztpLab) dhcp(t *testing.T, options ...string) {
	t.Helper()
	dir := t.TempDir()
	prefix := l.srvAddr[:strings.LastIndex(l.srvAddr, ".")]
	args := []string{"netns", "exec", l.srvNS, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
		"--interface=" + l.srvIf, "--bind-interfaces", "--dhcp-authoritative", "--log-dhcp",
		"--dhcp-range=" + prefix + ".10," + prefix + ".200,255.255.255.0,1h",
		"--dhcp-leasefile=" + filepath.Join(dir, "leases"), "--pid-file=" + filepath.Join(dir, "pid")}
	for _, o := range options {
		args = append(args, "--dhcp-option="+o)
	}
	args = append(args, l.dhcpArgs...)
	cmd := exec.Command("ip", args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("dnsmasq:\n%s", tail(out.String(), 3000))
		}
	})
}

// ztpSwitch is swmgr serving in the switch's namespace, reached through
// its Unix socket.
type ztpSwitch struct {
	*server
	sock   string
	client *http.Client
}

func (l *ztpLab) start(t *testing.T, dir string, extra ...string) *ztpSwitch {
	t.Helper()
	return l.startIn(t, l.swNS, dir, extra...)
}

// startIn is start in the switch namespace ns.
func (l *ztpLab) startIn(t *testing.T, ns, dir string, extra ...string) *ztpSwitch {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	sock := filepath.Join(dir, "swmgr.sock")
	args := append([]string{"netns", "exec", ns, swmgrBin, "serve", "--data-dir", dir, "--http", "", "--https", "", "--socket", sock,
		"--ztp", "--ztp-interface", l.swIf, "--access-log=false"}, extra...)
	s := &server{dir: dir, logs: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command("ip", args...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	s.cmd.Env = append(os.Environ(), "SWMGR_ADMIN_PASSWORD=black-box-admin-password")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	sw := &ztpSwitch{server: s, sock: sock, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}}
	t.Cleanup(func() {
		if !s.exited() {
			s.cmd.Process.Signal(os.Interrupt)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				s.cmd.Process.Kill()
			}
		}
		if t.Failed() {
			t.Logf("swmgr logged:\n%s", tail(s.logs.String(), 6000))
		}
	})
	return sw
}

func (sw *ztpSwitch) get(path string) (int, map[string]any, error) {
	resp, err := sw.client.Get("http://swmgr/public/v1" + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(body, &m)
	return resp.StatusCode, m, nil
}

// state reads ZtpState ("" fields while swmgr is not answering).
func (sw *ztpSwitch) state() map[string]any {
	code, m, err := sw.get("/state/Ztp")
	if err != nil || code != 200 {
		return nil
	}
	o, _ := m["Object"].(map[string]any)
	return o
}

// await waits until ZtpState satisfies ok, failing after limit.
func (sw *ztpSwitch) await(t *testing.T, what string, limit time.Duration, ok func(st map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(limit)
	var st map[string]any
	for time.Now().Before(deadline) {
		if st = sw.state(); st != nil && ok(st) {
			return st
		}
		if sw.exited() {
			t.Fatalf("swmgr exited (%v) waiting for %s", sw.err, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("ZtpState never reached %s within %v; last %v", what, limit, st)
	return nil
}

// vlans lists the VLAN ids configured.
func (sw *ztpSwitch) vlans(t *testing.T) []float64 {
	t.Helper()
	code, m, err := sw.get("/config/Vlans")
	if err != nil || code != 200 {
		t.Fatalf("GET /config/Vlans: %d %v", code, err)
	}
	var ids []float64
	objs, _ := m["Objects"].([]any)
	for _, o := range objs {
		obj, _ := o.(map[string]any)["Object"].(map[string]any)
		ids = append(ids, obj["VlanId"].(float64))
	}
	return ids
}

func ztpDocument(vlan int) []byte {
	return fmt.Appendf(nil, `{"SchemaVersion":%d,"ConfigData":{"Vlan":[{"VlanId":%d}]}}`, model.Builtin().SchemaVersion(), vlan)
}

func phaseIs(phase string) func(map[string]any) bool {
	return func(st map[string]any) bool { return st["Phase"] == phase }
}

func stamp(t *testing.T, st map[string]any, field string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(st[field]))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	return at
}

// TestZTPProvisionsAFreshSwitch: a fresh swmgr with --ztp gets option 67
// from dnsmasq, fetches the signed document from the test's HTTP server,
// applies it as one commit of source ztp awaiting confirmation, and
// confirms it once the health check answers 2xx (it answers 503 at
// first). The time from the DHCP offer to the confirmation is logged.
func TestZTPProvisionsAFreshSwitch(t *testing.T) {
	t.Parallel()
	l := newZTPLab(t)
	l.serve("/switch.json", ztpDocument(42))
	l.healthy.Store(false)
	l.dhcp(t, "67,"+l.base+"/switch.json")
	sw := l.start(t, "", "--ztp-key", l.keyFile, "--ztp-health-url", l.base+"/health", "--ztp-confirm-wait", "30s")
	sw.await(t, "confirming", 30*time.Second, phaseIs("confirming"))
	if got := sw.vlans(t); len(got) != 1 || got[0] != 42 {
		t.Errorf("VLANs while awaiting confirmation: %v, want [42]", got)
	}
	l.healthy.Store(true)
	st := sw.await(t, "done", 30*time.Second, phaseIs("done"))
	if st["Verified"] != "signature" || st["Armed"] != false || st["LastError"] != "" {
		t.Errorf("state %v", st)
	}
	took := stamp(t, st, "ConfirmedAt").Sub(stamp(t, st, "OfferAt"))
	t.Logf("DHCP offer to confirmation: %v (the health check held it %s)", took, "until the test let it pass")
	// The commit is the ztp source's, and it awaits no confirmation.
	code, rev, err := sw.get(fmt.Sprintf("/revisions/%v", st["Revision"]))
	if err != nil || code != 200 || !strings.Contains(jsonOf(rev), `"Source":"ztp"`) {
		t.Errorf("revision %v: %d %v %s", st["Revision"], code, err, jsonOf(rev))
	}
	if got := sw.vlans(t); len(got) != 1 || got[0] != 42 {
		t.Errorf("VLANs after confirmation: %v, want [42]", got)
	}
}

// TestZTPFailuresLeaveTheFactoryConfiguration: each way an attempt fails
// leaves the configuration as it was, with the reason in ZtpState.
func TestZTPFailuresLeaveTheFactoryConfiguration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(l *ztpLab) (options, flags []string)
		want  string
	}{
		{"no option 67", func(l *ztpLab) ([]string, []string) { return nil, nil }, "gave no configuration URL (option 67)"},
		{"unreachable URL", func(l *ztpLab) ([]string, []string) {
			return []string{"67,http://" + l.srvAddr + ":1/switch.json"}, nil
		}, "connection refused"},
		{"bad signature", func(l *ztpLab) ([]string, []string) {
			l.serve("/switch.json", ztpDocument(42))
			l.files["/switch.json"] = ztpDocument(43) // not what was signed
			return []string{"67," + l.base + "/switch.json"}, nil
		}, "bad signature"},
		{"unsigned", func(l *ztpLab) ([]string, []string) {
			l.files["/switch.json"] = ztpDocument(42)
			return []string{"67," + l.base + "/switch.json"}, []string{"--ztp-key", ""}
		}, "unsigned document refused"},
		{"wrong sha256 option", func(l *ztpLab) ([]string, []string) {
			l.files["/switch.json"] = ztpDocument(42)
			sum := sha256.Sum256(ztpDocument(43))
			return []string{"67," + l.base + "/switch.json", fmt.Sprintf("224,%x", sum)}, []string{"--ztp-key", ""}
		}, "is not the"},
		{"invalid document", func(l *ztpLab) ([]string, []string) {
			l.serve("/switch.json", []byte(`{"SchemaVersion":1,"ConfigData":{"Vlan":[{"VlanId":5000}]}}`))
			return []string{"67," + l.base + "/switch.json"}, nil
		}, "not a valid configuration"},
		{"health check never passes", func(l *ztpLab) ([]string, []string) {
			l.serve("/switch.json", ztpDocument(42))
			l.healthy.Store(false)
			return []string{"67," + l.base + "/switch.json"}, []string{"--ztp-health-url", l.base + "/health", "--ztp-confirm-wait", "2s"}
		}, "did not pass within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newZTPLab(t)
			options, flags := tc.setup(l)
			l.dhcp(t, options...)
			sw := l.start(t, "", append([]string{"--ztp-key", l.keyFile}, flags...)...)
			st := sw.await(t, "a failed attempt", 40*time.Second, func(st map[string]any) bool { return st["LastError"] != "" && st["Phase"] == "backoff" })
			if !strings.Contains(fmt.Sprint(st["LastError"]), tc.want) {
				t.Errorf("LastError %q, want it to say %q", st["LastError"], tc.want)
			}
			if got := sw.vlans(t); len(got) != 0 {
				t.Errorf("VLANs after the failure: %v, want none", got)
			}
			if st["Armed"] != true || st["Revision"] != float64(0) {
				t.Errorf("state %v: want still armed, no revision of its own", st)
			}
		})
	}
}

// TestZTPResumesAfterKill: swmgr killed (SIGKILL) while provisioning has
// found no DHCP server yet starts it again at the next start, on the same
// data directory, and completes it once the server answers.
func TestZTPResumesAfterKill(t *testing.T) {
	t.Parallel()
	l := newZTPLab(t)
	l.serve("/switch.json", ztpDocument(7))
	dir := t.TempDir()
	sw := l.start(t, dir, "--ztp-key", l.keyFile)
	sw.await(t, "DHCP", 40*time.Second, phaseIs("dhcp"))
	time.Sleep(time.Second) // a discover or two unanswered
	sw.kill9()
	<-sw.done
	l.dhcp(t, "67,"+l.base+"/switch.json")
	sw = l.start(t, dir, "--ztp-key", l.keyFile)
	st := sw.await(t, "done", 40*time.Second, phaseIs("done"))
	if got := sw.vlans(t); len(got) != 1 || got[0] != 7 {
		t.Errorf("VLANs: %v, want [7]; state %v", got, st)
	}
}

// TestZTPScript: the script of option 239 runs only with
// --ztp-allow-script, executed directly with the fixed environment: a
// DHCP option full of shell syntax reaches no shell.
func TestZTPScript(t *testing.T) {
	t.Parallel()
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			t.Parallel()
			l := newZTPLab(t)
			mark := filepath.Join(t.TempDir(), "ran")
			injected := filepath.Join(t.TempDir(), "injected")
			l.serve("/setup.sh", fmt.Appendf(nil, "#!/bin/sh\nenv > %s\n", mark))
			l.serve("/switch.json", ztpDocument(9))
			// The script's URL carries shell syntax after the path: were it
			// ever given to a shell, it would create the injected file.
			l.dhcp(t, "67,"+l.base+"/switch.json", "239,"+l.base+"/setup.sh;touch${IFS}"+injected)
			flags := []string{"--ztp-key", l.keyFile}
			if allowed {
				flags = append(flags, "--ztp-allow-script")
			}
			sw := l.start(t, "", flags...)
			st := sw.await(t, "an attempt's end", 40*time.Second, func(st map[string]any) bool {
				return st["Phase"] == "done" || st["Phase"] == "backoff"
			})
			if _, err := os.Stat(injected); err == nil {
				t.Fatal("the DHCP option's shell syntax ran")
			}
			_, err := os.ReadFile(mark)
			switch {
			case !allowed && err == nil:
				t.Errorf("the script ran without --ztp-allow-script")
			case !allowed && st["Phase"] != "done":
				t.Errorf("state %v: want done, the script skipped", st)
			case allowed && st["Phase"] != "backoff":
				// The URL with shell syntax names no file on the server.
				t.Errorf("state %v: want a failed fetch of the script", st)
			}
		})
	}
	t.Run("runs", func(t *testing.T) {
		t.Parallel()
		l := newZTPLab(t)
		mark := filepath.Join(t.TempDir(), "ran")
		l.serve("/setup.sh", fmt.Appendf(nil, "#!/bin/sh\nenv > %s\n", mark))
		l.serve("/switch.json", ztpDocument(9))
		l.dhcp(t, "67,"+l.base+"/switch.json", "239,"+l.base+"/setup.sh")
		sw := l.start(t, "", "--ztp-key", l.keyFile, "--ztp-allow-script")
		sw.await(t, "done", 40*time.Second, phaseIs("done"))
		env, err := os.ReadFile(mark)
		if err != nil {
			t.Fatalf("the script did not run: %v", err)
		}
		want := "HOME=/\nLANG=C\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\nPWD=%s\nSWMGR_ZTP_INTERFACE=" + l.swIf + "\n"
		got := strings.Split(strings.TrimSpace(string(env)), "\n")
		for _, line := range got {
			if !strings.HasPrefix(line, "PWD=") && !strings.Contains(want, line+"\n") {
				t.Errorf("the script's environment has %q; want only %q", line, want)
			}
		}
	})
}

// newZTPFleetLab is a management network of n switches: the server's
// namespace with a bridge (dnsmasq and the HTTP server on it) and a
// namespace per switch, joined to the bridge by its management veth.
func newZTPFleetLab(t *testing.T, n int) (*ztpLab, []string) {
	t.Helper()
	l := newZTPLab(t) // its own switch namespace stays unused
	ip := func(args ...string) { t.Helper(); run(t, "ip", args...) }
	ip("-n", l.srvNS, "addr", "del", l.srvAddr+"/24", "dev", "prov0")
	ip("-n", l.srvNS, "link", "add", "br0", "type", "bridge")
	ip("-n", l.srvNS, "link", "set", "prov0", "master", "br0")
	ip("-n", l.srvNS, "addr", "add", l.srvAddr+"/24", "dev", "br0")
	ip("-n", l.srvNS, "link", "set", "br0", "up")
	l.srvIf = "br0"
	var names []string
	for i := range n {
		ns := fmt.Sprintf("%sf%d", l.swNS, i)
		ip("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		ip("-n", ns, "link", "set", "lo", "up")
		ip("-n", ns, "link", "add", l.swIf, "type", "veth", "peer", "name", fmt.Sprintf("sw%d", i), "netns", l.srvNS)
		ip("-n", l.srvNS, "link", "set", fmt.Sprintf("sw%d", i), "master", "br0")
		ip("-n", l.srvNS, "link", "set", fmt.Sprintf("sw%d", i), "up")
		ip("-n", ns, "link", "set", l.swIf, "up")
		names = append(names, ns)
	}
	return l, names
}

// TestZTPProvisionsTwentyAtOnce: 20 fresh swmgr started at once on one
// management network, one dnsmasq and one HTTP server: each gets its
// lease, fetches and verifies the signed document, applies it as one
// confirmed commit and confirms it by the health check. The total time,
// from the starts to the last confirmation, is logged (goal: under 60 s
// on this machine).
func TestZTPProvisionsTwentyAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 swmgr")
	}
	const n = 20
	l, namespaces := newZTPFleetLab(t, n)
	l.serve("/switch.json", ztpDocument(42))
	l.dhcp(t, "67,"+l.base+"/switch.json")
	begin := time.Now()
	switches := make([]*ztpSwitch, n)
	for i, ns := range namespaces {
		switches[i] = l.startIn(t, ns, "", "--ztp-key", l.keyFile, "--ztp-health-url", l.base+"/health", "--ztp-confirm-wait", "60s")
	}
	var slowest time.Duration
	var offerToConfirm []time.Duration
	for _, sw := range switches {
		st := sw.await(t, "done", 120*time.Second, phaseIs("done"))
		if st["Verified"] != "signature" || st["LastError"] != "" {
			t.Errorf("%s: state %v", sw.dir, st)
		}
		if got := sw.vlans(t); len(got) != 1 || got[0] != 42 {
			t.Errorf("%s: VLANs %v, want [42]", sw.dir, got)
		}
		confirmed := stamp(t, st, "ConfirmedAt")
		slowest = max(slowest, confirmed.Sub(begin))
		offerToConfirm = append(offerToConfirm, confirmed.Sub(stamp(t, st, "OfferAt")))
	}
	slices.Sort(offerToConfirm)
	t.Logf("%d switches provisioned and confirmed %v after their starts (offer to confirmation: median %v, max %v)",
		n, slowest.Round(10*time.Millisecond), offerToConfirm[n/2].Round(time.Millisecond), offerToConfirm[n-1].Round(time.Millisecond))
}
