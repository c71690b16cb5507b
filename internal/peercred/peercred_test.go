package peercred

import (
	"errors"
	"fmt"
	"io"
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
		var ds, ps Socket
		ds, derr = diagSocket(client, server)
		ps, perr = procSocket(client, server)
		diag, proc = ds.UID, ps.UID
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

// A client that closed its socket leaves in the kernel's tables a socket no
// process holds: an orphan, then a TIME_WAIT minisock (also for FIN_WAIT2),
// which both sock_diag and /proc report with uid 0. Such an answer is never
// an owner: TCPOwner says ErrNotLive, whichever table answered, for IPv4 and
// IPv6, whether only the client closed or both ends did.
func TestTCPOwnerRefusesClosedClient(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		for _, both := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s both-closed=%v", tc.network, both), func(t *testing.T) {
				ln, err := net.Listen(tc.network, tc.addr)
				if err != nil {
					t.Skipf("%s: %v", tc.network, err)
				}
				defer ln.Close()
				c, err := net.Dial(tc.network, ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				sc, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				defer sc.Close()
				client, _ := addrPort(c.LocalAddr())
				server, _ := addrPort(c.RemoteAddr())
				if uid, err := TCPOwner(client, server); err != nil || uid != uint32(os.Getuid()) {
					t.Fatalf("the live socket: uid %d, %v", uid, err)
				}
				fmt.Fprint(c, "POST /public/v1/config/User HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
				c.Close()
				// The server reads the request and the client's FIN.
				sc.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.ReadAll(sc); err != nil {
					t.Fatal(err)
				}
				if both {
					sc.Close()
				}
				// Wait until the kernel keeps only the minisock of the
				// client's end: FIN_WAIT2 once its FIN is acknowledged,
				// TIME_WAIT once the server's FIN came too.
				deadline := time.Now().Add(20 * time.Second)
				var s Socket
				for {
					s, err = TCPSocket(client, server)
					if err != nil {
						t.Fatalf("the closed client's socket: %v", err)
					}
					if s.Inode == 0 && (s.State == TimeWait || !both && s.State == FinWait2) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the closed client's socket is still held: %+v", s)
					}
					time.Sleep(10 * time.Millisecond)
				}
				if uid, err := TCPOwner(client, server); !errors.Is(err, ErrNotLive) {
					t.Errorf("TCPOwner of a closed client (%+v): uid %d, %v; want ErrNotLive", s, uid, err)
				}
				for name, lookup := range map[string]func(netip.AddrPort, netip.AddrPort) (Socket, error){"sock_diag": diagSocket, "/proc": procSocket} {
					if s, err := lookup(client, server); err != nil || s.Live() || s.UID != 0 {
						t.Errorf("%s: %+v %v: want a socket that is not live (uid 0)", name, s, err)
					}
				}
			})
		}
	}
}

func TestSocketLive(t *testing.T) {
	for _, tc := range []struct {
		s    Socket
		want bool
	}{
		{Socket{UID: 1000, Inode: 42, State: Established}, true},
		{Socket{UID: 1000, Inode: 42, State: FinWait1}, true},
		{Socket{UID: 1000, Inode: 42, State: FinWait2}, true},
		{Socket{UID: 0, Inode: 0, State: TimeWait}, false},
		{Socket{UID: 0, Inode: 0, State: FinWait2}, false},       // a FIN_WAIT2 minisock
		{Socket{UID: 1000, Inode: 0, State: Established}, false}, // an orphan
		{Socket{UID: 0, Inode: 42, State: Listen}, false},
		{Socket{UID: 0, Inode: 42, State: CloseWait}, false},
		{Socket{UID: 0, Inode: 42, State: SynSent}, false},
		{Socket{UID: 0, Inode: 42, State: Close}, false},
	} {
		if got := tc.s.Live(); got != tc.want {
			t.Errorf("%+v: Live %v, want %v", tc.s, got, tc.want)
		}
	}
}
