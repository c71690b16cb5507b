package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/store"
)

// Listeners: the Unix socket, timeouts and connection caps.

const (
	// defaultSocketFlag stands for the default --socket, which depends on
	// the user and --data-dir.
	defaultSocketFlag = "/run/swmgr/swmgr.sock as root, else <data-dir>/swmgr.sock"
	rootSocket        = "/run/swmgr/swmgr.sock"
	socketFile        = datadir.Socket

	defaultHeaderTimeout     = 10 * time.Second
	defaultBodyTimeout       = 30 * time.Second
	defaultMaxConnsPerClient = 128
)

// defaults resolves the listener options left to their defaults (a zero
// value from a test means the default too) and checks them.
func (o *serveOptions) defaults() error {
	if o.socket == defaultSocketFlag {
		o.socket = rootSocket
		if os.Geteuid() != 0 {
			o.socket = filepath.Join(o.dataDir, socketFile)
		}
	}
	switch o.localOthers {
	case "":
		o.localOthers = "read"
	case "read", "refuse":
	default:
		return fmt.Errorf("--local-others %q: use read or refuse", o.localOthers)
	}
	switch o.accountsFrom {
	case "", "own":
	case "host":
		if os.Geteuid() != 0 {
			return errors.New("--accounts host makes the Users accounts of this machine with useradd, usermod, userdel and chpasswd, which need root: run as root, or use --accounts own")
		}
		if o.accounts == nil {
			o.accounts = &accounts.OS{Groups: model.RoleGroups()} // a host group may carry privileges
		}
	default:
		return fmt.Errorf("--accounts %q: use own or host", o.accountsFrom)
	}
	if o.headerTimeout == 0 {
		o.headerTimeout = defaultHeaderTimeout
	}
	if o.reauthInterval == 0 {
		o.reauthInterval = auth.DefaultReauthInterval
	}
	if o.bodyTimeout == 0 {
		o.bodyTimeout = defaultBodyTimeout
	}
	if o.maxConnsPerClient == 0 {
		o.maxConnsPerClient = defaultMaxConnsPerClient
	}
	if o.headerTimeout < 0 || o.bodyTimeout < 0 || o.maxConnsPerClient < 0 {
		return errors.New("--header-timeout, --body-timeout and --max-conns-per-client must be positive")
	}
	return nil
}

// connsPerListener is the cap on open connections of each listener: a
// third of the file descriptors the process may open (Go raises the soft
// limit to the hard one at start), less a reserve for the database, the
// accounts and the tools swmgr runs.
func connsPerListener() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<20 {
		return 1 << 18
	}
	return max(64, (int(lim.Cur)-256)/3)
}

// listenSocket makes the Unix socket at path, mode 0666: every local user
// may connect, and is then what SO_PEERCRED says they are. A socket left
// by a swmgr that is gone is replaced; one that answers, or a file that is
// not a socket, is an error.
func listenSocket(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// Every local user connects through it, whatever swmgr's umask (the
		// systemd unit's is 0077).
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it or give another --socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another swmgr is listening on it; stop it or give another --socket (\"\" disables the socket)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// userGroup is the group of the User name (its account's primary group),
// ok false when no User has that name.
func userGroup(ctx context.Context, st store.Config, acc accounts.Accounts, name string) (string, bool, error) {
	ok, err := users.Exists(ctx, st, name)
	if err != nil || !ok {
		return "", false, err
	}
	a, ok, err := acc.Lookup(ctx, name)
	if err != nil || !ok {
		return "", false, err
	}
	return a.Group, true, nil
}
