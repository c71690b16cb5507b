// Package sshdtest runs a real OpenSSH server for tests: its own
// configuration, host key and port on loopback, and a throwaway OS account
// with a password. It skips only where sshd is not installed (or the test
// is not root) outside CI; in CI ($CI set) those are failures.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
	"github.com/swmgr/swmgr/internal/testport"
)

// Binary is where Debian's openssh-server puts sshd.
const Binary = "/usr/sbin/sshd"

// Server is one running sshd.
type Server struct {
	t        testing.TB
	dir      string
	Port     int
	User     string
	Password string
	Home     string
	cmd      *exec.Cmd
	waited   chan struct{}
	// authorizedKeys, when set, is the account's authorized_keys file and
	// public key authentication is on.
	authorizedKeys string
	// netns is the network namespace sshd runs in ("": the test's), listen
	// the address it listens on.
	netns, listen string
}

// Require skips (or, in CI, fails) when sshd cannot run here.
func Require(t testing.TB) {
	t.Helper()
	why := ""
	if _, err := os.Stat(Binary); err != nil {
		why = "sshd is not installed (apt-get install openssh-server)"
	} else if os.Geteuid() != 0 {
		why = "the test account needs root (useradd)"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("real-sshd test cannot run in CI: %s", why)
	}
	t.Skipf("skipping the real-sshd test: %s", why)
}

// Start runs sshd with a new account; everything is removed when the test
// ends, even if it fails.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartInNetns(t, "", "127.0.0.1")
}

// StartInNetns is Start with sshd in the network namespace ns, listening
// on addr (an address of ns).
func StartInNetns(t testing.TB, ns, addr string) *Server {
	t.Helper()
	Require(t)
	s := &Server{t: t, dir: t.TempDir(), netns: ns, listen: addr}
	var rnd [4]byte
	rand.Read(rnd[:])
	s.User = "swarch" + hex.EncodeToString(rnd[:])
	rand.Read(rnd[:])
	s.Password = "Pw-" + hex.EncodeToString(rnd[:]) + "-x"
	s.Home = "/home/" + s.User
	if out, err := exec.Command("useradd", "-m", "-d", s.Home, "-s", "/bin/sh", s.User).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", s.User, err, out)
	}
	t.Cleanup(func() {
		s.Stop()
		if out, err := exec.Command("userdel", "-r", "-f", s.User).CombinedOutput(); err != nil {
			t.Logf("userdel %s: %v: %s", s.User, err, out)
		}
	})
	chpw := exec.Command("chpasswd")
	chpw.Stdin = strings.NewReader(s.User + ":" + s.Password + "\n")
	if out, err := chpw.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v: %s", err, out)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	s.NewHostKey()
	s.Port = testport.TCP(t)
	s.writeConfig()
	s.Restart()
	return s
}

// NewHostKey gives the server a new host key (applied at the next Restart).
func (s *Server) NewHostKey() {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		s.t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "host_ed25519"), pem.EncodeToMemory(block), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) writeConfig() {
	keysFile, pubkey := "none", "no"
	if s.authorizedKeys != "" {
		keysFile, pubkey = s.authorizedKeys, "yes"
	}
	cfg := fmt.Sprintf(`Port %d
ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication %s
UsePAM yes
PermitRootLogin no
AllowUsers %s
StrictModes no
Subsystem sftp internal-sftp
LogLevel VERBOSE
MaxStartups 100
`, s.Port, s.listen, filepath.Join(s.dir, "host_ed25519"), filepath.Join(s.dir, "sshd.pid"), keysFile, pubkey, s.User)
	if err := os.WriteFile(filepath.Join(s.dir, "sshd_config"), []byte(cfg), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// HostKey is the server's host key (the public half of the one it runs
// with since its last Restart).
func (s *Server) HostKey() ssh.PublicKey {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dir, "host_ed25519"))
	if err != nil {
		s.t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		s.t.Fatal(err)
	}
	return signer.PublicKey()
}

// AuthorizeKey lets key log in as the account (public key authentication
// on), from the next Restart.
func (s *Server) AuthorizeKey(key ssh.PublicKey) {
	s.t.Helper()
	// sshd reads the file as the account: in its home, its own.
	dir := filepath.Join(s.Home, ".ssh")
	s.authorizedKeys = filepath.Join(dir, "authorized_keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(s.authorizedKeys, ssh.MarshalAuthorizedKey(key), 0o600); err != nil {
		s.t.Fatal(err)
	}
	for _, p := range []string{dir, s.authorizedKeys} {
		if out, err := exec.Command("chown", s.User, p).CombinedOutput(); err != nil {
			s.t.Fatalf("chown %s: %v: %s", p, err, out)
		}
	}
	s.writeConfig()
}

// Restart (re)starts sshd and waits until it accepts connections.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	args := []string{Binary, "-D", "-e", "-f", filepath.Join(s.dir, "sshd_config")}
	if s.netns != "" {
		args = append([]string{"ip", "netns", "exec", s.netns}, args...) // ip execs sshd: the same process
	}
	cmd := exec.Command(args[0], args[1:]...)
	log, err := os.Create(filepath.Join(s.dir, "sshd.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start sshd: %v", err)
	}
	log.Close()
	s.cmd = cmd
	s.waited = make(chan struct{})
	go func() { cmd.Wait(); close(s.waited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := s.dial()
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.waited:
			s.t.Fatalf("sshd exited at start: %s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sshd does not listen on %s: %s", s.Addr(), s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills sshd and every session it forked (its process group).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.waited
	s.cmd = nil
	// Sessions run in sessions of their own: end those of the test account
	// (which only this test uses), by process id.
	killAccountProcesses(s.User)
}

func killAccountProcesses(user string) {
	out, err := exec.Command("id", "-u", user).Output()
	if err != nil {
		return
	}
	uid := strings.TrimSpace(string(out))
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == uid {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.listen, strconv.Itoa(s.Port)) }

// dial connects to sshd, from its network namespace.
func (s *Server) dial() (c net.Conn, err error) {
	aaatest.InNetns(s.t, s.netns, func() { c, err = net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond) })
	return c, err
}

// Log returns sshd's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "sshd.log"))
	return string(b)
}

// ReadFile reads a file the account owns.
func (s *Server) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }

// HangingServer accepts TCP connections and never answers: an SSH server
// that hangs after the connection. It returns its port.
func HangingServer(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}
