// Package connlimit caps the connections a listener keeps open, per client
// and in total, so that one client (or a crowd) cannot use up the process's
// file descriptors and lock everyone else out.
//
// A client is an OS user for connections from this host (a Unix socket, TCP
// between two loopback addresses: all local clients share one address, so
// one local account would otherwise use up root's place), and an address
// otherwise. The peer is looked up when the connection is accepted; the
// connection keeps the answer (peercred.Known), so that authentication
// does not ask the kernel again.
//
// A connection over a cap is closed as soon as it is accepted: the client
// sees its connection reset or closed before any answer. Connections that
// were accepted are never closed by this package; the HTTP server's own
// deadlines end the slow ones, which frees their place.
package connlimit

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/peercred"
)

// Options configure a Listener.
type Options struct {
	PerClient int // open connections per client (uid of a local peer, or address); 0: no cap
	Total     int // open connections in all; 0: no cap
	// Cred is the lookup of a connection's peer (default peercred.Of).
	Cred func(net.Conn) (peercred.Cred, error)
	// Refused, if set, is told of each connection closed for a cap.
	Refused func(client string, total bool)
}

// Listener is a net.Listener that caps open connections.
type Listener struct {
	net.Listener
	opts  Options
	total atomic.Int64

	mu   sync.Mutex
	open map[string]int // per client
}

// New wraps ln.
func New(ln net.Listener, opts Options) *Listener {
	if opts.Cred == nil {
		opts.Cred = peercred.Of
	}
	return &Listener{Listener: ln, opts: opts, open: map[string]int{}}
}

// Open is how many connections are open, in all and for one client.
func (l *Listener) Open(client string) (total, forClient int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int(l.total.Load()), l.open[client]
}

// Accept returns the next connection within the caps, closing those over
// them.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cred, cerr := l.opts.Cred(c)
		client := clientOf(c, cred, cerr)
		if n := l.total.Add(1); l.opts.Total > 0 && n > int64(l.opts.Total) {
			l.total.Add(-1)
			c.Close()
			if l.opts.Refused != nil {
				l.opts.Refused(client, true)
			}
			continue
		}
		l.mu.Lock()
		over := l.opts.PerClient > 0 && l.open[client] >= l.opts.PerClient
		if !over {
			l.open[client]++
		}
		l.mu.Unlock()
		if over {
			l.total.Add(-1)
			c.Close()
			if l.opts.Refused != nil {
				l.opts.Refused(client, false)
			}
			continue
		}
		return &conn{Conn: c, l: l, client: client, cred: cred, credErr: cerr}, nil
	}
}

func (l *Listener) release(client string) {
	l.total.Add(-1)
	l.mu.Lock()
	if l.open[client]--; l.open[client] <= 0 {
		delete(l.open, client)
	}
	l.mu.Unlock()
}

// clientOf is the client a connection is counted for: "uid:N" of a local
// peer (cred, unless the lookup failed: err), else the remote IP address.
func clientOf(c net.Conn, cred peercred.Cred, err error) string {
	if err == nil {
		return "uid:" + strconv.FormatUint(uint64(cred.UID), 10)
	}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap().String()
	}
	return c.RemoteAddr().String()
}

// conn frees its place once closed.
type conn struct {
	net.Conn
	l       *Listener
	client  string
	once    sync.Once
	cred    peercred.Cred
	credErr error
}

// PeerCred is the peer as looked up when the connection was accepted
// (peercred.Known).
func (c *conn) PeerCred() (peercred.Cred, error) { return c.cred, c.credErr }

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.client) })
	return err
}

// NetConn returns the connection it wraps (peer credentials look through
// it).
func (c *conn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes a TCP connection, as net/http does before closing
// one on which it answered an error.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
