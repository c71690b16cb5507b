package main

import (
	"bytes"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

func strconvItoa(n int) string { return strconv.Itoa(n) }

func runCmd(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// runAs runs a command as another user id (the test runs as root).
func runAs(uid uint32, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestVersion(t *testing.T) {
	saved := [2]string{buildVersion, buildCommit}
	defer func() { buildVersion, buildCommit = saved[0], saved[1] }()
	buildVersion, buildCommit = "9.8.7", "0123456789abcdef0123456789abcdef01234567"
	want := "swmgr 9.8.7 (commit 0123456789abcdef0123456789abcdef01234567, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		root := rootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("swmgr %v: %q, want %q", args, out.String(), want)
		}
	}
}
