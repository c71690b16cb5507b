package test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// gnmiCLIVersion is the openconfig/gnmi release whose gnmi_cli the tests
// build: the version swmgr's protos come from.
const gnmiCLIVersion = "v0.14.1"

var (
	gnmiCLIOnce sync.Once
	gnmiCLIPath string
	gnmiCLIErr  error
)

// gnmiCLI builds gnmi_cli, a gNMI client that is not swmgr's, from the
// module cache (go install, once per test binary). It skips when it cannot
// be built (no module cache and no proxy), except in CI.
func gnmiCLI(t testing.TB) string {
	t.Helper()
	gnmiCLIOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gnmi-cli-")
		if err != nil {
			gnmiCLIErr = err
			return
		}
		cmd := exec.Command("go", "install", "github.com/openconfig/gnmi/cmd/gnmi_cli@"+gnmiCLIVersion)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			gnmiCLIErr = err
			gnmiCLIPath = string(out)
			return
		}
		gnmiCLIPath = filepath.Join(dir, "gnmi_cli")
	})
	if gnmiCLIErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go install gnmi_cli@%s: %v\n%s", gnmiCLIVersion, gnmiCLIErr, gnmiCLIPath)
		}
		t.Skipf("gnmi_cli@%s cannot be built here: %v", gnmiCLIVersion, gnmiCLIErr)
	}
	return gnmiCLIPath
}

// gnmiServer is a swmgr serving gNMI too.
type gnmiServer struct {
	*server
	gnmiAddr string
	cli      string
}

func startGNMIServer(t *testing.T, dir string, gnmiAddr string, extra ...string) *gnmiServer {
	t.Helper()
	cli := gnmiCLI(t)
	if dir == "" {
		dir = t.TempDir()
	}
	if gnmiAddr == "" {
		gnmiAddr = freeAddr(t)
	}
	s := startServer(t, dir, append([]string{"--gnmi", gnmiAddr}, extra...)...)
	return &gnmiServer{server: s, gnmiAddr: gnmiAddr, cli: cli}
}

// run runs gnmi_cli as user (none if "") with args; it returns the output
// and whether it exited 0.
func (g *gnmiServer) run(t testing.TB, user, password string, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := []string{"-address", g.gnmiAddr, "-ca_crt", filepath.Join(g.dir, "tls-cert.pem"), "-timeout", "10s"}
	if user != "" {
		base = append(base, "-with_user_pass")
	}
	cmd := exec.CommandContext(ctx, g.cli, append(base, args...)...)
	cmd.Env = append(os.Environ(), "GNMI_USER="+user, "GNMI_PASS="+password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	// prototext's output varies its spacing: the tests compare it without.
	return strings.Join(strings.Fields(out.String()), ""), err == nil
}

// admin runs gnmi_cli as the first admin and fails the test unless it
// succeeds.
func (g *gnmiServer) admin(t testing.TB, args ...string) string {
	t.Helper()
	out, ok := g.run(t, "admin", blackBoxAdminPassword, args...)
	if !ok {
		t.Fatalf("gnmi_cli %s: %s", strings.Join(args, " "), out)
	}
	return out
}

const ntpPath = `elem:<name:"config"> elem:<name:"NtpServer" key:<key:"IpAddr" value:"192.0.2.10">>`

// Capabilities, Get in both origins with wildcards, and a Set of several
// paths in one request (one commit of source gnmi), with gnmi_cli.
func TestGNMIGetSet(t *testing.T) {
	g := startGNMIServer(t, "", "")
	out := g.admin(t, "-capabilities")
	mustContain(t, out, `name:"swmgr"`, `name:"openconfig-interfaces"`, "JSON_IETF", `gNMI_version:"0.10.0"`)

	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10","MinPoll":4}`)
	out = g.admin(t, "-get", "-proto", `path:<origin:"swmgr" `+ntpPath+`> encoding:JSON`)
	mustContain(t, out, `\"IpAddr\":\"192.0.2.10\"`, `\"MinPoll\":4`)
	out = g.admin(t, "-get", "-proto", `path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Port" key:<key:"IntfRef" value:"*">> elem:<name:"Mtu">> encoding:JSON_IETF`)
	mustContain(t, out, `value:"fpPort1"`, `value:"fpPort32"`, `json_ietf_val:"1500"`)
	out = g.admin(t, "-get", "-proto", `path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"config"> elem:<name:"mtu">> encoding:JSON`)
	mustContain(t, out, `name:"mtu"`, `json_val:"1500"`)
	out = g.admin(t, "-get", "-proto", `path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"*">> elem:<name:"state"> elem:<name:"counters"> elem:<name:"in-octets">> encoding:JSON_IETF`)
	mustContain(t, out, `value:"fpPort7"`, `name:"in-octets"`)
	// A leaf that does not map is Unimplemented, naming it.
	out, ok := g.run(t, "admin", blackBoxAdminPassword, "-get", "-proto", `path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"config"> elem:<name:"loopback-mode">> encoding:JSON`)
	if ok || !strings.Contains(out, "Unimplemented") || !strings.Contains(out, "loopback-mode") {
		t.Errorf("an unmapped leaf: %s", out)
	}

	// Several paths, both origins, one request: one commit.
	before := g.runningRevision(t)
	out = g.admin(t, "-set", "-proto", `
update:<path:<origin:"swmgr" `+ntpPath+` elem:<name:"MaxPoll">> val:<json_val:"12">>
update:<path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"config">> val:<json_val:"{\"mtu\":9100,\"enabled\":true,\"description\":\"uplink\"}">>
update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer" key:<key:"IpAddr" value:"192.0.2.11">>> val:<json_val:"{\"Prefer\":true}">>`)
	mustContain(t, out, "op:UPDATE")
	r := g.expect(t, 200, "GET", "/state/Port?IntfRef=fpPort1", "")
	mustContain(t, string(r.raw), `"Mtu":9100`, `"AdminState":"UP"`, `"Description":"uplink"`)
	g.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.11", "")
	if after := g.runningRevision(t); after != before+1 {
		t.Errorf("one SetRequest made %v commits", after-before)
	}
	revs := g.expect(t, 200, "GET", "/revisions?Count=1", "")
	mustContain(t, string(revs.raw), `"Source":"gnmi"`, `"User":"admin"`)
	logs := g.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	mustContain(t, string(logs.raw), `"API":"gnmi"`, `"UserName":"admin"`)

	// A delete with a wildcard, in the native origin.
	g.admin(t, "-set", "-proto", `delete:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer" key:<key:"IpAddr" value:"*">>>`)
	r = g.expect(t, 200, "GET", "/config/NtpServers", "")
	mustContain(t, string(r.raw), `"ObjCount":0`)
}

// runningRevision is the revision of the running configuration.
func (g *gnmiServer) runningRevision(t testing.TB) float64 {
	t.Helper()
	r := g.expect(t, 200, "GET", "/state/SystemParam", "")
	o, _ := r.body["Object"].(map[string]any)
	rev, ok := o["RunningRevision"].(float64)
	if !ok {
		t.Fatalf("no RunningRevision in %s", r.raw)
	}
	return rev
}
