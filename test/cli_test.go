// Black-box tests of `swmgr cli`: scripted sessions (piped stdin, -c, -f)
// against a running swmgr, checked through REST afterwards.

package test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runCLI runs `swmgr cli` on s's Unix socket with stdin and extra flags;
// it returns the output and the exit status.
func runCLI(t testing.TB, s *server, stdin string, extra ...string) (string, int) {
	t.Helper()
	args := append([]string{"cli", "--socket", filepath.Join(s.dir, "swmgr.sock")}, extra...)
	cmd := exec.Command(swmgrBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// cliCandidateWhilePending feeds stdin to `swmgr cli` and keeps its input
// open until the session's candidate shows in GET /candidates (the CLI and
// the test are the same local user); then it ends the input, waits for the
// CLI to exit and returns that candidate's id.
func cliCandidateWhilePending(t *testing.T, s *server, stdin string) string {
	t.Helper()
	before := map[string]bool{}
	for _, id := range candidateIDs(t, s) {
		before[id] = true
	}
	cmd := exec.Command(swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if _, err := io.WriteString(in, stdin); err != nil {
		t.Fatal(err)
	}
	cand := ""
	for cand == "" {
		for _, id := range candidateIDs(t, s) {
			if !before[id] {
				cand = id
			}
		}
		if cand != "" {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the CLI exited (%v) with its input still open and no candidate made:\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	in.Close()
	if err := <-exited; err != nil {
		t.Fatalf("cli: %v\n%s", err, out.String())
	}
	return cand
}

// candidateIDs lists the test user's candidates.
func candidateIDs(t *testing.T, s *server) []string {
	t.Helper()
	var ids []string
	list, _ := s.expect(t, 200, "GET", "/candidates", "").body["Candidates"].([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			id, _ := m["CandidateId"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

func mustContain(t testing.TB, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// configScript configures one of everything a FlexSwitch operator types.
const configScript = `enable
config
interface fpPort 1
no shut
ip address 10.1.1.1/30
exit
exit
vrf red
exit
router bgp 65001
router_id 10.0.0.1
neighbor ip 10.1.1.2
peer_as 65002
description "to spine 1"
exit
vrf red
maximum_paths 4
exit
exit
span session s1
DstIntfRef fpPort 2
SrcIntfRefList fpPort3
exit
ntp server 10.0.0.5
exit
archive server 10.0.0.9
Username backup
exit
user bob
DefaultShell Bash
Password first-password-1
exit
user bob password second-password-2
showunapplied
apply
`

func TestCLIScriptedContexts(t *testing.T) {
	s := startServer(t, "")
	out, code := runCLI(t, s, configScript)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	mustContain(t, out,
		"switch(config-if-fpPort-1)#no shut",
		"switch(config-if-fpPort-1-ip-10.1.1.1/30)#exit",
		"switch(config-router-bgp-65001-neighbor-10.1.1.2)#peer_as 65002",
		"switch(config-router-bgp-65001-vrf-red)#maximum_paths 4",
		"switch(config-span-session-s1)#",
		"switch(config-user)#",
		"switch(config-ntp-server-10.0.0.5)#",
		"switch(config-archive-server-10.0.0.9)#",
		"\tobject: NtpServer   status: PENDING CONFIG  valid: True",
		// NTP's defaults in showunapplied, FlexSwitch's columns.
		" command                attr          value       model attr    iskey    required    userprov    time provisioned",
		"                        MinPoll       6           MinPoll       False",
		"                        MaxPoll       10          MaxPoll       False",
		"Interval", "1440", "RetryCount",
		"sdk:updatePort(fpPort1,AdminState=UP) result: SUCCESS: http status code: 200",
		"sdk:createIPv4Intf(fpPort1,10.1.1.1/30) result: SUCCESS: http status code: 201",
		"sdk:createBGPv4Neighbor(default,10.1.1.2,,PeerAS=65002,Description=to spine 1) result: SUCCESS: http status code: 201",
		"sdk:createVrf(red) result: SUCCESS: http status code: 201",
		"sdk:executeUserPassword(bob,********) result: SUCCESS: http status code: 200",
	)
	if strings.Contains(out, "first-password-1") || strings.Contains(out, "second-password-2") {
		t.Errorf("a password is printed:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes on a pipe")
	}
	get := func(path string) map[string]any { t.Helper(); return s.expect(t, 200, "GET", path, "").object() }
	checkFields(t, "port", get("/config/Port?IntfRef=fpPort1"), map[string]any{"AdminState": "UP"})
	checkFields(t, "ipv4", get("/config/IPv4Intf?IntfRef=fpPort1"), map[string]any{"IpAddr": "10.1.1.1/30"})
	checkFields(t, "bgp", get("/config/BGPGlobal"), map[string]any{"ASNum": "65001", "RouterId": "10.0.0.1"})
	checkFields(t, "neighbor", get("/config/BGPv4Neighbor?NeighborAddress=10.1.1.2&Vrf=default"), map[string]any{"PeerAS": "65002", "Description": "to spine 1"})
	checkFields(t, "bgp vrf", get("/config/BGPVrf?Name=red"), map[string]any{"EBGPMaxPaths": float64(4)})
	checkFields(t, "span", get("/config/Span?SpanSessionName=s1"), map[string]any{"DstIntfRef": "fpPort2", "SrcIntfRefList": []any{"fpPort3"}})
	checkFields(t, "ntp", get("/config/NtpServer?IpAddr=10.0.0.5"), map[string]any{"MinPoll": float64(6), "MaxPoll": float64(10)})
	checkFields(t, "archive", get("/config/ArchiveServer?IpAddr=10.0.0.9"[:0]+"/config/ConfigArchiveServer?IpAddr=10.0.0.9"), map[string]any{"Username": "backup"})
	checkFields(t, "user", get("/config/User?Name=bob"), map[string]any{"DefaultShell": "Bash"})
	// The one-liner changed bob's password.
	basic := func(pw string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+pw)) }
	s.expect(t, 200, "GET", "/config/SystemParam", "", "Authorization", basic("second-password-2"))
	s.expect(t, 401, "GET", "/config/SystemParam", "", "Authorization", basic("first-password-1"))

	// The shows, FlexSwitch's way.
	out, code = runCLI(t, s, "show ip interface\nshow ip bgp neighbor 10.1.1.2\nshow vrf\nshow ntp server\nshow span session s1\nshow user | include bob\nshow config log | count\nshow ip bgp vrf nosuch\n")
	if code != 0 {
		t.Fatalf("shows: exit %d\n%s", code, out)
	}
	mustContain(t, out, "Applying Show:", " IntfRef    IpAddr", "fpPort1    10.1.1.1/30", "10.1.1.2", "red", "10.0.0.5", "s1", "bob", "Count: ", "No Data To Display for BGPVrfState")
}

func TestCLIShowRunRoundTrip(t *testing.T) {
	s := startServer(t, "")
	script := strings.Replace(configScript, "user bob password second-password-2\n", "", 1)
	script = strings.Replace(script, "user bob\nDefaultShell Bash\nPassword first-password-1\nexit\n", "", 1)
	if out, code := runCLI(t, s, script); code != 0 {
		t.Fatalf("configure: %d\n%s", code, out)
	}
	showRun := func() string {
		t.Helper()
		out, code := runCLI(t, s, "", "-c", "show run")
		if code != 0 {
			t.Fatalf("show run: %d\n%s", code, out)
		}
		return strings.TrimPrefix(out, "switch>show run\n")
	}
	first := showRun()
	mustContain(t, first, "printing without defaults\n!\nvrf red\n", "interface fpPort 1\n  no shutdown\n  ip address 10.1.1.1/30\n",
		"router bgp 65001\n  router_id 10.0.0.1\n  vrf red\n    maximum_paths 4\n  neighbor ip 10.1.1.2\n    peer_as 65002\n    description \"to spine 1\"\n")

	// reset config default: the factory configuration.
	out, code := runCLI(t, s, "enable\nconfig\nreset config default\nshowunapplied\napply\n")
	if code != 0 {
		t.Fatalf("reset: %d\n%s", code, out)
	}
	mustContain(t, out, "object: ResetConfig   status: PENDING CONFIG", "sdk:executeResetConfig() result: SUCCESS: http status code: 200")
	s.expect(t, 404, "GET", "/config/Vrf?Vrf=red", "")
	checkFields(t, "bgp after reset", s.expect(t, 200, "GET", "/config/BGPGlobal", "").object(), map[string]any{"ASNum": ""})
	bare := showRun()
	if strings.Contains(bare, "router bgp") || strings.Contains(bare, "vrf red") {
		t.Fatalf("show run after reset:\n%s", bare)
	}

	// Paste it into (config)#: the admin User exists, so its block only
	// re-states its Group. The secrets show run does not show (the
	// admin's password, the archive server's, the BGP neighbor's) are
	// refused line by line, naming the field, and the replay exits 1;
	// everything else is applied.
	paste := first
	out, code = runCLI(t, s, "enable\nconfig\n"+paste+"apply\n")
	if code != 1 {
		t.Errorf("replay with secrets not shown: exit %d, want 1\n%s", code, out)
	}
	if n, m := strings.Count(out, "ERROR"), strings.Count(out, "show run never shows a secret"); n == 0 || n != m || n != strings.Count(first, "<secret-not-shown>") {
		t.Errorf("replay: %d errors, %d of them secrets not shown; want one per <secret-not-shown> line\n%s", n, m, out)
	}
	if again := showRun(); again != first {
		t.Errorf("show run does not round-trip:\nfirst:\n%s\nafter replay:\n%s", first, again)
	}
}

func TestCLIPendingClearAndExitQuestion(t *testing.T) {
	s := startServer(t, "")
	out, code := runCLI(t, s, "enable\nconfig\nvrf green\nexit\nclearunapplied\nshowunapplied\nvrf blue\nexit\nexit\nno\nshow config diff\nexit\nyes\nshow run\n")
	if code != 0 {
		t.Fatalf("%d\n%s", code, out)
	}
	mustContain(t, out, "Clearing Unapplied Config",
		"Are you sure you want to exit? You have pending config [no]yes:no\nswitch(config)#",
		"+ vrf blue",
		"[no]yes:yes\nswitch#show run")
	if strings.Contains(out[strings.Index(out, "Clearing"):], "object: Vrf   status") {
		t.Errorf("clearunapplied left an entry:\n%s", out)
	}
	for _, v := range []string{"green", "blue"} {
		s.expect(t, 404, "GET", "/config/Vrf?Vrf="+v, "")
	}
}

func TestCLIScriptingModes(t *testing.T) {
	s := startServer(t, "")
	// -c with a failing line: non-zero status, the other lines run.
	out, code := runCLI(t, s, "", "-c", "enable; config; vrf v1; exit; nonsense; apply")
	if code == 0 {
		t.Errorf("a failed line gave exit status 0:\n%s", out)
	}
	mustContain(t, out, "nonsense\n^\nERROR Invalid command entered", "sdk:createVrf(v1) result: SUCCESS")
	s.expect(t, 200, "GET", "/config/Vrf?Vrf=v1", "")
	// -f file.
	f := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(f, []byte("enable\nconfig\nno vrf v1\napply comment remove v1\nshow config history | include remove v1\n"), 0o644)
	out, code = runCLI(t, s, "", "-f", f)
	if code != 0 {
		t.Fatalf("-f: %d\n%s", code, out)
	}
	mustContain(t, out, "sdk:deleteVrf(v1) result: SUCCESS:   http status code: 200", "remove v1")
	s.expect(t, 404, "GET", "/config/Vrf?Vrf=v1", "")
	// apply check changes nothing; rollback loads the undo into pending.
	out, code = runCLI(t, s, "enable\nconfig\nvrf v2\nexit\napply check\nclearunapplied\nshow config history | json\n")
	if code != 0 {
		t.Fatalf("check: %d\n%s", code, out)
	}
	mustContain(t, out, "OK create Vrf Vrf=v2", "Check passed", `"Revision":`)
	s.expect(t, 404, "GET", "/config/Vrf?Vrf=v2", "")
	// Leaving with something pending discards it, candidate included: the
	// session's candidate exists while its input is open, and is gone once
	// the CLI has exited (it discards before exiting).
	cand := cliCandidateWhilePending(t, s, "enable\nconfig\nvrf v3\nexit\n")
	s.expect(t, 404, "GET", "/candidates/"+cand, "")
	s.expect(t, 404, "GET", "/config/Vrf?Vrf=v3", "")
	// write memory saves at once.
	out, code = runCLI(t, s, "", "-c", "enable; write memory")
	if code != 0 {
		t.Fatalf("write memory: %d\n%s", code, out)
	}
	mustContain(t, out, "sdk:executeSaveConfig() result: SUCCESS: http status code: 200")
	if _, err := os.Stat(filepath.Join(s.dir, "startup-config")); err != nil {
		t.Errorf("write memory wrote nothing: %v", err)
	}
}

// TestCLIRemoteHTTPS reaches swmgr over HTTPS as a User: the password from
// $SWMGR_PASSWORD, the certificate checked with --cacert or a pinned
// fingerprint; a wrong pin or password gets nowhere.
func TestCLIRemoteHTTPS(t *testing.T) {
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr)
	cert := filepath.Join(s.dir, "tls-cert.pem")
	pemBytes, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	sum := sha256.Sum256(block.Bytes)
	pin := hex.EncodeToString(sum[:])
	remote := func(password string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(swmgrBin, append([]string{"cli", "--url", "https://" + addr, "--user", "admin", "-c", "show vrf"}, args...)...)
		cmd.Env = append(os.Environ(), "SWMGR_PASSWORD="+password)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		return string(out), 0
	}
	for _, args := range [][]string{{"--cacert", cert}, {"--fingerprint", pin}} {
		out, code := remote("black-box-admin-password", args...)
		if code != 0 || !strings.Contains(out, "Applying Show:") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	bad := strings.Repeat("0", 64)
	if out, code := remote("black-box-admin-password", "--fingerprint", bad); code == 0 || !strings.Contains(out, "pinned") {
		t.Errorf("a wrong pin was accepted (%d):\n%s", code, out)
	}
	if out, code := remote("black-box-admin-password"); code == 0 {
		t.Errorf("an unverified certificate was accepted:\n%s", out)
	}
	if out, code := remote("wrong-password", "--cacert", cert); code == 0 || !strings.Contains(out, "401") {
		t.Errorf("a wrong password got in (%d):\n%s", code, out)
	}
}

// TestCLIRoutesVlanAndConfirmStatus: a static route (two-part key, next
// hop records), a VLAN (a command derived from the model), a refused
// action that keeps everything pending, and the confirm-status of a
// confirmed apply, through the real binary and checked over REST.
func TestCLIRoutesVlanAndConfirmStatus(t *testing.T) {
	s := startServer(t, "")
	out, code := runCLI(t, s, `enable
config
interface fpPort 1
ip address 10.1.1.1/30
!
ip route 10.2.0.0 255.255.0.0
nexthop 10.1.1.2 weight 3
!
vlan 20
UntagIntfList fpPort 2
!
user admin password short
apply
clearunapplied
`)
	if code == 0 {
		t.Fatalf("a refused action gave exit status 0:\n%s", out)
	}
	mustContain(t, out, "switch(config-ip-route-10.2.0.0-255.255.0.0)#nexthop 10.1.1.2 weight 3", "switch(config-vlan)#", "sdk:executeUserPassword(admin,********) result: FAILED: 400", "Nothing was changed")
	s.expect(t, 404, "GET", "/config/Vlan?VlanId=20", "")

	out, code = runCLI(t, s, `enable
config
interface fpPort 1
ip address 10.1.1.1/30
!
ip route 10.2.0.0 255.255.0.0 nexthop 10.1.1.2 weight 3
vlan 20
UntagIntfList fpPort 2
!
apply confirmed 3
show config confirm-status
show run
`)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	mustContain(t, out, "sdk:createIPv4Route(10.2.0.0,255.255.0.0,NextHop=10.1.1.2 weight 3) result: SUCCESS: http status code: 201",
		"sdk:createVlan(20,UntagIntfList=fpPort2) result: SUCCESS: http status code: 201",
		"Rolled back at              Time left", "!\nip route 10.2.0.0 255.255.0.0\n  nexthop 10.1.1.2 weight 3\n", "!\nvlan 20\n  UntagIntfList fpPort2\n")
	// The User column is as wide as the name of the OS user running the
	// test (root, or another when not root).
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ Revision +User +Comment +Rolled back at`).MatchString(out) {
		t.Errorf("confirm-status lacks its header:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^ \d+ +` + regexp.QuoteMeta(me.Username) + ` +.* (2:5\d|3:00)$`).MatchString(out) {
		t.Errorf("confirm-status lacks %s's commit with about 3 minutes left:\n%s", me.Username, out)
	}
	// The CLI's commit is recorded as such, and the server shows what it awaits.
	page := s.expect(t, 200, "GET", "/revisions?Count=1", "").body
	newest := page["Objects"].([]any)[0].(map[string]any)["Object"].(map[string]any)
	if newest["Source"] != "cli" {
		t.Errorf("the CLI's commit has Source %v, want cli", newest["Source"])
	}
	if p := s.expect(t, 200, "GET", "/revisions/pending", "").body; p["Awaiting"] != true || p["Revision"] != newest["Revision"] {
		t.Errorf("GET /revisions/pending: %v, want revision %v awaiting", p, newest["Revision"])
	}
	route := s.expect(t, 200, "GET", "/config/IPv4Route?DestinationNw=10.2.0.0&NetworkMask=255.255.0.0", "").object()
	if hops, _ := route["NextHop"].([]any); len(hops) != 1 || jsonOf(hops[0]) != `{"NextHopIntRef":"","NextHopIp":"10.1.1.2","Weight":3}` {
		t.Errorf("NextHop over REST: %v", route["NextHop"])
	}
	checkFields(t, "vlan", s.expect(t, 200, "GET", "/config/Vlan?VlanId=20", "").object(), map[string]any{"UntagIntfList": []any{"fpPort2"}})
	// Another session: plain `confirm` keeps the commit the switch awaits.
	rev := regexp.MustCompile(`Revision (\d+) is rolled back`).FindStringSubmatch(out)[1]
	out, code = runCLI(t, s, "", "-c", "enable; confirm; show config confirm-status")
	if code != 0 {
		t.Fatalf("confirm: %d\n%s", code, out)
	}
	mustContain(t, out, "Revision "+rev+" confirmed", "No commit awaits confirmation")
}

// An action whose dry run passes but which then fails would leave apply
// half done: the objects typed with it committed, the save not made. A
// save to a directory that does not exist is refused by the dry run, so
// nothing is committed.
func TestCLIApplyRefusesASaveThatWouldFail(t *testing.T) {
	s := startServer(t, "")
	out, code := runCLI(t, s, "enable\nconfig\nntp server 192.0.2.77\nexit\nsave config toFile\nDstFileURI file://"+t.TempDir()+"/nodir/cfg\napply\n")
	if code == 0 || !strings.Contains(out, "FAILED: 400") || !strings.Contains(out, "Nothing was changed") {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	s.expect(t, 404, "GET", "/config/NtpServer?IpAddr=192.0.2.77", "")
}
