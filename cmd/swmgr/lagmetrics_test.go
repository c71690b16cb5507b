package main

import (
	"strings"
	"testing"
)

// TestLAGMetrics: /metrics has, per LAG, whether it is up and how many
// members are collecting and distributing, and per member whether it is
// in the bundle, read from the state forms at scrape time: PortChannel1
// of fpPort1 (up) and fpPort2 (down) on the simulated switch is up with
// one member; MinLinks 2 takes it down.
func TestLAGMetrics(t *testing.T) {
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), adminPasswordFile: writeFile(t, "first-admin-pass"), metrics: true})
	s.want(s.req(false, "PATCH", "/config/Port", "", "", `{"IntfRef":"fpPort1","AdminState":"UP"}`), 200, "fpPort1 up")
	s.want(s.req(false, "PATCH", "/config/Port", "", "", `{"IntfRef":"fpPort2","AdminState":"DOWN"}`), 200, "fpPort2 down")
	s.want(s.req(false, "POST", "/config/LaPortChannel", "", "", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort1","fpPort2"]}`), 201, "create the LAG")
	scrape := func(want ...string) {
		t.Helper()
		code, text := s.raw(false, "/metrics", "", "")
		if code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
		for _, w := range want {
			if !strings.Contains(text, "\n"+w+"\n") {
				t.Errorf("metrics lack %s:\n%s", w, grepLines(text, "swmgr_lag"))
			}
		}
	}
	scrape(`swmgr_lag_up{lag="PortChannel1"} 1`, `swmgr_lag_members_up{lag="PortChannel1"} 1`,
		`swmgr_lag_member_up{lag="PortChannel1",port="fpPort1"} 1`, `swmgr_lag_member_up{lag="PortChannel1",port="fpPort2"} 0`)
	s.want(s.req(false, "PATCH", "/config/LaPortChannel", "", "", `{"IntfRef":"PortChannel1","MinLinks":2}`), 200, "MinLinks 2")
	scrape(`swmgr_lag_up{lag="PortChannel1"} 0`, `swmgr_lag_members_up{lag="PortChannel1"} 1`)
}

// grepLines is the lines of text that contain word.
func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
