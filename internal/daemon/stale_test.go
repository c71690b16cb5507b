package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestKillStale: a leftover daemon (its command line names its
// configuration) is killed, and KillStale returns once it is gone, also
// when nobody reaps it (a zombie, as under a pid 1 that does not reap),
// with its pid file removed; a process that does not name the
// configuration is left alone.
func TestKillStale(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "d.conf")
	start := func(arg string) *exec.Cmd {
		// "; exit": a shell runs a lone last command by exec, and the
		// process would then no longer name its configuration.
		cmd := exec.Command("sh", "-c", "sleep 1000; exit 0", "sh", arg)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	pidFile := filepath.Join(dir, "d.pid")

	other := start(filepath.Join(dir, "other.conf"))
	os.WriteFile(pidFile, []byte(strconv.Itoa(other.Process.Pid)+"\n"), 0o644)
	if pid, err := KillStale(context.Background(), pidFile, conf); pid != 0 || err != nil || gone(other.Process.Pid) {
		t.Fatalf("a process of another configuration: killed %d, %v", pid, err)
	}

	stale := start(conf)
	os.WriteFile(pidFile, []byte(strconv.Itoa(stale.Process.Pid)+"\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The test, its parent, does not reap it until KillStale returns.
	pid, err := KillStale(ctx, pidFile, conf)
	if err != nil || pid != stale.Process.Pid {
		t.Fatalf("KillStale = %d, %v", pid, err)
	}
	if !gone(pid) {
		t.Errorf("pid %d is still running", pid)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the pid file is left: %v", err)
	}
}
