// Interactive tests of `swmgr cli` through a real terminal: tmux runs it
// in a pane; keys go in with send-keys and the screen is read with
// capture-pane, polled until the expected text shows (never a blind
// sleep).

package test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool skips without the program, except in CI where .ci/run installs
// it and its absence is a failure.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}

type pane struct {
	t    *testing.T
	name string
}

func uniqueName(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// startPane runs argv in a new detached tmux session of 200x50.
func startPane(t *testing.T, env []string, argv ...string) *pane {
	t.Helper()
	needTool(t, "tmux")
	p := &pane{t: t, name: uniqueName("swcli")}
	args := []string{"new-session", "-d", "-s", p.name, "-x", "200", "-y", "50"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, argv...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", p.name).Run() })
	// Keep the screen readable after the program ends.
	exec.Command("tmux", "set-option", "-t", p.name, "remain-on-exit", "on").Run()
	return p
}

func (p *pane) screen() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func lastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

// waitFor polls the screen until ok holds (20 s at most: the machine may
// be loaded).
func (p *pane) waitFor(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s; the screen is:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitPrompt waits until the last line is exactly prompt.
func (p *pane) waitPrompt(prompt string) string {
	p.t.Helper()
	return p.waitFor("the prompt "+prompt, func(s string) bool { return lastLine(s) == prompt })
}

func (p *pane) keys(keys ...string) {
	p.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", p.name}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("send-keys: %v %s", err, out)
	}
}

func (p *pane) typeText(text string) { p.t.Helper(); p.keys("-l", text) }

// history is the whole pane, its scrollback included.
func (p *pane) history() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-J", "-S", "-", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// promptLines counts the lines that start with prompt: each command run
// at that prompt leaves one, and the prompt waiting for input is one.
func promptLines(screen, prompt string) int {
	n := 0
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, prompt) {
			n++
		}
	}
	return n
}

// line types a command, presses Enter and waits for the next prompt: a
// new one, not the prompt the command was typed at (the screen can still
// show that one before the CLI has even read the line).
// It returns what the pane shows from the line the command was typed on
// to the new prompt: the history that met the condition, not a capture
// taken before it (which could miss the command's last lines).
func (p *pane) line(cmd, prompt string) string {
	p.t.Helper()
	h := p.history()
	before := promptLines(h, prompt)
	typedOn := len(strings.Split(strings.TrimRight(h, "\n "), "\n")) - 1
	p.typeText(cmd)
	p.keys("Enter")
	var got string
	p.waitFor("the prompt "+prompt+" after "+cmd, func(string) bool {
		h := p.history()
		if lastLine(h) != prompt || promptLines(h, prompt) <= before {
			return false
		}
		got = h
		return true
	})
	if lines := strings.Split(got, "\n"); typedOn > 0 && typedOn < len(lines) {
		return strings.Join(lines[typedOn:], "\n")
	}
	return got
}

func TestCLITerminal(t *testing.T) {
	s := startServer(t, "")
	home := t.TempDir()
	p := startPane(t, []string{"HOME=" + home}, swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"), "--no-color")
	p.waitPrompt("switch>")
	p.line("en", "switch#")
	scr := p.line("config", "switch(config)#")
	if !strings.Contains(scr, "*** Configuration will only be applied once 'apply' command is entered ***") {
		t.Errorf("no config banner:\n%s", scr)
	}
	// The exact prompt of every context.
	for _, step := range [][2]string{
		{"interface fpPort 1", "switch(config-if-fpPort-1)#"},
		{"ip address 10.7.7.1/24", "switch(config-if-fpPort-1-ip-10.7.7.1/24)#"},
		{"exit", "switch(config-if-fpPort-1)#"},
		{"exit", "switch(config)#"},
		{"vrf red", "switch(config-vrf)#"},
		{"exit", "switch(config)#"},
		{"router bgp 65001", "switch(config-router-bgp-65001)#"},
		{"neighbor ip 10.7.7.2", "switch(config-router-bgp-65001-neighbor-10.7.7.2)#"},
		{"exit", "switch(config-router-bgp-65001)#"},
		{"vrf red", "switch(config-router-bgp-65001-vrf-red)#"},
		{"neighbor ip 10.8.8.2", "switch(config-router-bgp-65001-vrf-red-neighbor-10.8.8.2)#"},
		{"!", "switch(config)#"},
		{"user carol", "switch(config-user)#"},
		{"exit", "switch(config)#"},
		{"span session s1", "switch(config-span-session-s1)#"},
		{"exit", "switch(config)#"},
		{"ntp server 10.0.0.5", "switch(config-ntp-server-10.0.0.5)#"},
		{"exit", "switch(config)#"},
		{"archive server 10.0.0.9", "switch(config-archive-server-10.0.0.9)#"},
		{"exit", "switch(config)#"},
		{"system", "switch(config-system)#"},
		{"exit", "switch(config)#"},
		{"vlan 10", "switch(config-vlan)#"},
		{"exit", "switch(config)#"},
		{"ip route 10.2.0.0 255.255.0.0", "switch(config-ip-route-10.2.0.0-255.255.0.0)#"},
		{"exit", "switch(config)#"},
		{"interface logical Loopback1", "switch(config-if)#"},
		{"ip address 10.0.0.1/32", "switch(config-if-ip-10.0.0.1/32)#"},
		{"!", "switch(config)#"},
		{"lldp", "switch(config-lldp)#"},
		{"exit", "switch(config)#"},
		{"reset config toFile", "switch(config-reset-config-toFile)#"},
		{"exit", "switch(config)#"},
		{"save config toFile", "switch(config-save-config-toFile)#"},
		{"exit", "switch(config)#"},
		{"user carol password carol-secret-1", "switch(config)#"},
		{"clearunapplied", "switch(config)#"},
	} {
		p.line(step[0], step[1])
	}

	// TAB completes a word, then lists the live ports.
	p.typeText("interface fpP")
	p.keys("Tab")
	p.waitPrompt("switch(config)#interface fpPort")
	if !strings.HasSuffix(strings.TrimRight(p.screen(), "\n"), "interface fpPort ") {
		t.Errorf("no blank after the completed word:\n%q", lastLine(p.screen()))
	}
	p.keys("Tab")
	p.keys("Tab")
	p.waitFor("the live port numbers", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) > 4 && f[0] == "1" && f[1] == "2" && f[2] == "3" {
				return true
			}
		}
		return false
	})
	p.typeText("2")
	p.keys("Enter")
	p.waitPrompt("switch(config-if-fpPort-2)#")

	// ? on the keypress: the help of the word, then the line again.
	p.typeText("mtu ?")
	p.waitFor("the help of mtu", func(s string) bool {
		return strings.Contains(s, "68-9216") && strings.Contains(s, "default: 1500") && lastLine(s) == "switch(config-if-fpPort-2)#mtu"
	})
	p.typeText("9000")
	p.keys("Enter")
	p.waitPrompt("switch(config-if-fpPort-2)#")
	// Ctrl-C drops the line and keeps the session and the context.
	p.typeText("speed 10")
	p.keys("C-c")
	p.waitPrompt("switch(config-if-fpPort-2)#")
	p.line("where", "switch(config-if-fpPort-2)#")
	if !strings.Contains(p.screen(), "cmd: enable config interface fpPort 2") {
		t.Errorf("where after Ctrl-C:\n%s", p.screen())
	}
	// The exit question, FlexSwitch's words.
	p.line("exit", "switch(config)#")
	p.typeText("exit")
	p.keys("Enter")
	p.waitPrompt("Are you sure you want to exit? You have pending config [no]yes:")
	p.line("no", "switch(config)#")
	p.line("apply", "switch(config)#")
	s.expect(t, 200, "GET", "/config/Port?IntfRef=fpPort2", "")
	if got := s.do(t, "GET", "/config/Port?IntfRef=fpPort2", "").object()["Mtu"]; got != float64(9000) {
		t.Errorf("Mtu after apply: %v", got)
	}
	// The pager: a page of the 50-line pane, space for the next, q stops.
	p.typeText("show run full")
	p.keys("Enter")
	p.waitPrompt("--More--")
	p.keys("Space")
	p.waitFor("a second page", func(s string) bool { return strings.Count(s, "--More--") >= 2 && lastLine(s) == "--More--" })
	p.keys("q")
	p.waitPrompt("switch(config)#")
	p.line("terminal length 0", "switch(config)#")
	scr = p.line("show run full | count", "switch(config)#")
	if !strings.Contains(scr, "Count: ") {
		t.Errorf("show run full | count:\n%s", scr)
	}
	p.line("exit", "switch#")
	p.line("exit", "switch>")
	p.typeText("exit")
	p.keys("Enter")
	p.waitFor("the end of the session", func(s string) bool { return strings.Contains(s, "Quiting Shell") })
	// The history has the commands, never a password.
	hist, err := os.ReadFile(filepath.Join(home, ".swmgr_cli_history"))
	if err != nil || !strings.Contains(string(hist), "interface fpPort 1") {
		t.Fatalf("history file: %v\n%s", err, hist)
	}
	if strings.Contains(string(hist), "carol-secret-1") || strings.Contains(string(hist), "password") {
		t.Errorf("a password line is in the history:\n%s", hist)
	}
	// Every line typed went to the service as a command record (queued
	// for no server here: none is configured): one request each, as the
	// access log shows.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(s.logs.String(), "path=/public/v1/action/AccountCommand") < 40 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(s.logs.String(), "path=/public/v1/action/AccountCommand"); n < 40 {
		t.Errorf("%d command records from an interactive session of over 40 lines", n)
	}
}

// TestCLILoginShell logs a real account of this host, whose login shell is
// swmgr, in with runuser -l: it lands in the CLI as itself, with its
// User's role.
func TestCLILoginShell(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to add an account to the host")
	}
	needTool(t, "useradd")
	needTool(t, "runuser")
	// A directory every user may enter, for the binary and the socket.
	dir, err := os.MkdirTemp("", "swmgr-cli-login-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "swmgr")
	copyFile(t, swmgrBin, bin)
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	s := startServer(t, data)
	os.Chmod(data, 0o755)

	name := uniqueName("swcli")
	s.expect(t, 201, "POST", "/config/User", fmt.Sprintf(`{"Name":%q,"Password":"login-shell-pw1","Group":"operator"}`, name))
	if out, err := exec.Command("useradd", "-m", "-s", bin, name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", "-r", name).Run() })

	sock := filepath.Join(data, "swmgr.sock")
	p := startPane(t, []string{"SWMGR_SOCKET=" + sock}, "runuser", "-l", name, "-w", "SWMGR_SOCKET")
	p.waitPrompt("switch>")
	p.line("enable", "switch#")
	p.line("config", "switch(config)#")
	p.line("vrf "+name, "switch(config-vrf)#")
	scr := p.line("apply", "switch(config)#")
	if !strings.Contains(scr, "sdk:createVrf("+name+") result: SUCCESS") {
		t.Fatalf("apply as %s:\n%s", name, scr)
	}
	// The commit is the OS user's.
	r := s.expect(t, 200, "GET", "/revisions?CurrentMarker=0&Count=1", "")
	objs, _ := r.body["Objects"].([]any)
	if len(objs) == 0 || !strings.Contains(jsonOf(objs[0]), `"User":"`+name+`"`) {
		t.Errorf("the newest revision is not %s's: %s", name, r.raw)
	}
	// An operator may not reset the switch: the server says no, as it
	// would over REST.
	p.line("reset config default", "switch(config)#")
	scr = p.line("apply", "switch(config)#")
	if !strings.Contains(scr, "FAILED: 403") {
		t.Errorf("an operator's reset was not refused:\n%s", scr)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCLIShell: `shell` at # runs bash on the switch as the CLI's user
// (root here) and exit comes back to the same prompt; keys typed in bash
// go to bash, not to the CLI, and Ctrl-C there leaves the CLI alive.
func TestCLIShell(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a non-root user needs a User with Access Bash, which the scripted test covers")
	}
	needTool(t, "bash")
	s := startServer(t, "")
	p := startPane(t, []string{"HOME=" + t.TempDir(), "PS1=bash-in-cli$ "}, swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"), "--no-color")
	p.waitPrompt("switch>")
	scr := p.line("shell", "switch>")
	if !strings.Contains(scr, "shell\nshell\n^\nERROR Invalid command entered") {
		t.Errorf("shell at > is not refused:\n%s", scr)
	}
	p.line("enable", "switch#")
	p.typeText("shell")
	p.keys("Enter")
	p.waitFor("bash's prompt", func(scr string) bool {
		return strings.HasSuffix(lastLine(scr), "$") || strings.HasSuffix(lastLine(scr), "#") && !strings.HasSuffix(lastLine(scr), "switch#")
	})
	p.typeText("echo inside-$((6*7)) $SWMGR_CLI_SHELL")
	p.keys("Enter")
	p.waitFor("bash's answer", func(scr string) bool { return strings.Contains(scr, "inside-42 1") })
	// A sleep whose argument is this test's own, so that it can be found;
	// Ctrl-C only once it is the terminal's foreground job (sent earlier,
	// under load, it reaches bash before the job starts and the sleep runs
	// its 30 s).
	sleepArg := fmt.Sprintf("30.%04d", time.Now().UnixNano()%10000)
	p.typeText("sleep " + sleepArg)
	p.keys("Enter")
	waitForeground(t, "sleep "+sleepArg)
	p.keys("C-c")
	p.typeText("echo still-$((1+1))")
	p.keys("Enter")
	p.waitFor("bash after Ctrl-C", func(scr string) bool { return strings.Contains(scr, "still-2") })
	p.typeText("exit")
	p.keys("Enter")
	p.waitPrompt("switch#")
	scr = p.line("where", "switch#")
	if !strings.Contains(scr, "cmd: enable") {
		t.Errorf("where after the shell:\n%s", scr)
	}
}

// waitForeground waits until a process whose command line is cmdline runs
// as the foreground process group of its terminal.
func waitForeground(t *testing.T, cmdline string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if foreground(cmdline) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never ran in the foreground of its terminal", cmdline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// foreground reports whether a process running cmdline is in its
// terminal's foreground process group (/proc/PID/stat: pgrp is field 5,
// tpgid field 8).
func foreground(cmdline string) bool {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") != cmdline {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name (field 2) is in parentheses and may hold spaces.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest) // f[0] is field 3 (state)
		if len(f) > 5 && f[2] == f[5] {
			return true
		}
	}
	return false
}
