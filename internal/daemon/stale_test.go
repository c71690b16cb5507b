package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillStale: a leftover daemon (its command line names its
// configuration) is killed, and KillStale returns once it is gone, also
// when nobody reaps it (a zombie, as under a pid 1 that does not reap),
// with its pid file removed; a process that does not name the
// configuration is left alone. Nothing the test started outlives it: each
// shell runs in a process group of its own, killed whole at the end (the
// shell's sleep, orphaned when KillStale kills the shell, included).
func TestKillStale(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "d.conf")
	var sleeps []int
	// Registered first, so run last: after every group's kill.
	t.Cleanup(func() {
		for _, pid := range sleeps {
			// SIGKILL is delivered by the time the process is scheduled
			// again: give it that long.
			for deadline := time.Now().Add(10 * time.Second); !gone(pid) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if !gone(pid) {
				t.Errorf("the test left its sleep (pid %d) running", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	start := func(arg string) *exec.Cmd {
		// "; exit": a shell runs a lone last command by exec, and the
		// process would then no longer name its configuration.
		cmd := exec.Command("sh", "-c", "sleep 1000; exit 0", "sh", arg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		sleeps = append(sleeps, childOf(t, cmd.Process.Pid))
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

// childOf waits for the first child of pid to start and returns its pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the children of %d: %v", pid, err)
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatalf("%s: %q", path, b)
			}
			return child
		}
	}
	t.Fatalf("pid %d started no child", pid)
	return 0
}
