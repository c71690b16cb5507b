package test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	spb "github.com/openconfig/gnoi/system"
	"google.golang.org/grpc/codes"
)

// chronydStatus is the chronyd entry of state/SystemStatus's FlexDaemons.
func chronydStatus(t *testing.T, s *server) (state string, restarts int) {
	t.Helper()
	r := s.expect(t, 200, "GET", "/state/SystemStatus", "")
	var st struct {
		Object struct {
			FlexDaemons []struct {
				Name, State  string
				RestartCount int
			}
		}
	}
	if err := json.Unmarshal(r.raw, &st); err != nil {
		t.Fatalf("SystemStatus: %v: %s", err, r.raw)
	}
	for _, d := range st.Object.FlexDaemons {
		if d.Name == "chronyd" {
			return d.State, d.RestartCount
		}
	}
	t.Fatalf("SystemStatus names no chronyd: %s", r.raw)
	return "", 0
}

// TestGNOIKillProcessRestartsChronyd: System.KillProcess against a real
// daemon. swmgr on the Linux backend runs chronyd in the switch's
// namespace; an admin's KillProcess by name with SIGKILL kills that
// process, swmgr's supervision starts another, SystemStatus counts the
// restart, and the config log has the request. A name swmgr does not
// run is NotFound, restart false InvalidArgument: chronyd untouched.
func TestGNOIKillProcessRestartsChronyd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs chronyd in a network namespace")
	}
	cs := newChronySwitch(t, "swgk")
	pidFile := cs.pidFile
	g := startGNOIServer(t, cs.flags()...)
	g.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.123"}`)
	sys := spb.NewSystemClient(g.conn)
	admin := asAdmin(t)

	old := pidIn(t, pidFile)
	state, before := chronydStatus(t, g.server)
	if state != "up" {
		t.Fatalf("chronyd is %s before the kill", state)
	}
	_, err := sys.KillProcess(admin, &spb.KillProcessRequest{Name: "zebra", Signal: spb.KillProcessRequest_SIGNAL_KILL, Restart: true})
	wantCode(t, "KillProcess of a daemon not run", err, codes.NotFound)
	_, err = sys.KillProcess(admin, &spb.KillProcessRequest{Name: "chronyd", Signal: spb.KillProcessRequest_SIGNAL_KILL})
	wantCode(t, "KillProcess without restart", err, codes.InvalidArgument)
	if !running(old) {
		t.Fatal("a refused KillProcess killed chronyd")
	}

	if _, err := sys.KillProcess(admin, &spb.KillProcessRequest{Name: "chronyd", Signal: spb.KillProcessRequest_SIGNAL_KILL, Restart: true}); err != nil {
		t.Fatalf("KillProcess chronyd: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		state, after := chronydStatus(t, g.server)
		b, _ := os.ReadFile(pidFile)
		pid := 0
		fmt.Sscan(strings.TrimSpace(string(b)), &pid)
		if state == "up" && after == before+1 && pid != old && pid > 0 && syscall.Kill(pid, 0) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chronyd not restarted a minute after KillProcess: %s, %d restarts (before: %d), pid %d (was %d)", state, after, before, pid, old)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if running(old) {
		t.Errorf("the killed chronyd (pid %d) still runs", old)
	}
	r := g.expect(t, 200, "GET", "/state/NtpServers", "")
	if !strings.Contains(string(r.raw), "192.0.2.123") {
		t.Errorf("the restarted chronyd does not report the stored server: %s", r.raw)
	}
	logs := g.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	if n := strings.Count(string(logs.raw), `"Operation":"KillProcess"`); n != 3 {
		t.Errorf("%d KillProcess entries in the config log, want 3", n)
	}
}
