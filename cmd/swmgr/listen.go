package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/swmgr/swmgr/internal/access"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/connlimit"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/tlscert"
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

// listener is one of serve's HTTP listeners.
type listener struct {
	srv *http.Server
	ln  net.Listener
	tls bool
}

// listenerSet is serve's HTTP listeners (--https, --http, --socket) and
// what the start's log line says of them.
type listenerSet struct {
	all                             []listener
	opened                          []net.Listener // closed by close
	httpAddr, httpsAddr, socketPath string
	fingerprint                     string // the HTTPS certificate's SHA-256
}

// listen opens the listeners of inner (the REST handler and what goes
// behind authentication with it), each limited in connections, behind
// authentication (doors.Handler) and observability. The set it returns
// holds what was opened, to close, even with an error.
func (o *serveOptions) listen(inner http.Handler, doors *access.Access, ob *observability, log *slog.Logger) (*listenerSet, error) {
	ls := &listenerSet{}
	perListener := connsPerListener()
	limit := func(ln net.Listener, what string) net.Listener {
		return connlimit.New(ln, connlimit.Options{PerClient: o.maxConnsPerClient, Total: perListener, Cred: o.peerCred, Refused: func(client string, total bool) {
			if total {
				log.Warn("connection refused: too many open connections", "listener", what, "client", client, "max", perListener)
			} else {
				log.Warn("connection refused: too many open connections from one client", "listener", what, "client", client, "max", o.maxConnsPerClient)
			}
		}})
	}
	newServer := func(local bool) *http.Server {
		srv := &http.Server{
			Handler:           ob.outer(doors.Handler(inner, local)),
			ReadHeaderTimeout: o.headerTimeout,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		if local {
			srv.ConnContext = doors.Peers.ConnContext
		}
		closeFreshConnsOnShutdown(srv, log)
		return srv
	}
	if o.https != "" {
		cert, err := serverCertificate(o, o.https, log)
		if err != nil {
			return ls, fmt.Errorf("--https: %w", err)
		}
		ls.fingerprint = tlscert.Fingerprint(cert.Certificate())
		ln, err := net.Listen("tcp", o.https)
		if err != nil {
			return ls, fmt.Errorf("--https: %w (give a free address, or --https \"\" to disable HTTPS)", err)
		}
		ls.opened = append(ls.opened, ln)
		ls.httpsAddr = ln.Addr().String()
		srv := newServer(false)
		srv.TLSConfig = cert.Config()
		ls.all = append(ls.all, listener{srv, limit(ln, "https"), true})
	}
	if o.http != "" {
		ln, err := net.Listen("tcp", o.http)
		if err != nil {
			return ls, fmt.Errorf("--http: %w", err)
		}
		ls.opened = append(ls.opened, ln)
		ls.httpAddr = ln.Addr().String()
		// Without credentials only on a loopback address (the local tools).
		ls.all = append(ls.all, listener{newServer(auth.Loopback(ls.httpAddr)), limit(ln, "http"), false})
	}
	if o.socket != "" {
		ln, err := listenSocket(o.socket)
		if err != nil {
			return ls, fmt.Errorf("--socket: %w", err)
		}
		ls.opened = append(ls.opened, ln)
		ls.socketPath = o.socket
		ls.all = append(ls.all, listener{newServer(true), limit(ln, "socket"), false})
	}
	return ls, nil
}

// serve serves every listener; the channel gets the first one's end.
func (ls *listenerSet) serve() <-chan error {
	errc := make(chan error, len(ls.all))
	for _, l := range ls.all {
		if l.tls {
			go func() { errc <- fmt.Errorf("https: %w", l.srv.ServeTLS(l.ln, "", "")) }()
		} else {
			go func() { errc <- fmt.Errorf("serve %s: %w", l.ln.Addr(), l.srv.Serve(l.ln)) }()
		}
	}
	return errc
}

// shutdown shuts every listener's server down, waiting up to 10 s for the
// requests in flight.
func (ls *listenerSet) shutdown(log *slog.Logger) {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, l := range ls.all {
		if err := l.srv.Shutdown(sctx); err != nil {
			log.Warn("shutdown", "err", err)
		}
	}
}

// close closes the listeners opened.
func (ls *listenerSet) close() {
	for _, ln := range ls.opened {
		ln.Close()
	}
}
