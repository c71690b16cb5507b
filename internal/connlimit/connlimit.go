// Package connlimit caps the connections a listener keeps open, per client
// and in total, so that one client (or a crowd) cannot use up the process's
// file descriptors and lock everyone else out.
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
	PerClient int // open connections per client (address, or uid on a Unix socket); 0: no cap
	Total     int // open connections in all; 0: no cap
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
		client := ClientOf(c)
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
		return &conn{Conn: c, l: l, client: client}, nil
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

// ClientOf is the client a connection is counted for: the remote IP
// address, or "uid:N" of the peer on a Unix socket.
func ClientOf(c net.Conn) string {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap().String()
	}
	if uc, ok := c.(*net.UnixConn); ok {
		if cred, err := peercred.Of(uc); err == nil {
			return "uid:" + strconv.FormatUint(uint64(cred.UID), 10)
		}
	}
	return c.RemoteAddr().String()
}

// conn frees its place once closed.
type conn struct {
	net.Conn
	l      *Listener
	client string
	once   sync.Once
}

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
