package daemon

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillStale ends a daemon that outlived the swmgr that started it (a kill
// -9 of swmgr leaves its children running): the process named by pidFile,
// if its command line holds mark (its configuration file's path, so that
// a pid reused by another program is left alone). It sends SIGKILL, waits
// until the process is gone or a zombie (its parent is gone, and whoever
// inherited it need not reap it soon: pid 1 of a container often does
// not), at most until ctx ends, then removes pidFile: a daemon that checks
// its pid file (chronyd asks whether the pid still exists, which a zombie
// does) would otherwise refuse to start. It reports the pid it killed (0:
// none).
func KillStale(ctx context.Context, pidFile, mark string) (int, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, nil
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !bytes.Contains(cmdline, []byte(mark)) {
		return 0, nil
	}
	syscall.Kill(pid, syscall.SIGKILL)
	for !gone(pid) {
		select {
		case <-ctx.Done():
			return pid, fmt.Errorf("the previous daemon (pid %d) did not exit after SIGKILL: %w", pid, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := os.Remove(pidFile); err != nil && !os.IsNotExist(err) {
		return pid, fmt.Errorf("removing the previous daemon's pid file: %w", err)
	}
	return pid, nil
}

// gone reports whether pid has exited: no such process, or a zombie
// waiting to be reaped (which holds no file, socket or lock any more).
func gone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command's closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}
