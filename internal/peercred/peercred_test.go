package peercred

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// nobody is the uid the other process runs as.
const nobody = 65534

// acceptOne accepts one connection on ln and returns what Of says of it,
// with the sock_diag and /proc answers for TCP.
func acceptOne(t *testing.T, ln net.Listener) (cred Cred, diag, proc uint32, err error) {
	t.Helper()
	ln.(interface{ SetDeadline(time.Time) error }).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		return Cred{}, 0, 0, err
	}
	defer c.Close()
	cred, err = Of(c)
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		client, _ := addrPort(tc.RemoteAddr())
		server, _ := addrPort(tc.LocalAddr())
		var derr, perr error
		diag, derr = diagOwner(client, server)
		proc, perr = procOwner(client, server)
		if derr != nil || perr != nil {
			err = fmt.Errorf("sock_diag: %v, /proc: %v", derr, perr)
		}
	}
	fmt.Fprint(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
	return cred, diag, proc, err
}

func TestOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a client as another uid (setpriv) needs root; CI runs as root")
	}
	dir, err := os.MkdirTemp("", "peercred-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "s.sock")
	for _, tc := range []struct {
		network, addr string
		asNobody      bool
	}{
		{"tcp4", "127.0.0.1:0", true}, {"tcp4", "127.0.0.1:0", false},
		{"tcp6", "[::1]:0", true}, {"tcp6", "[::1]:0", false},
		{"unix", sock, true}, {"unix", sock, false},
	} {
		t.Run(fmt.Sprintf("%s nobody=%v", tc.network, tc.asNobody), func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.addr)
			if err != nil {
				t.Skipf("%s: %v", tc.network, err)
			}
			defer ln.Close()
			if tc.network == "unix" {
				os.Chmod(sock, 0o666)
			}
			url := "http://" + ln.Addr().String() + "/"
			args := []string{"-sS", "--max-time", "10", url}
			if tc.network == "unix" {
				args = []string{"-sS", "--max-time", "10", "--unix-socket", sock, "http://x/"}
			}
			cmd := exec.Command("curl", args...)
			want := uint32(os.Getuid())
			if tc.asNobody {
				cmd = exec.Command("setpriv", append([]string{fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody), "--clear-groups", "--", "curl"}, args...)...)
				want = nobody
			}
			done := make(chan []byte, 1)
			go func() { out, _ := cmd.CombinedOutput(); done <- out }()
			cred, diag, proc, err := acceptOne(t, ln)
			out := <-done
			if err != nil {
				t.Fatalf("%v (curl: %s)", err, out)
			}
			if cred.UID != want {
				t.Errorf("uid %d, want %d", cred.UID, want)
			}
			if tc.network != "unix" && (diag != want || proc != want) {
				t.Errorf("sock_diag says %d, /proc says %d, want %d", diag, proc, want)
			}
			if tc.network == "unix" && cred.PID <= 0 {
				t.Errorf("no pid: %+v", cred)
			}
		})
	}
}

func TestOfRefusesNonLoopback(t *testing.T) {
	// A connection between two non-loopback addresses of this host is
	// refused by Of without asking the kernel; only a connection that is
	// not TCP or Unix is an error of another kind.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := Of(a); err == nil {
		t.Error("a pipe has credentials")
	}
	if _, err := TCPOwner(netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2")); err != ErrNotFound {
		t.Errorf("a socket that does not exist: %v", err)
	}
}

func TestParseProcAddr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"00000000000000000000000001000000:0050", "[::1]:80"},
		{"0000000000000000FFFF00000100007F:0016", "127.0.0.1:22"},
	} {
		got, err := parseProcAddr(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "zz:1", "0100007F", "0100007F:zz", "01:1"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
