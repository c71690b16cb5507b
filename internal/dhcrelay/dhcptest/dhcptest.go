// Package dhcptest gives the DHCP relay's tests the two ends of a relay:
// a dnsmasq DHCP server in a network namespace, whose lease script
// records the option 82 circuit id of each lease, and busybox's udhcpc
// as the client.
package dhcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/syncbuf"
	"github.com/swmgr/swmgr/internal/testneed"
)

// Server is a dnsmasq serving one range of leases.
type Server struct {
	leases string // what the lease script wrote
	log    syncbuf.Buffer
}

// StartServer runs dnsmasq (DHCP only) in namespace netns, leasing
// first..last with netmask mask, until the test ends.
func StartServer(t testing.TB, netns, first, last, mask string) *Server {
	t.Helper()
	testneed.Program(t, "dnsmasq-base", "/usr/sbin/dnsmasq")
	dir := t.TempDir()
	s := &Server{leases: filepath.Join(dir, "leases.out")}
	script := filepath.Join(dir, "lease.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2 $3 circuit=$DNSMASQ_CIRCUIT_ID\" >> "+s.leases+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", netns, "/usr/sbin/dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
		"--port=0", "--user=root", "--pid-file=", "--log-dhcp", "--log-facility=-", "--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"),
		"--dhcp-range="+first+","+last+","+mask, "--dhcp-script="+script)
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	// dnsmasq runs its lease script from a helper process of its own: the
	// whole group is ended, and awaited, before the test's directory is
	// removed (a helper left writing made the removal fail).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-cmd.Process.Pid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return s
}

// Log is dnsmasq's log so far.
func (s *Server) Log() string { return s.log.String() }

// CircuitIDs are the circuit ids of the leases given since the last
// call, waiting up to 10 s for the lease script of the first.
func (s *Server) CircuitIDs() []string {
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got, _ = os.ReadFile(s.leases); len(got) > 0 {
			break
		}
	}
	os.Remove(s.leases)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		if _, id, ok := strings.Cut(line, "circuit="); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// Lease runs udhcpc on dev in namespace netns (5 tries, 2 s apart) and
// returns its output: "lease of <address> obtained from <server>" when it
// got one.
func Lease(t testing.TB, netns, dev string) string {
	t.Helper()
	testneed.Program(t, "busybox-static", "/bin/busybox")
	out, _ := exec.Command("ip", "netns", "exec", netns, "/bin/busybox", "udhcpc", "-i", dev, "-n", "-q", "-t", "5", "-T", "2", "-s", "/bin/true").CombinedOutput()
	return string(out)
}
