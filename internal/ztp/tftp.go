package ztp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// TFTP's packets (RFC 1350) and the option acknowledgement (RFC 2347).
const (
	tftpRRQ   = 1
	tftpData  = 3
	tftpAck   = 4
	tftpError = 5
	tftpOACK  = 6

	tftpPort         = 69
	tftpDefaultBlock = 512  // RFC 1350's block, when the server takes no options
	tftpBlockSize    = 1428 // asked for (RFC 2348): a 1500-byte MTU less IP, UDP and TFTP headers
	// tftpErrTooLarge is the error code told to a server whose file is
	// refused for its size (RFC 1350: disk full or allocation exceeded).
	tftpErrTooLarge = 3
	tftpErrBadTID   = 5
)

// TFTPClient reads files over TFTP: an RFC 1350 read request in octet
// mode asking for the blksize (RFC 2348) and tsize (RFC 2349) options
// (RFC 2347), each packet waited for Timeout and sent again up to Retries
// times before the transfer fails.
type TFTPClient struct {
	Timeout time.Duration // default 1 s
	Retries int           // default 5
	// Netns is the network namespace the transfer's socket is in ("":
	// swmgr's own).
	Netns string
}

// tftpFile is the file a tftp:// URL names (RFC 3617): the path without
// its leading slash, without a ";mode=" suffix.
func tftpFile(u *url.URL) (string, error) {
	name := strings.TrimPrefix(u.Path, "/")
	if i := strings.Index(name, ";mode="); i >= 0 {
		name = name[:i]
	}
	if name == "" {
		return "", fmt.Errorf("%s names no file", u.Redacted())
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f {
			return "", fmt.Errorf("%s: the file name holds a space or control character", u.Redacted())
		}
	}
	return name, nil
}

// Get reads the file u names (tftp://host[:port]/file), at most max bytes:
// a larger file is refused (by its tsize at once, else when the data
// passes max), not cut.
func (c TFTPClient) Get(ctx context.Context, u *url.URL, max int64) ([]byte, error) {
	timeout, retries := c.Timeout, c.Retries
	if timeout <= 0 {
		timeout = time.Second
	}
	if retries <= 0 {
		retries = 5
	}
	name, err := tftpFile(u)
	if err != nil {
		return nil, err
	}
	port := tftpPort
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%s: bad port %q", u.Redacted(), p)
		}
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, u.Hostname())
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("tftp %s: resolve %s: %v", u.Redacted(), u.Hostname(), err)
	}
	server := &net.UDPAddr{IP: ips[0].IP, Port: port}
	var conn *net.UDPConn
	if nserr := inNetns(c.Netns, func() error { conn, err = net.ListenUDP("udp", nil); return nil }); nserr != nil {
		err = nserr
	}
	if err != nil {
		return nil, fmt.Errorf("tftp %s: %w", u.Redacted(), err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()

	fail := func(format string, args ...any) error {
		return fmt.Errorf("tftp %s: %s", u.Redacted(), fmt.Sprintf(format, args...))
	}
	send := tftpRequest(name)
	dest := server
	var tid *net.UDPAddr // the server's transfer port, from its first answer
	block, next := tftpDefaultBlock, uint16(1)
	var data []byte
	buf := make([]byte, 4+tftpBlockSize+1)
	// receive waits until deadline for this transfer's next packet: the
	// first answer from the server's address fixes its transfer port;
	// other senders are told they are not part of it.
	receive := func(deadline time.Time) ([]byte, error) {
		for {
			conn.SetReadDeadline(deadline)
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return nil, err
			}
			switch {
			case tid == nil && from.IP.Equal(server.IP):
				tid, dest = from, from
			case tid == nil || !from.IP.Equal(tid.IP) || from.Port != tid.Port:
				conn.WriteToUDP(tftpErrorPacket(tftpErrBadTID, "unknown transfer ID"), from)
				continue
			}
			if n >= 4 || (n >= 2 && binary.BigEndian.Uint16(buf) == tftpOACK) {
				return buf[:n], nil
			}
		}
	}
	for tries := 1; ; tries++ {
		if _, err := conn.WriteToUDP(send, dest); err != nil {
			return nil, fail("send: %v", err)
		}
		deadline := time.Now().Add(timeout)
	packets:
		for {
			p, err := receive(deadline)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fail("%v", ctx.Err())
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					if tries > retries {
						return nil, fail("no answer from %s after %d tries of %v", dest, tries, timeout)
					}
					break packets // sent again
				}
				return nil, fail("receive: %v", err)
			}
			switch binary.BigEndian.Uint16(p) {
			case tftpError:
				msg, _, _ := bytes.Cut(p[4:], []byte{0})
				return nil, fail("the server answered error %d: %q", binary.BigEndian.Uint16(p[2:]), printableText(msg))
			case tftpOACK:
				if next != 1 {
					continue // a late copy
				}
				opts := tftpOptions(p[2:])
				if v, ok := opts["blksize"]; ok {
					b, err := strconv.Atoi(v)
					if err != nil || b < 8 || b > tftpBlockSize {
						conn.WriteToUDP(tftpErrorPacket(8, "bad blksize"), dest)
						return nil, fail("the server offered block size %q (asked for %d)", printableText([]byte(v)), tftpBlockSize)
					}
					block = b
				}
				if v, ok := opts["tsize"]; ok {
					if size, err := strconv.ParseInt(v, 10, 64); err == nil && size > max {
						conn.WriteToUDP(tftpErrorPacket(tftpErrTooLarge, "file too large"), dest)
						return nil, fail("the file is %d bytes, larger than %d", size, max)
					}
				}
				send, tries = tftpAckPacket(0), 0
				break packets
			case tftpData:
				got := binary.BigEndian.Uint16(p[2:])
				if got == next-1 && len(data) > 0 {
					break packets // our ACK was lost: sent again
				}
				if got != next {
					continue
				}
				payload := p[4:]
				if len(payload) > block {
					conn.WriteToUDP(tftpErrorPacket(4, "block larger than agreed"), dest)
					return nil, fail("block %d is %d bytes, more than the %d agreed", got, len(payload), block)
				}
				if int64(len(data)+len(payload)) > max {
					conn.WriteToUDP(tftpErrorPacket(tftpErrTooLarge, "file too large"), dest)
					return nil, fail("larger than %d bytes", max)
				}
				data = append(data, payload...)
				send, tries = tftpAckPacket(got), 0
				next++
				if len(payload) < block {
					conn.WriteToUDP(send, dest) // the last ACK; a server that loses it times out
					return data, nil
				}
				break packets
			}
		}
	}
}

// tftpRequest is a read request in octet mode asking for the options.
func tftpRequest(name string) []byte {
	p := binary.BigEndian.AppendUint16(nil, tftpRRQ)
	for _, s := range []string{name, "octet", "blksize", strconv.Itoa(tftpBlockSize), "tsize", "0"} {
		p = append(append(p, s...), 0)
	}
	return p
}

func tftpAckPacket(block uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, tftpAck), block)
}

func tftpErrorPacket(code uint16, msg string) []byte {
	p := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, tftpError), code)
	return append(append(p, msg...), 0)
}

// tftpOptions reads an OACK's name/value pairs (names in lower case).
func tftpOptions(b []byte) map[string]string {
	opts := map[string]string{}
	parts := bytes.Split(b, []byte{0})
	for i := 0; i+1 < len(parts); i += 2 {
		opts[strings.ToLower(string(parts[i]))] = string(parts[i+1])
	}
	return opts
}

// printableText is b with anything but printable ASCII shown as '?': a
// server's message goes to the state and the log.
func printableText(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if c < ' ' || c >= 0x7f {
			out[i] = '?'
		}
	}
	if len(out) > 200 {
		out = out[:200]
	}
	return string(out)
}
