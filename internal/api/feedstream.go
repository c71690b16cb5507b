package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swmgr/swmgr/internal/obs"
)

// feedStream writes the change feed to one subscriber, each batch of
// events as one HTTP/1.1 chunk.
//
// At first it writes through net/http. Once the headers and the events a
// client resumes from are out, a plain HTTP/1.1 stream (TCP or a Unix
// socket) takes the connection over (takeOver) and writes each batch straight from the
// frames the feed shares, header, frames and trailer in one writev: with
// 100 subscribers at thousands of commits a second, copying every event
// into each subscriber's buffer and net/http's 4 KiB writer splitting
// each batch into three writes (and the reader's reads with them) cost
// more than the commits themselves. The bytes on the wire are the same
// chunks net/http would write. TLS and HTTP/2 streams stay with net/http.
// net/http's Shutdown no longer sees a stream taken over: CloseStreams
// waits for them (takenStreams), and cuts the write of a subscriber that
// stopped reading short.
type feedStream struct {
	taken   *takenStreams
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // for each write

	conn net.Conn      // taken over from net/http; nil while net/http writes
	gone chan struct{} // closed when the client closes the taken-over connection; nil before
	bufs net.Buffers
	vecs [][]byte // bufs' backing array, kept across batches
	out  []byte   // one batch, for a connection that cannot writev
	head []byte   // a chunk's size line
	err  error    // of the last write to conn
}

var crlf = []byte("\r\n")

// send writes the frames as one chunk, and flushes (no frames: just
// flushes, which sends the headers).
func (st *feedStream) send(frames ...[]byte) error {
	if st.conn == nil {
		st.out = st.out[:0]
		for _, f := range frames {
			st.out = append(st.out, f...)
		}
		// A writer without deadlines (a test's recorder) is written
		// without one.
		_ = st.nextDeadline(st.rc.SetWriteDeadline)
		if len(st.out) > 0 {
			// One write: larger than net/http's buffer, it goes out at once.
			if _, err := st.w.Write(st.out); err != nil {
				return err
			}
		}
		return st.rc.Flush()
	}
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	if size == 0 {
		return nil // an empty chunk would end the stream
	}
	st.head = strconv.AppendUint(st.head[:0], uint64(size), 16)
	st.head = append(st.head, crlf...)
	if st.err = st.nextDeadline(st.conn.SetWriteDeadline); st.err != nil {
		return st.err
	}
	raw := writevConn(st.conn)
	if raw == nil { // a wrapper that hides its connection
		st.out = append(st.out[:0], st.head...)
		for _, f := range frames {
			st.out = append(st.out, f...)
		}
		st.out = append(st.out, crlf...)
		_, st.err = st.conn.Write(st.out)
		st.sent(size)
		return st.err
	}
	st.vecs = append(append(append(st.vecs[:0], st.head), frames...), crlf)
	st.bufs = st.vecs // WriteTo consumes bufs, not vecs
	_, st.err = st.bufs.WriteTo(raw)
	clear(st.vecs)
	st.sent(size)
	return st.err
}

// nextDeadline bounds the next write through set (the taken-over
// connection's, or the ResponseController's while net/http writes): by the
// write timeout, or once the server is closing by closeGrace. CloseStreams
// cuts the deadline of every stream to closeGrace; one set here just after
// would undo that, so closing is checked after it is set (closing is set
// before CloseStreams cuts).
func (st *feedStream) nextDeadline(set func(time.Time) error) error {
	if err := set(time.Now().Add(st.timeout)); err != nil {
		return err
	}
	if st.taken.closing.Load() {
		return set(time.Now().Add(min(st.timeout, closeGrace)))
	}
	return nil
}

// closeGrace is how long a write may still take once the server is
// closing: long enough for a subscriber that reads to take the batch being
// written and the end of the stream, short enough that one that stopped
// reading does not hold shutdown for the whole write timeout.
const closeGrace = time.Second

// sent counts a batch of size body bytes written on the taken-over
// connection in the request's access-log line and metrics, as net/http's
// writer counted those before the takeover; a failed write counts none.
func (st *feedStream) sent(size int) {
	if st.err == nil {
		obs.AddSent(st.w, int64(size))
	}
}

// writevConn is the TCP or Unix connection under c, to which net.Buffers
// writes in one writev (not a write per buffer), or nil. It looks through
// the listeners' wrappers (connlimit's, which serve puts on every
// listener), which add nothing to a write: they count the connection and
// release it when it is closed, and c stays what is closed.
func writevConn(c net.Conn) net.Conn {
	for range 4 {
		switch c.(type) {
		case *net.TCPConn, *net.UnixConn:
			return c
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = w.NetConn()
	}
	return nil
}

// takeOver takes the connection from net/http when it is plain HTTP/1.1
// with a chunked body (the headers are out). Afterwards, gone is closed
// when the client closes the connection: net/http no longer watches it.
func (st *feedStream) takeOver(r *http.Request) {
	if r.Method != http.MethodGet || r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.TLS != nil {
		return // HEAD has no body, HTTP/1.0 is not chunked, TLS and HTTP/2 stay with net/http
	}
	if !st.taken.begin() {
		return // shutting down
	}
	conn, rw, err := st.rc.Hijack()
	if err != nil {
		st.taken.end(nil)
		return
	}
	st.conn = conn
	st.taken.add(conn, st.rc)
	st.gone = make(chan struct{})
	go func(in *bufio.Reader) {
		defer close(st.gone)
		io.Copy(io.Discard, in) // a client sends nothing more; EOF when it leaves
	}(rw.Reader)
}

// close ends the chunked body of a taken-over connection (unless a write
// failed: the client is not reading) and closes it.
func (st *feedStream) close() {
	if st.conn == nil {
		st.taken.unwatch(st.rc)
		return
	}
	if st.err == nil {
		// Five bytes: a client whose buffers are full by now is not reading.
		_ = st.conn.SetWriteDeadline(time.Now().Add(min(st.timeout, closeGrace)))
		_, _ = io.WriteString(st.conn, "0\r\n\r\n")
	}
	st.conn.Close()
	<-st.gone
	st.taken.end(st.conn)
}

// takenStreams are the change-feed connections taken over from net/http,
// which its Shutdown and httptest's CloseClientConnections no longer see,
// and the streams net/http still writes (watched), whose pending write
// CloseStreams cuts as well: Shutdown waits for those, and would otherwise
// wait for a subscriber that stopped reading until the write timeout or
// its own.
type takenStreams struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	watched map[*http.ResponseController]struct{} // until taken over or ended
	closing atomic.Bool                           // set under mu; read without it by each write (nextDeadline)
	wg      sync.WaitGroup
}

// begin counts a stream about to be taken over; false once closing.
func (ts *takenStreams) begin() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closing.Load() {
		return false
	}
	ts.wg.Add(1)
	return true
}

// add counts a connection taken over from the stream of rc, which net/http
// no longer writes.
func (ts *takenStreams) add(c net.Conn, rc *http.ResponseController) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.conns == nil {
		ts.conns = map[net.Conn]struct{}{}
	}
	ts.conns[c] = struct{}{}
	delete(ts.watched, rc)
}

// watch notes a stream that net/http writes, until unwatch (or add, once
// taken over): rc must not be used after its handler returns, which the
// lock orders against wait.
func (ts *takenStreams) watch(rc *http.ResponseController) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.watched == nil {
		ts.watched = map[*http.ResponseController]struct{}{}
	}
	ts.watched[rc] = struct{}{}
}

func (ts *takenStreams) unwatch(rc *http.ResponseController) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.watched, rc)
}

// end uncounts a stream that begin counted (c nil: it was not taken).
func (ts *takenStreams) end(c net.Conn) {
	ts.mu.Lock()
	delete(ts.conns, c)
	ts.mu.Unlock()
	ts.wg.Done()
}

// wait refuses new streams, gives the write each stream may be blocked in
// grace to end (one to a subscriber that stopped reading would otherwise
// hold shutdown for its whole write timeout), and waits for the taken
// streams to end (net/http's Shutdown waits for the others). A subscriber
// that reads gets the end of its stream.
func (ts *takenStreams) wait(grace time.Duration) {
	ts.mu.Lock()
	ts.closing.Store(true)
	cut := time.Now().Add(grace)
	for c := range ts.conns {
		_ = c.SetWriteDeadline(cut)
	}
	for rc := range ts.watched {
		_ = rc.SetWriteDeadline(cut)
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}

// count is how many connections are taken over.
func (ts *takenStreams) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.conns)
}

// drop closes every taken-over connection, as a restart would.
func (ts *takenStreams) drop() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for c := range ts.conns {
		c.Close()
	}
}
