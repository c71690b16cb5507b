package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// freshConnGrace is how long, after shutdown begins, a connection that has
// not yet sent a whole request header may take to send it before it is
// closed.
const freshConnGrace = 200 * time.Millisecond

// closeFreshConnsOnShutdown makes srv.Shutdown close the connections on
// which no request has arrived yet. net/http waits up to 5 s for such a
// connection before it counts it as idle, so a client that opened one
// early (Go's Transport and browsers do) held up SIGTERM by 5 s.
func closeFreshConnsOnShutdown(srv *http.Server, log *slog.Logger) {
	var (
		mu    sync.Mutex
		fresh = map[net.Conn]struct{}{}
		// pending counts fresh's entries, so that the two state changes
		// of every request on a connection already in use (active, idle)
		// cost an atomic load instead of the lock and a map lookup.
		pending atomic.Int64
	)
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		// A connection's StateNew is reported before its other states
		// (from the accept loop, before its goroutine starts), so when
		// pending is 0, c cannot be in fresh.
		if st == http.StateNew {
			mu.Lock()
			fresh[c] = struct{}{}
			pending.Store(int64(len(fresh)))
			mu.Unlock()
		} else if pending.Load() > 0 {
			mu.Lock()
			delete(fresh, c)
			pending.Store(int64(len(fresh)))
			mu.Unlock()
		}
		if prev != nil {
			prev(c, st)
		}
	}
	srv.RegisterOnShutdown(func() {
		time.Sleep(freshConnGrace) // the listeners are closed: no new ones come
		mu.Lock()
		defer mu.Unlock()
		for c := range fresh {
			c.Close()
		}
		if len(fresh) > 0 {
			log.Info("shutdown closed connections that had sent no request", "count", len(fresh))
		}
	})
}
