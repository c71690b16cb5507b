package obs

import (
	"fmt"
	"net"
	"os"
)

// Notify sends state (e.g. "READY=1") to systemd's notification socket,
// as sd_notify(3) does: one datagram to $NOTIFY_SOCKET. It reports false
// when the variable is unset (not started by systemd with Type=notify).
func Notify(state string) (bool, error) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return false, nil
	}
	if path[0] != '/' && path[0] != '@' {
		return false, fmt.Errorf("NOTIFY_SOCKET %q: only Unix sockets are supported", path)
	}
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	if path[0] == '@' {
		addr.Name = "\x00" + path[1:] // abstract namespace
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return false, fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("sd_notify: %w", err)
	}
	return true, nil
}
