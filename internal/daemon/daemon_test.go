package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/syncbuf"
)

// syncBuffer is the log sink the test reads while the service writes it.
type syncBuffer = syncbuf.Buffer

// TestGroupLogsExitsAndRestarts kills a real daemon (sleep) and checks
// that the group restarts it, re-applies its configuration, reports it in
// Status, and says each step in its log with the daemon's name, old pid and
// exit status.
func TestGroupLogsExitsAndRestarts(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	reapplied := make(chan string, 4)
	g := NewGroup([]Spec{{Name: "sleeper", Argv: []string{"sleep", "300"}, LogPath: filepath.Join(t.TempDir(), "sleeper.log")}},
		func(ctx context.Context, name string) error { reapplied <- name; return nil }, log)
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	first := g.Pid("sleeper")
	if first == 0 || !strings.Contains(logs.String(), "msg=\"daemon up\" daemon=sleeper") {
		t.Fatalf("pid %d, log:\n%s", first, logs.String())
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-reapplied:
		if name != "sleeper" {
			t.Fatalf("re-applied %q", name)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("not restarted; log:\n%s", logs.String())
	}
	second := g.Pid("sleeper")
	st := g.Status()[0]
	if second == first || second == 0 || st.RestartCount != 1 || st.State != "up" || !strings.Contains(st.RestartReason, "killed") {
		t.Fatalf("after the kill: pid %d (was %d), status %+v", second, first, st)
	}
	var out string
	deadline := time.Now().Add(5 * time.Second)
	for {
		out = logs.String()
		if strings.Contains(out, "daemon configuration re-applied") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{
		`level=WARN msg="daemon exited; restarting it" daemon=sleeper pid=` + strconv.Itoa(first) + ` status="signal: killed" restart=1`,
		`msg="daemon up" daemon=sleeper pid=` + strconv.Itoa(second) + ` restarts=1`,
		`msg="daemon configuration re-applied" daemon=sleeper`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	g.Stop()
	if out := logs.String(); !strings.Contains(out, `msg="daemon stopped" daemon=sleeper`) || strings.Count(out, "daemon exited") != 1 {
		t.Errorf("a stop is logged as a stop, not an exit:\n%s", out)
	}
}
