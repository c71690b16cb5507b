package peercred

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Netlink sock_diag (linux/sock_diag.h, linux/inet_diag.h).
const (
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	inetDiagNoCookie = ^uint32(0)
	nlmsgHdrLen      = 16
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagMsgState = 1  // offset of idiag_state in struct inet_diag_msg
	inetDiagMsgUID   = 64 // offset of idiag_uid
	inetDiagMsgInode = 68 // offset of idiag_inode
)

// diagSocket asks the kernel for exactly one TCP socket: the one whose local
// end is client and remote end is server. An IPv4 client may hold an IPv6
// socket (connected to ::ffff:a.b.c.d), so both families are asked.
func diagSocket(client, server netip.AddrPort) (Socket, error) {
	families := []uint8{syscall.AF_INET6}
	if client.Addr().Is4() {
		families = []uint8{syscall.AF_INET, syscall.AF_INET6}
	}
	for _, fam := range families {
		s, err := diagQuery(fam, client, server)
		if !errors.Is(err, ErrNotFound) {
			return s, err
		}
	}
	return Socket{}, ErrNotFound
}

func diagQuery(family uint8, client, server netip.AddrPort) (Socket, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return Socket{}, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer syscall.Close(fd)
	// A reply comes within microseconds; the timeout only guards against a
	// kernel that never answers.
	tv := syscall.Timeval{Sec: 1}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)

	var req [nlmsgHdrLen + inetDiagReqLen]byte
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST) // no NLM_F_DUMP: an exact lookup
	ne.PutUint32(req[8:], 1)                     // sequence
	r := req[nlmsgHdrLen:]
	r[0] = family
	r[1] = syscall.IPPROTO_TCP
	ne.PutUint32(r[4:], ^uint32(0)) // every state
	id := r[8:]                     // struct inet_diag_sockid: ports and addresses in network order
	binary.BigEndian.PutUint16(id[0:], client.Port())
	binary.BigEndian.PutUint16(id[2:], server.Port())
	putAddr(id[4:20], family, client.Addr())
	putAddr(id[20:36], family, server.Addr())
	ne.PutUint32(id[40:], inetDiagNoCookie)
	ne.PutUint32(id[44:], inetDiagNoCookie)

	if err := syscall.Sendto(fd, req[:], 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return Socket{}, fmt.Errorf("sock_diag request: %w", err)
	}
	var buf [1024]byte
	n, _, err := syscall.Recvfrom(fd, buf[:], 0)
	if err != nil {
		return Socket{}, fmt.Errorf("sock_diag reply: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return Socket{}, fmt.Errorf("sock_diag reply: %w", err)
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case syscall.NLMSG_ERROR:
			if len(m.Data) < 4 {
				return Socket{}, errors.New("sock_diag: short error message")
			}
			errno := -int32(ne.Uint32(m.Data))
			if errno == 0 {
				continue
			}
			if syscall.Errno(errno) == syscall.ENOENT {
				return Socket{}, ErrNotFound
			}
			return Socket{}, fmt.Errorf("sock_diag: %w", syscall.Errno(errno))
		case sockDiagByFamily:
			if len(m.Data) < inetDiagMsgInode+4 {
				return Socket{}, errors.New("sock_diag: short reply")
			}
			return Socket{
				UID:   ne.Uint32(m.Data[inetDiagMsgUID:]),
				Inode: uint64(ne.Uint32(m.Data[inetDiagMsgInode:])),
				State: State(m.Data[inetDiagMsgState]),
			}, nil
		}
	}
	return Socket{}, ErrNotFound
}

// putAddr writes a into a 16-byte inet_diag address: 4 bytes for AF_INET,
// 16 for AF_INET6 (an IPv4 address as ::ffff:a.b.c.d).
func putAddr(dst []byte, family uint8, a netip.Addr) {
	if family == syscall.AF_INET {
		b := a.As4()
		copy(dst, b[:])
		return
	}
	b := a.As16()
	copy(dst, b[:])
}

// procSocket finds the socket in /proc/net/tcp and /proc/net/tcp6. Each
// line: "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
// inode ...", addresses as hex 32-bit words in the host's byte order, ports
// and the state as hex.
func procSocket(client, server netip.AddrPort) (Socket, error) {
	files := []string{"/proc/net/tcp6"}
	if client.Addr().Is4() {
		files = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	for _, name := range files {
		s, err := procFind(name, client, server)
		if !errors.Is(err, ErrNotFound) {
			return s, err
		}
	}
	return Socket{}, ErrNotFound
}

func procFind(name string, client, server netip.AddrPort) (Socket, error) {
	f, err := os.Open(name)
	if err != nil {
		return Socket{}, fmt.Errorf("the kernel's socket table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		local, lerr := parseProcAddr(fields[1])
		remote, rerr := parseProcAddr(fields[2])
		if lerr != nil || rerr != nil || local != client || remote != server {
			continue
		}
		st, serr := strconv.ParseUint(fields[3], 16, 8)
		uid, uerr := strconv.ParseUint(fields[7], 10, 32)
		inode, ierr := strconv.ParseUint(fields[9], 10, 64)
		if err := errors.Join(serr, uerr, ierr); err != nil {
			return Socket{}, fmt.Errorf("%s: %q: %w", name, sc.Text(), err)
		}
		return Socket{UID: uint32(uid), Inode: inode, State: State(st)}, nil
	}
	if err := sc.Err(); err != nil {
		return Socket{}, fmt.Errorf("%s: %w", name, err)
	}
	return Socket{}, ErrNotFound
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6) as /proc/net/tcp{,6} print them; the address comes out unmapped.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", s)
	}
	// Each 32-bit word was printed as a host-order integer: put the
	// network-order bytes back.
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}
