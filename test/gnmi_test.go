package test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netns"
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

// startGNMIServer starts swmgr on dir with gNMI on a free address picked
// at each start, and another if swmgr finds it taken. A restart does not
// ask for the address of the swmgr before it: between the two, any
// outgoing connection on the machine may be given that port as its own,
// and once closed its TIME_WAIT keeps the port from being listened on for
// a minute.
func startGNMIServer(t testing.TB, dir string, extra ...string) *gnmiServer {
	t.Helper()
	cli := gnmiCLI(t)
	if dir == "" {
		dir = t.TempDir()
	}
	for attempt := 1; ; attempt++ {
		gnmiAddr := freeAddr(t)
		s, err := tryStart(t, dir, append([]string{"--gnmi", gnmiAddr}, extra...)...)
		if err == nil {
			return &gnmiServer{server: s, gnmiAddr: gnmiAddr, cli: cli}
		}
		if attempt == 3 || !strings.Contains(s.logs.String(), "address already in use") {
			t.Fatal(err)
		}
	}
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
	g := startGNMIServer(t, "")
	out := g.admin(t, "-capabilities")
	mustContain(t, out, `name:"swmgr"`, `name:"openconfig-interfaces"`, "JSON_IETF", `gNMI_version:"0.10.0"`)

	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10","MinPoll":4}`)
	out = g.admin(t, "-get", "-proto", `path:<origin:"swmgr" `+ntpPath+`> encoding:JSON`)
	mustContain(t, out, `\"IpAddr\":\"192.0.2.10\"`, `\"MinPoll\":4`)
	// Each RPC has its access line (at its end) and is counted in the
	// metrics, refused ones too; no password reaches the log.
	waitLine(t, g.logs, `msg=gnmi user=admin source=127\.0\.0\.1:\d+ method=Get code=OK paths=1 latency_ms=[0-9.]+$`)
	if out, ok := g.run(t, "", "", "-get", "-proto", `path:<origin:"swmgr" `+ntpPath+`> encoding:JSON`); ok || !strings.Contains(out, "code=Unauthenticated") {
		t.Errorf("a Get without credentials: %s", out)
	}
	waitLine(t, g.logs, `msg=gnmi source=127\.0\.0\.1:\d+ method=Get code=Unauthenticated paths=1 latency_ms=[0-9.]+$`)
	const wrongPassword = "not-the-admin-password"
	if out, ok := g.run(t, "admin", wrongPassword, "-capabilities"); ok || !strings.Contains(out, "code=Unauthenticated") {
		t.Errorf("Capabilities with a wrong password: %s", out)
	}
	waitLine(t, g.logs, `msg=gnmi source=127\.0\.0\.1:\d+ method=Capabilities code=Unauthenticated latency_ms=[0-9.]+$`)
	if logs := g.logs.String(); strings.Contains(logs, wrongPassword) || strings.Contains(logs, blackBoxAdminPassword) {
		t.Errorf("a password in the log:\n%s", logs)
	}
	metrics := string(scrape(t, g.server))
	for _, want := range []string{
		`swmgr_gnmi_rpc_duration_seconds_count{code="OK",method="Get"} 1`,
		`swmgr_gnmi_rpc_duration_seconds_count{code="Unauthenticated",method="Get"} 1`,
		`swmgr_gnmi_rpc_duration_seconds_count{code="OK",method="Capabilities"} 1`,
		`swmgr_gnmi_rpc_duration_seconds_count{code="Unauthenticated",method="Capabilities"} 1`,
		`swmgr_gnmi_subscriptions{mode="stream"} 0`,
		"swmgr_login_failures_total 1",
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
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

// --access-log=false leaves gNMI's RPCs out of the log as it does REST's
// requests; the metrics still count them.
func TestGNMIAccessLogOff(t *testing.T) {
	g := startGNMIServer(t, "", "--access-log=false")
	g.admin(t, "-capabilities")
	if out, ok := g.run(t, "", "", "-capabilities"); ok || !strings.Contains(out, "code=Unauthenticated") {
		t.Errorf("Capabilities without credentials: %s", out)
	}
	if want := `swmgr_gnmi_rpc_duration_seconds_count{code="OK",method="Capabilities"} 1` + "\n"; !strings.Contains(string(scrape(t, g.server)), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	g.stop(t) // the access lines pending are written at a clean stop
	if logs := g.logs.String(); strings.Contains(logs, "msg=gnmi") || strings.Contains(logs, "msg=request") {
		t.Errorf("access lines with --access-log=false:\n%s", logs)
	}
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

// closedClientOn leaves a connection's TIME_WAIT on addr: a client bound
// to it connects to a listener of its own and closes first. Until the
// TIME_WAIT ends (a minute), addr cannot be listened on.
func closedClientOn(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	local, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := (&net.Dialer{LocalAddr: local}).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	peer.Close()
}

// One bad value among several paths refuses the whole SetRequest
// (InvalidArgument, swmgr's message) and leaves the store byte-identical.
func TestGNMISetIsAtomic(t *testing.T) {
	dir := t.TempDir()
	g := startGNMIServer(t, dir)
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`)
	g.stop(t)
	before := dump(t, dir)
	// The restart works though an outgoing connection took the last
	// gNMI port meanwhile, as any on the machine may.
	closedClientOn(t, g.gnmiAddr)
	g = startGNMIServer(t, dir)
	out, ok := g.run(t, "admin", blackBoxAdminPassword, "-set", "-proto", `
update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Port" key:<key:"IntfRef" value:"fpPort1">> elem:<name:"Mtu">> val:<json_val:"9100">>
update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer" key:<key:"IpAddr" value:"192.0.2.11">>> val:<json_val:"{}">>
update:<path:<origin:"swmgr" `+ntpPath+` elem:<name:"MinPoll">> val:<json_val:"3">>`)
	if ok || !strings.Contains(out, "code=InvalidArgument") || !strings.Contains(out, "MinPoll:3isoutofrange") {
		t.Errorf("a Set with a bad value: %s", out)
	}
	// A path that names nothing, a state path, a wildcard update.
	for _, bad := range []struct{ proto, code string }{
		{`update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Nope">> val:<json_val:"{}">>`, "NotFound"},
		{`update:<path:<origin:"swmgr" elem:<name:"state"> elem:<name:"Port" key:<key:"IntfRef" value:"fpPort1">> elem:<name:"Mtu">> val:<json_val:"9000">>`, "InvalidArgument"},
		{`update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Port" key:<key:"IntfRef" value:"*">> elem:<name:"Mtu">> val:<json_val:"9000">>`, "InvalidArgument"},
		{`update:<path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"state"> elem:<name:"mtu">> val:<json_val:"9000">>`, "InvalidArgument"},
		{`update:<path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort1">> elem:<name:"config"> elem:<name:"loopback-mode">> val:<json_val:"true">>`, "Unimplemented"},
	} {
		out, ok := g.run(t, "admin", blackBoxAdminPassword, "-set", "-proto", bad.proto)
		if ok || !strings.Contains(out, "code="+bad.code) {
			t.Errorf("%s: want %s, got %s", bad.proto, bad.code, out)
		}
	}
	g.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("a refused SetRequest changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// The commit-confirmed extension: a commit with a rollback duration is
// rolled back by its timer, across a restart; another Set meanwhile is
// FailedPrecondition; a confirm with the wrong id InvalidArgument; a
// confirmed one stays, a cancelled one goes; set_rollback_duration moves
// the deadline.
func TestGNMICommitConfirmed(t *testing.T) {
	dir := t.TempDir()
	g := startGNMIServer(t, dir)
	set := func(id, action, extra string) (string, bool) {
		return g.run(t, "admin", blackBoxAdminPassword, "-set", "-proto", extra+` extension:<commit:<id:"`+id+`" `+action+`>>`)
	}
	mtu := func(v string) string {
		return `update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Port" key:<key:"IntfRef" value:"fpPort1">> elem:<name:"Mtu">> val:<json_val:"` + v + `">>`
	}
	// waitMtu waits until REST shows fpPort1's Mtu at v (a rollback).
	waitMtu := func(v, failure string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(string(g.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort1", "").raw), `"Mtu":`+v) {
			if time.Now().After(deadline) {
				t.Fatal(failure)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if out, ok := set("c1", `commit:<rollback_duration:<seconds:4>>`, mtu("9000")); !ok {
		t.Fatalf("commit: %s", out)
	}
	mustContain(t, string(g.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort1", "").raw), `"Mtu":9000`)
	if out, ok := g.run(t, "admin", blackBoxAdminPassword, "-set", "-proto", mtu("9100")); ok || !strings.Contains(out, "code=FailedPrecondition") {
		t.Errorf("a Set while a commit awaits confirmation: %s", out)
	}
	if out, ok := set("wrong", `confirm:<>`, ""); ok || !strings.Contains(out, "code=InvalidArgument") {
		t.Errorf("a confirm with another id: %s", out)
	}
	// The wait survives a restart; the timer then rolls it back.
	g.stop(t)
	g = startGNMIServer(t, dir)
	waitMtu("1500", "the unconfirmed commit was not rolled back")
	mustContain(t, string(g.expect(t, 200, "GET", "/revisions?Count=1", "").raw), `"Source":"confirm-timeout"`)

	// Confirmed in time, it stays; cancelled, it goes at once.
	if out, ok := set("c2", `commit:<rollback_duration:<seconds:30>>`, mtu("9000")); !ok {
		t.Fatalf("commit: %s", out)
	}
	if out, ok := set("c2", `confirm:<>`, ""); !ok {
		t.Fatalf("confirm: %s", out)
	}
	if out, ok := set("c3", `commit:<rollback_duration:<seconds:30>>`, mtu("9100")); !ok {
		t.Fatalf("commit: %s", out)
	}
	if out, ok := set("c3", `cancel:<>`, ""); !ok {
		t.Fatalf("cancel: %s", out)
	}
	mustContain(t, string(g.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort1", "").raw), `"Mtu":9000`)
	if out, ok := set("c3", `confirm:<>`, ""); ok || !strings.Contains(out, "code=FailedPrecondition") {
		t.Errorf("a confirm with nothing awaiting confirmation: %s", out)
	}
	// A new rollback duration: the commit of 10 minutes goes in 2 s.
	if out, ok := set("c4", `commit:<>`, mtu("9100")); !ok {
		t.Fatalf("commit: %s", out)
	}
	if out, ok := set("c4", `set_rollback_duration:<rollback_duration:<seconds:2>>`, ""); !ok {
		t.Fatalf("set_rollback_duration: %s", out)
	}
	mustContain(t, string(g.expect(t, 200, "GET", "/revisions/pending", "").raw), `"Revision"`)
	waitMtu("9000", "the commit was not rolled back at its new deadline")
}

// background runs gnmi_cli as admin until it exits; its output is read
// while it runs.
func (g *gnmiServer) background(t testing.TB, args ...string) (*syncBuffer, chan error) {
	t.Helper()
	return g.backgroundAs(t, "admin", blackBoxAdminPassword, args...)
}

// backgroundAs is background as user.
func (g *gnmiServer) backgroundAs(t testing.TB, user, password string, args ...string) (*syncBuffer, chan error) {
	t.Helper()
	base := []string{"-address", g.gnmiAddr, "-ca_crt", filepath.Join(g.dir, "tls-cert.pem"), "-timeout", "10s", "-with_user_pass"}
	cmd := exec.Command(g.cli, append(base, args...)...)
	cmd.Env = append(os.Environ(), "GNMI_USER="+user, "GNMI_PASS="+password)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return out, done
}

// waitLine waits for a line of out that matches the regular expression.
func waitLine(t testing.TB, out *syncBuffer, re string) {
	t.Helper()
	line := regexp.MustCompile("(?m)" + re)
	deadline := time.Now().Add(15 * time.Second)
	for !line.MatchString(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no line matches %s; output:\n%s", re, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFor(t testing.TB, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(strings.Join(strings.Fields(out.String()), ""), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not come; output:\n%s", want, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A STREAM subscription ON_CHANGE sees commits made over REST, in both
// origins; a POLL and a ONCE subscription answer and end.
func TestGNMISubscribeOnChange(t *testing.T) {
	g := startGNMIServer(t, "")
	out, done := g.background(t, "-dt", "p", "-sd", "30s", "-proto", `subscribe:<prefix:<> mode:STREAM encoding:JSON
subscription:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer">> mode:ON_CHANGE>
subscription:<path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort3">> elem:<name:"config"> elem:<name:"mtu">> mode:ON_CHANGE>>`)
	waitFor(t, out, "sync_response:true")
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.77"}`)
	waitFor(t, out, `\"IpAddr\":\"192.0.2.77\"`)
	g.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort3","Mtu":9200}`)
	waitFor(t, out, `json_val:"9200"`)
	g.expect(t, 200, "DELETE", "/config/NtpServer?IpAddr=192.0.2.77", "")
	waitFor(t, out, `delete:{origin:"swmgr"elem:{name:"config"}elem:{name:"NtpServer"key:{key:"IpAddr"value:"192.0.2.77"}}}`)
	select {
	case err := <-done:
		t.Fatalf("the stream ended early: %v\n%s", err, out)
	default:
	}

	once := g.admin(t, "-dt", "p", "-proto", `subscribe:<prefix:<> mode:ONCE encoding:JSON subscription:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"Port" key:<key:"IntfRef" value:"fpPort3">> elem:<name:"Mtu">>>>`)
	mustContain(t, once, `json_val:"9200"`, "sync_response:true")
}

// Every RPC without credentials, with a wrong password, and a read-only
// user's writes are refused with the right code and change nothing; the
// config log names the user refused.
func TestGNMIAccess(t *testing.T) {
	dir := t.TempDir()
	g := startGNMIServer(t, dir)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"viewer","Group":"users","Password":"viewer-pass-1"}`)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`)
	g.stop(t)
	before := dump(t, dir)
	g = startGNMIServer(t, dir)
	set := `update:<path:<origin:"swmgr" elem:<name:"config"> elem:<name:"NtpServer" key:<key:"IpAddr" value:"192.0.2.11">>> val:<json_val:"{}">>`
	rpcs := [][]string{
		{"-capabilities"},
		{"-get", "-proto", `path:<origin:"swmgr" ` + ntpPath + `> encoding:JSON`},
		{"-set", "-proto", set},
		{"-set", "-proto", `delete:<origin:"swmgr" ` + ntpPath + `>`},
		{"-proto", `subscribe:<prefix:<> mode:ONCE encoding:JSON subscription:<path:<origin:"swmgr" elem:<name:"config">>>>`},
	}
	for i, rpc := range rpcs {
		if out, ok := g.run(t, "", "", rpc...); ok || !strings.Contains(out, "code=Unauthenticated") {
			t.Errorf("%v without credentials: %s", rpc, out)
		}
		// The login throttle counts gNMI's failures as it counts HTTPS's:
		// a name that keeps guessing is locked out (ResourceExhausted).
		out, ok := g.run(t, "intruder", fmt.Sprintf("not-the-password-%d", i), rpc...)
		if ok || !(strings.Contains(out, "code=Unauthenticated") && strings.Contains(out, "wrongusernameorpassword") ||
			i > 0 && strings.Contains(out, "code=ResourceExhausted") && strings.Contains(out, "toomanyfailedlogins")) {
			t.Errorf("%v with a wrong password: %s", rpc, out)
		}
	}
	// A read-only user reads, and may not write.
	if out, ok := g.run(t, "viewer", "viewer-pass-1", rpcs[1]...); !ok || !strings.Contains(out, "192.0.2.10") {
		t.Errorf("a read-only user's Get: %s", out)
	}
	for _, rpc := range rpcs[2:4] {
		if out, ok := g.run(t, "viewer", "viewer-pass-1", rpc...); ok || !strings.Contains(out, "code=PermissionDenied") {
			t.Errorf("%v as a read-only user: %s", rpc, out)
		}
	}
	// Users are admins' to write: an operator may not.
	if out, ok := g.run(t, "op1", "operator-pass-1", "-set", "-proto", `update:<path:<origin:"openconfig" elem:<name:"system"> elem:<name:"aaa"> elem:<name:"authentication"> elem:<name:"users"> elem:<name:"user" key:<key:"username" value:"op1">> elem:<name:"config"> elem:<name:"role">> val:<json_val:"\"SYSTEM_ROLE_ADMIN\"">>`); ok || !strings.Contains(out, "code=PermissionDenied") {
		t.Errorf("an operator making itself admin: %s", out)
	}
	logs := g.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	mustContain(t, string(logs.raw), `"API":"gnmi"`, `"UserName":"viewer"`, `"UserName":"op1"`)
	g.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused gNMI requests changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// SAMPLE of OpenConfig counters on the Linux backend: ports of a network
// namespace with traffic on them; the samples follow the kernel's
// counters.
func TestGNMISampleCountersLinux(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	needTool(t, "ip")
	ns := fmt.Sprintf("gnmis%05d", rand.IntN(100000))
	for _, args := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "add", "swp1", "type", "veth", "peer", "name", "swp2"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	g := startGNMIServer(t, "", "--backend", "linux", "--netns", ns, "--bgp", "sim", "--ntp", "sim", "--system", "sim")
	g.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`)
	g.expect(t, 200, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","AdminState":"UP"}`)
	g.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.99.0.1/24"}`)
	out, _ := g.background(t, "-dt", "p", "-sd", "60s", "-proto", `subscribe:<prefix:<> mode:STREAM encoding:JSON
subscription:<path:<origin:"openconfig" elem:<name:"interfaces"> elem:<name:"interface" key:<key:"name" value:"fpPort2">> elem:<name:"state"> elem:<name:"counters"> elem:<name:"in-octets">> mode:SAMPLE sample_interval:300000000>>`)
	waitFor(t, out, "sync_response:true")
	first := maxSample(out.String())
	// ARP requests for an address nobody has go out of swp1 into swp2.
	sendIn(t, ns, "10.99.0.2:9")
	deadline := time.Now().Add(20 * time.Second)
	for maxSample(out.String()) <= first {
		if time.Now().After(deadline) {
			t.Fatalf("the samples of fpPort2's in-octets did not grow past %d:\n%s", first, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var sampleValue = regexp.MustCompile(`json_val:\s*"(\d+)"`)

// maxSample is the largest value sampled so far.
func maxSample(out string) int64 {
	var max int64
	for _, m := range sampleValue.FindAllStringSubmatch(out, -1) {
		if n, _ := strconv.ParseInt(m[1], 10, 64); n > max {
			max = n
		}
	}
	return max
}

// sendIn sends a few UDP datagrams to addr from inside network namespace
// ns (the socket is made there, by a thread that enters it).
func sendIn(t *testing.T, ns, addr string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the thread is left in ns and ends with the goroutine
		h, err := netns.GetFromName(ns)
		if err != nil {
			errc <- err
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		c, err := net.Dial("udp4", addr)
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		for i := 0; i < 3; i++ {
			c.Write([]byte("swmgr gnmi test"))
			time.Sleep(200 * time.Millisecond)
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatalf("sending in %s: %v", ns, err)
	}
}

// ocProto is an OpenConfig path, written /a/b[k=v]/c (a key's value may
// hold "/"), as gnmi_cli's text proto.
func ocProto(s string) string {
	var parts []string
	depth, start := 0, 1
	for i := 1; i <= len(s); i++ {
		switch {
		case i == len(s) || s[i] == '/' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		case s[i] == '[':
			depth++
		case s[i] == ']':
			depth--
		}
	}
	var b strings.Builder
	b.WriteString(`origin:"openconfig"`)
	for _, part := range parts {
		name, rest, _ := strings.Cut(part, "[")
		fmt.Fprintf(&b, ` elem:<name:%q`, name)
		for rest != "" {
			kv, after, _ := strings.Cut(rest, "]")
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, ` key:<key:%q value:%q>`, k, v)
			rest = strings.TrimPrefix(after, "[")
		}
		b.WriteString(">")
	}
	return b.String()
}

// ocUpdate is an update of an OpenConfig path to a JSON value, as
// gnmi_cli's text proto.
func ocUpdate(path, value string) string {
	return fmt.Sprintf("update:<path:<%s> val:<json_val:%q>>\n", ocProto(path), value)
}

const (
	ocSwitched1 = "/interfaces/interface[name=fpPort1]/ethernet/switched-vlan"
	ocSwitched2 = "/interfaces/interface[name=fpPort2]/ethernet/switched-vlan"
	ocRoute     = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=STATIC][name=STATIC]/static-routes/static[prefix=10.2.0.0/16]"
	ocAddress3  = "/interfaces/interface[name=fpPort3]/subinterfaces/subinterface[index=0]/ipv4/addresses/address[ip=10.3.0.1]"
	ocRedIntf3  = "/network-instances/network-instance[name=red]/interfaces/interface[id=fpPort3]"
)

// The OpenConfig paths of a port's VLAN membership (switched-vlan), static
// routes, a network instance's interfaces and IPv4 addresses, with
// gnmi_cli: Get, Set (each a commit whose objects REST then shows), and
// ON_CHANGE of a port's VLANs seeing a REST commit; bad values are
// InvalidArgument and leave the store byte-identical.
func TestGNMIOpenConfigMappings(t *testing.T) {
	dir := t.TempDir()
	g := startGNMIServer(t, dir)
	g.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":10}`)
	g.expect(t, 201, "POST", "/config/Vlan", `{"VlanId":20}`)
	g.expect(t, 201, "POST", "/config/Vrf", `{"Vrf":"red"}`)

	// VLAN membership: a REST commit reaches an ON_CHANGE subscriber of
	// the port's switched-vlan; a Set moves the port into the Vlans' lists.
	out, done := g.background(t, "-dt", "p", "-sd", "30s", "-proto", `subscribe:<prefix:<> mode:STREAM encoding:JSON
subscription:<path:<`+ocProto(ocSwitched2+"/config")+`> mode:ON_CHANGE>>`)
	waitFor(t, out, "sync_response:true")
	g.expect(t, 200, "PATCH", "/config/Vlan", `{"VlanId":10,"UntagIntfList":["fpPort2"]}`)
	waitFor(t, out, `name:"access-vlan"}}val:{json_val:"10"}`)
	waitFor(t, out, `json_val:"\"ACCESS\""`)
	g.admin(t, "-set", "-proto", ocUpdate(ocSwitched1+"/config", `{"openconfig-vlan:interface-mode":"TRUNK","native-vlan":10,"trunk-vlans":[20]}`))
	mustContain(t, string(g.expect(t, 200, "GET", "/config/Vlan?VlanId=20", "").raw), `"IntfList":["fpPort1"]`)
	mustContain(t, string(g.expect(t, 200, "GET", "/config/Vlan?VlanId=10", "").raw), `"UntagIntfList":["fpPort2","fpPort1"]`)
	got := g.admin(t, "-get", "-proto", `path:<`+ocProto("/interfaces/interface[name=*]/ethernet/switched-vlan/config/trunk-vlans")+`> encoding:JSON_IETF`)
	mustContain(t, got, `value:"fpPort1"`, `json_ietf_val:"[20]"`)
	select {
	case err := <-done:
		t.Fatalf("the stream ended early: %v\n%s", err, out)
	default:
	}

	// A static route with its next hop and metric (IPv4Route's Cost).
	g.admin(t, "-set", "-proto", ocUpdate(ocRoute+"/next-hops/next-hop[index=10.1.1.2]/config", `{"index":"10.1.1.2","next-hop":"10.1.1.2","metric":5}`))
	route := string(g.expect(t, 200, "GET", "/config/IPv4Route?DestinationNw=10.2.0.0&NetworkMask=255.255.0.0", "").raw)
	mustContain(t, route, `"NextHopIp":"10.1.1.2"`, `"Cost":5`)
	got = g.admin(t, "-get", "-proto", `path:<`+ocProto(strings.Replace(ocRoute, "10.2.0.0/16", "*", 1)+"/next-hops/next-hop[index=*]/config/metric")+`> encoding:JSON`)
	mustContain(t, got, `value:"10.2.0.0/16"`, `value:"10.1.1.2"`, `json_val:"5"`)

	// An IPv4 address and its interface in VRF red, in one SetRequest.
	g.admin(t, "-set", "-proto", ocUpdate(ocAddress3+"/config", `{"ip":"10.3.0.1","prefix-length":24}`)+
		ocUpdate(ocRedIntf3+"/config", `{"id":"fpPort3","interface":"fpPort3","subinterface":0}`))
	mustContain(t, string(g.expect(t, 200, "GET", "/config/IPv4Intf?IntfRef=fpPort3", "").raw), `"IpAddr":"10.3.0.1/24"`, `"Vrf":"red"`)
	got = g.admin(t, "-get", "-proto", `path:<`+ocProto("/network-instances/network-instance[name=*]/interfaces/interface[id=*]/config/interface")+`> encoding:JSON`)
	mustContain(t, got, `value:"red"`, `json_val:"\"fpPort3\""`)
	got = g.admin(t, "-get", "-proto", `path:<`+ocProto("/interfaces/interface[name=fpPort3]/subinterfaces/subinterface[index=0]/ipv4/addresses/address[ip=*]/config/prefix-length")+`> encoding:JSON`)
	mustContain(t, got, `value:"10.3.0.1"`, `json_val:"24"`)

	// Bad values: InvalidArgument, and the store as it was.
	g.stop(t)
	before := dump(t, dir)
	g = startGNMIServer(t, dir)
	for _, bad := range []string{
		ocUpdate(ocSwitched2+"/config/interface-mode", `"TRUNK"`),
		ocUpdate(ocSwitched2+"/config/trunk-vlans", `[30]`),
		ocUpdate(ocSwitched2+"/config/access-vlan", `5000`),
		ocUpdate(ocRoute+"/next-hops/next-hop[index=10.1.1.3]/config/next-hop", `"10.1.1.4"`),
		ocUpdate(strings.Replace(ocRoute, "10.2.0.0/16", "10.2.0.1/16", 1)+"/next-hops/next-hop[index=10.1.1.2]/config/next-hop", `"10.1.1.2"`),
		ocUpdate(ocRedIntf3+"/config/subinterface", `2`),
		ocUpdate(strings.Replace(ocAddress3, "10.3.0.1", "10.3.0.9", 1)+"/config/prefix-length", `24`),
		ocUpdate(ocAddress3+"/config/prefix-length", `40`),
		ocUpdate("/interfaces/interface[name=fpPort4]/config/mtu", `9000`) + ocUpdate(ocSwitched1+"/config/trunk-vlans", `[20,99]`),
	} {
		out, ok := g.run(t, "admin", blackBoxAdminPassword, "-set", "-proto", bad)
		if ok || !strings.Contains(out, "code=InvalidArgument") {
			t.Errorf("%s: want InvalidArgument, got %s", bad, out)
		}
	}
	g.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("a refused SetRequest changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
