// Package peercred finds which local OS user is on the other end of a
// connection to this process: SO_PEERCRED on a Unix socket, and for TCP over
// loopback the owner of the client's socket in the kernel's socket tables
// (a sock_diag netlink query for exactly that socket, or /proc/net/tcp{,6}
// where sock_diag is not available).
//
// The answer is only as good as the kernel's: it is the uid that created the
// client's socket (a socket passed to another process keeps its creator's
// uid). It is meaningful only for connections between two processes of one
// host, which Of checks: both ends must be loopback addresses.
//
// A TCP answer counts only if it is the client's live socket: a full socket
// still held open by a process (an inode other than 0) in a state a client
// is in while its request is being served (ESTABLISHED, or FIN_WAIT1 and
// FIN_WAIT2 after it shut down its writing half). Once a client has closed
// its socket, the kernel keeps the connection's end as a TIME_WAIT
// "minisock" (also for FIN_WAIT2) that it reports with uid 0 and inode 0:
// taken at its word, that would make anyone who closes fast enough root.
// Such an answer, and any other that cannot be the live socket, is
// ErrNotLive.
package peercred

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrNotLocal is returned for a TCP connection whose ends are not both on a
// loopback address: the kernel cannot say who is on the other end.
var ErrNotLocal = errors.New("the peer is not on this host (not a loopback connection)")

// ErrNotFound is returned when the client's socket is gone (the client
// closed it) or cannot be found in the kernel's tables.
var ErrNotFound = errors.New("the client's socket is not in the kernel's socket tables")

// ErrNotLive is returned when the kernel's answer for the client's socket
// cannot be a socket a process holds open (a TIME_WAIT minisock, an orphan
// the client closed, a state no connected client is in): whose it was is
// unknown, and its uid is not to be believed.
var ErrNotLive = errors.New("the client's socket is no longer open (the client closed it, or it is not in a connected state)")

// State is a TCP state as the kernel numbers it (include/net/tcp_states.h).
type State uint8

// The TCP states a client's socket may be found in.
const (
	Established State = 1
	SynSent     State = 2
	SynRecv     State = 3
	FinWait1    State = 4
	FinWait2    State = 5
	TimeWait    State = 6
	Close       State = 7
	CloseWait   State = 8
	LastAck     State = 9
	Listen      State = 10
	Closing     State = 11
)

// Socket is what the kernel says of one TCP socket.
type Socket struct {
	UID   uint32
	Inode uint64 // 0: no process holds it (a minisock, an orphan)
	State State
}

// Live reports whether s can be the socket of a client whose request is
// being served: held by a process, connected, at most half-closed by the
// client after sending.
func (s Socket) Live() bool {
	if s.Inode == 0 {
		return false
	}
	switch s.State {
	case Established, FinWait1, FinWait2:
		return true
	}
	return false
}

// Cred is the identity of a connection's peer.
type Cred struct {
	UID uint32
	// PID is the peer's process (Unix sockets only; 0 for TCP).
	PID int32
}

// Known is a connection that was looked up already (when it was accepted):
// Of returns its answer, the same as it would have been then or better (a
// client's socket can only die in between).
type Known interface {
	PeerCred() (Cred, error)
}

// Of returns the credentials of the process on the other end of c: a Unix
// socket, or TCP (also under TLS) between two loopback addresses.
func Of(c net.Conn) (Cred, error) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if k, ok := c.(Known); ok {
		return k.PeerCred()
	}
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // a wrapped connection
		return Of(nc.NetConn())
	}
	switch c := c.(type) {
	case *net.UnixConn:
		return unixCred(c)
	case *net.TCPConn:
		local, lok := addrPort(c.LocalAddr())
		remote, rok := addrPort(c.RemoteAddr())
		if !lok || !rok || !local.Addr().IsLoopback() || !remote.Addr().IsLoopback() {
			return Cred{}, ErrNotLocal
		}
		uid, err := TCPOwner(remote, local)
		return Cred{UID: uid}, err
	}
	return Cred{}, fmt.Errorf("peer credentials of a %T: not a Unix or TCP connection", c)
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// unixCred reads SO_PEERCRED: the credentials the peer had when it
// connected, kept by the kernel.
func unixCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	var (
		ucred *syscall.Ucred
		gerr  error
	)
	if err := raw.Control(func(fd uintptr) {
		ucred, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return Cred{}, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	if gerr != nil {
		return Cred{}, fmt.Errorf("SO_PEERCRED: %w", gerr)
	}
	return Cred{UID: ucred.Uid, PID: ucred.Pid}, nil
}

// TCPOwner returns the uid that owns the TCP socket whose own end is client
// and whose other end is server (the client's socket of a connection this
// process accepted on server), if that socket is live (Socket.Live;
// ErrNotLive otherwise).
func TCPOwner(client, server netip.AddrPort) (uint32, error) {
	s, err := TCPSocket(client, server)
	if err != nil {
		return 0, err
	}
	if !s.Live() {
		return 0, fmt.Errorf("%w (state %d, inode %d)", ErrNotLive, s.State, s.Inode)
	}
	return s.UID, nil
}

// TCPSocket returns what the kernel says of the TCP socket whose own end is
// client and whose other end is server, whatever its state. It asks
// sock_diag for that one socket, and reads /proc/net/tcp{,6} if sock_diag
// is not available.
func TCPSocket(client, server netip.AddrPort) (Socket, error) {
	s, err := diagSocket(client, server)
	if err == nil || errors.Is(err, ErrNotFound) {
		return s, err
	}
	s, perr := procSocket(client, server)
	if perr != nil {
		return Socket{}, fmt.Errorf("%w (and sock_diag: %v)", perr, err)
	}
	return s, nil
}
