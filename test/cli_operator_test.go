package test

import (
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// operatorServer is a swmgr with a routed port, a BGP neighbor, an NTP
// server and a VLAN, for the shows.
func operatorServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t, "")
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP","Description":"to spine 1"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/30"}`},
		{"POST", "/config/Vlan", `{"VlanId":10,"UntagIntfList":["fpPort4"]}`},
		{"PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`},
		{"POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.2","PeerAS":"65002"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`},
	} {
		if r := s.do(t, c.method, c.path, c.body); r.code >= 300 {
			t.Fatalf("%s %s: %s", c.method, c.path, r)
		}
	}
	return s
}

func cliPane(t *testing.T, s *server) *pane {
	t.Helper()
	p := startPane(t, []string{"HOME=" + t.TempDir()}, swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"), "--no-color")
	p.waitPrompt("switch>")
	p.line("terminal length 0", "switch>")
	return p
}

func wantIn(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: lacks %q:\n%s", what, w, got)
		}
	}
}

// TestCLIOperatorHabits: the words EOS, IOS, NX-OS and Junos users type
// work beside FlexSwitch's, at a real terminal.
func TestCLIOperatorHabits(t *testing.T) {
	s := operatorServer(t)
	p := cliPane(t, s)
	p.line("en", "switch#")
	// sh is show (not show_cli or shell); sh ip int br is the brief table.
	wantIn(t, "sh ip int br", p.line("sh ip int br", "switch#"),
		"Interface    IP Address     VRF        Admin    Oper", "fpPort1      10.1.1.1/30    default    UP")
	wantIn(t, "show ip bgp summary", p.line("show ip bgp summary", "switch#"),
		"Neighbor    VRF        AS       UpdRcvd    UpdSent    Up/Down", "10.1.1.2    default    65002", "Idle")
	wantIn(t, "show ip bgp (a word missing)", p.line("show ip bgp", "switch#"), "% Incomplete command")
	wantIn(t, "show interfaces status", p.line("show interfaces status", "switch#"),
		"Port        Name          Status    Vlan", "fpPort1     to spine 1    UP", "fpPort4     FP Port       DOWN      10")
	wantIn(t, "show interfaces", p.line("show interfaces", "switch#"), "Port        Admin    Oper    Speed    MTU     VLAN    IP Address     Description", "10.1.1.1/30")
	wantIn(t, "show interfaces brief", p.line("show interfaces brief", "switch#"), "Port        Admin    Oper")
	// FlexSwitch's word keeps its Applying Show: and REST names.
	wantIn(t, "show interface", p.line("show interface", "switch#"), "Applying Show:", " IntfRef     AdminState    OperState")
	wantIn(t, "show interface fpPort 1", p.line("show interface fpPort 1", "switch#"), "  IntfRef ", "  Description ", "to spine 1", "  IfInOctets ")
	wantIn(t, "show ip bgp neighbor 10.1.1.2", p.line("show ip bgp neighbor 10.1.1.2", "switch#"), "  SessionState                    Idle", "  PeerType                        external", "  Messages.Received.Update        0")
	wantIn(t, "show ntp associations", p.line("show ntp associations", "switch#"), "Server        Prefer    Status", "192.0.2.10", "16")
	wantIn(t, "show ntp status", p.line("show ntp status", "switch#"), "No Data To Display for NtpServerState (none with Selected)")
	wantIn(t, "show ip route", p.line("show ip route", "switch#"), "10.1.1.0/30", "CONNECTED")
	wantIn(t, "show lldp neighbors", p.line("show lldp neighbors", "switch#"), "IntfRef", "fpPort1")
	wantIn(t, "show users", p.line("show users", "switch#"), "Name     Access    DefaultShell    Group", "admin")
	wantIn(t, "show version", p.line("show version", "switch#"), "  FlexswitchVersion  ", "  Repos[1].Name ")
	wantIn(t, "show ip bgp summary | json", p.line("show ip bgp summary | json", "switch#"), `"SessionState": 1`)

	// conf t, then do and write memory inside a context.
	p.line("conf t", "switch(config)#")
	p.line("int fpPort 3", "switch(config-if-fpPort-3)#")
	wantIn(t, "do sh run", p.line("do sh run", "switch(config-if-fpPort-3)#"), "printing without defaults", "interface fpPort 1")
	wantIn(t, "do show interfaces status", p.line("do show interfaces status", "switch(config-if-fpPort-3)#"), "fpPort3")
	wantIn(t, "wr mem", p.line("wr mem", "switch(config-if-fpPort-3)#"), "sdk:executeSaveConfig() result: SUCCESS")
	p.line("exit", "switch(config)#")

	// ? lists each word once, the actions apart, and value forms.
	help := p.line("?", "switch(config)#")
	if n := strings.Count(help, "\n user "); n != 1 {
		t.Errorf("? lists user %d times:\n%s", n, help)
	}
	wantIn(t, "?", help, "actions (run by apply):", " save config ", " rollback ", "previous <n>", " do ")
	wantIn(t, "router bgp ?", p.line("router bgp ?", "switch(config)#"), "<1-4294967295>")
	p.line("router bgp 65001", "switch(config-router-bgp-65001)#")
	wantIn(t, "neighbor ip ?", p.line("neighbor ip ?", "switch(config-router-bgp-65001)#"), "<A.B.C.D>")
	wantIn(t, "router_id ?", p.line("router_id ?", "switch(config-router-bgp-65001)#"), "<A.B.C.D>")
	// TAB where no value can be listed shows its form.
	p.typeText("router_id ")
	p.keys("Tab")
	p.waitFor("the value form on TAB", func(s string) bool { return strings.Contains(s, "\n<A.B.C.D>  ") })
	p.keys("C-u")
	p.line("exit", "switch(config)#")
	// | completes its filters.
	p.typeText("show run | inc")
	p.keys("Tab")
	p.waitFor("| inc completed", func(s string) bool { return strings.HasSuffix(strings.TrimRight(s, "\n"), "show run | include ") })
	p.keys("C-u")
	p.typeText("show run | ")
	p.keys("Tab")
	p.keys("Tab")
	p.waitFor("the filters listed", func(s string) bool {
		return strings.Contains(s, "include") && strings.Contains(s, "exclude") && strings.Contains(s, "no-more")
	})
	p.keys("C-u")
	p.line("end", "switch#")
}

// TestCLINoticesAndStaleEntries: a session with pending config is told at
// once when another client commits, and its apply names the entries that
// no longer apply and commits nothing.
func TestCLINoticesAndStaleEntries(t *testing.T) {
	s := startServer(t, "")
	p := cliPane(t, s)
	p.line("en", "switch#")
	p.line("config", "switch(config)#")
	p.line("ntp server 192.0.2.20", "switch(config-ntp-server-192.0.2.20)#")
	p.line("exit", "switch(config)#")
	p.line("vrf blue", "switch(config-vrf)#")
	p.line("exit", "switch(config)#")
	// Another client creates the same NTP server.
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.20"}`)
	scr := p.waitFor("the notice", func(s string) bool { return strings.Contains(s, "% Notice: revision") })
	wantIn(t, "notice", scr, "is a commit by "+osUser(t)+" (rest): 1 change; it changed what your pending ntp server 192.0.2.20 change")
	wantIn(t, "apply check", p.line("apply check", "switch(config)#"), "sdk:createNtpServer(192.0.2.20) result: FAILED: no longer applies: 409")
	out := p.line("apply", "switch(config)#")
	wantIn(t, "apply", out, "The running configuration changed since these entries were typed: revision",
		"sdk:createNtpServer(192.0.2.20) result: FAILED: no longer applies: 409",
		"CONFIG FAILED", "Nothing was changed; the pending config is kept")
	if strings.Contains(out, "createVrf") {
		t.Errorf("apply names the vrf, which still applies:\n%s", out)
	}
	// Nothing was committed: no vrf blue.
	s.expect(t, 404, "GET", "/config/Vrf?Vrf=blue", "")
	// Removing what no longer applies lets the rest through.
	p.line("no ntp server 192.0.2.20", "switch(config)#")
	wantIn(t, "apply again", p.line("apply", "switch(config)#"), "sdk:createVrf(blue) result: SUCCESS")
	s.expect(t, 200, "GET", "/config/Vrf?Vrf=blue", "")
	// A rollback by someone else is told too; this session's own apply
	// was not.
	h := p.history()
	if n := strings.Count(h, "% Notice:"); n != 1 {
		t.Errorf("%d notices, want 1 (the other client's commit):\n%s", n, h)
	}
	s.expect(t, 200, "POST", "/action/Rollback", `{"Revision":2}`)
	p.waitFor("the rollback notice", func(s string) bool { return strings.Contains(s, "is a rollback by "+osUser(t)) })
}

// TestCLIShowsFit120Columns: with 32 ports, 100 BGP neighbours and 1,000
// IPv4 routes, no line of any show (every show word show_cli lists, each
// with brief and detail) is wider than 120 columns.
func TestCLIShowsFit120Columns(t *testing.T) {
	s := startServer(t, "", "--ports", "32")
	bulk(t, s, 100, 1000)
	out, code := runCLI(t, s, "", "-c", "show_cli")
	if code != 0 {
		t.Fatalf("show_cli: %d\n%s", code, out)
	}
	var cmds []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "show ") {
			w := strings.TrimSpace(l)
			cmds = append(cmds, w, w+" brief", w+" detail")
		}
	}
	cmds = append(cmds, "show interface fpPort 1", "show ip bgp neighbor 10.128.0.7", "show config revision 2", "show config diff 1")
	if len(cmds) < 60 {
		t.Fatalf("only %d shows:\n%s", len(cmds), out)
	}
	out, _ = runCLI(t, s, "", "-c", strings.Join(cmds, "; "))
	lines := strings.Split(out, "\n")
	if len(lines) < 3000 {
		t.Fatalf("%d lines only: the data is not there?\n%s", len(lines), tail(out, 3000))
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 && !strings.HasPrefix(l, "switch>") {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	for _, want := range []string{"switch>show ip bgp summary\n", "10.128.0.99", "switch>show ip route\n", "10.23.3.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
}

// bulk adds n BGP neighbours and routes IPv4 static routes, each set in one
// commit of a candidate.
func bulk(t testing.TB, s *server, neighbors, routes int) {
	t.Helper()
	s.expect(t, 200, "PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`)
	s.expect(t, 201, "POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/30"}`)
	stage := func(kind string, n int, body func(i int) string) {
		c := s.expect(t, 201, "POST", "/candidates", `{}`)
		id := c.str("CandidateId")
		for i := range n {
			if r := s.do(t, "POST", "/candidates/"+id+"/config/"+kind, body(i)); r.code != 201 {
				t.Fatalf("stage %s %d: %s", kind, i, r)
			}
		}
		s.expect(t, 200, "POST", "/candidates/"+id+"/commit", `{}`)
	}
	if neighbors > 0 {
		stage("BGPv4Neighbor", neighbors, func(i int) string {
			return fmt.Sprintf(`{"NeighborAddress":"10.128.%d.%d","PeerAS":"%d","Description":"peer number %d of a long list of peers"}`, i/250, i%250+1, 65100+i, i)
		})
	}
	if routes > 0 {
		stage("IPv4Route", routes, func(i int) string {
			return fmt.Sprintf(`{"DestinationNw":"10.%d.%d.0","NetworkMask":"255.255.255.0","NextHop":[{"NextHopIp":"10.1.1.2"}]}`, 20+i/256, i%256)
		})
	}
}

// osUser is the name of the OS user running the tests: the User a local
// client without credentials acts as (root, or another when not root).
func osUser(t testing.TB) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}
