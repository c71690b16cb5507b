package gnmi

import (
	"context"
	"net"
	"sync"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Bounds on what one request, one user and one connection may make swmgr
// hold, whatever the client sends or leaves unread (Options; docs/gnmi.md,
// "Bounds"). Each is a default of its option.
const (
	// DefaultMaxGetPaths is how many paths one GetRequest may name.
	DefaultMaxGetPaths = 1000
	// DefaultMaxGetAnswer bounds the encoded bytes of one Get's answer;
	// the Get stops reading as soon as its answer passes it.
	DefaultMaxGetAnswer = 8 << 20
	// DefaultUserGetBytes bounds the answer bytes of one user's Gets being
	// built at once.
	DefaultUserGetBytes = 16 << 20
	// DefaultUserSubscriptions and DefaultConnSubscriptions bound the
	// Subscribe streams open at once of one user and on one connection.
	DefaultUserSubscriptions = 64
	DefaultConnSubscriptions = 64
	// DefaultUserQueuedBytes bounds the encoded notifications queued for
	// one user's subscriptions and not yet taken by the client.
	DefaultUserQueuedBytes = 16 << 20
)

// One notification carries updates and deletes up to maxNotificationBytes
// (more make the next one).
const maxNotificationBytes = 64 << 10

// userReads is how many reads of many objects one user's RPCs make at
// once: its subscriptions' initial values and its Gets' paths that read a
// whole kind or more (usage.whileReading).
const userReads = 2

// sendMargin is what gRPC's send limit allows beyond a Get's answer bound
// (the response's own fields).
const sendMargin = 1 << 20

// users keeps what each user's RPCs hold now, while any of them runs.
type users struct {
	mu sync.Mutex
	m  map[string]*usage
}

// usage is what one user's RPCs hold now.
type usage struct {
	refs int // RPCs that hold it; guarded by users.mu

	mu       sync.Mutex
	getBytes int64 // answers of Gets being built
	streams  int   // Subscribe streams open
	queued   int64 // notifications queued and not taken
	// shared counts the queued references to each message that several
	// subscriptions send (encoded once): its bytes are held once.
	shared map[*encoded]int
	// reads holds a token while a read of many objects and what it
	// builds until encoded are under way (whileReading).
	reads chan struct{}
}

// whileReading runs read, which reads many objects when many is set: then
// once one of the user's read tokens is free (ctx's end stops the wait).
// A read of many objects holds every value it read until they are
// encoded; a user's such reads at once are userReads, whatever it sends.
func (u *usage) whileReading(ctx context.Context, many bool, read func() error) error {
	if !many {
		return read()
	}
	select {
	case u.reads <- struct{}{}:
	case <-ctx.Done():
		return cause(ctx)
	}
	defer func() { <-u.reads }()
	return read()
}

// acquire is name's usage, held until release.
func (us *users) acquire(name string) *usage {
	us.mu.Lock()
	defer us.mu.Unlock()
	if us.m == nil {
		us.m = map[string]*usage{}
	}
	u := us.m[name]
	if u == nil {
		u = &usage{shared: map[*encoded]int{}, reads: make(chan struct{}, userReads)}
		us.m[name] = u
	}
	u.refs++
	return u
}

func (us *users) release(name string, u *usage) {
	us.mu.Lock()
	defer us.mu.Unlock()
	if u.refs--; u.refs == 0 {
		delete(us.m, name)
	}
}

// addGet adds n bytes to the user's answers being built; false (nothing
// added) when that would pass limit.
func (u *usage) addGet(n, limit int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.getBytes+n > limit {
		return false
	}
	u.getBytes += n
	return true
}

func (u *usage) doneGet(n int64) {
	u.mu.Lock()
	u.getBytes -= n
	u.mu.Unlock()
}

// addStream counts one more open stream; false when limit are open.
func (u *usage) addStream(limit int) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.streams >= limit {
		return false
	}
	u.streams++
	return true
}

func (u *usage) doneStream() {
	u.mu.Lock()
	u.streams--
	u.mu.Unlock()
}

// hold counts a queued response of n bytes (e, when not nil, the message
// several subscriptions share: its bytes count once); false (nothing
// counted) when that would pass limit.
func (u *usage) hold(e *encoded, n, limit int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e != nil && u.shared[e] > 0 {
		u.shared[e]++
		return true
	}
	if u.queued+n > limit {
		return false
	}
	u.queued += n
	if e != nil {
		u.shared[e] = 1
	}
	return true
}

// unhold is the end of what hold counted.
func (u *usage) unhold(e *encoded, n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e != nil {
		if u.shared[e]--; u.shared[e] > 0 {
			return
		}
		delete(u.shared, e)
	}
	u.queued -= n
}

// encoded is a notification encoded once for the subscriptions that send
// it, and its size.
type encoded struct {
	msg  *grpc.PreparedMsg
	size int
}

// encode encodes each response once, with stream's codec.
func encode(stream grpc.ServerStream, rs []*gpb.SubscribeResponse) ([]*encoded, error) {
	out := make([]*encoded, 0, len(rs))
	for _, r := range rs {
		e := &encoded{msg: &grpc.PreparedMsg{}, size: proto.Size(r)}
		if err := e.msg.Encode(stream, r); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// conns are the connections the server serves, by the client's address:
// what a subscription that was cut with a send under way left in gRPC's
// send queue (a stream's end waits behind the data its client has not
// taken) stays counted against its user until the connection closes, and
// the connection's open subscriptions are counted.
type conns struct {
	mu sync.Mutex
	m  map[string]*conn
}

// conn is one connection: its subscriptions open, and what ended
// subscriptions may still hold in its send queue (released at its close).
type conn struct {
	streams int
	left    []leftover
	closed  bool
}

// leftover is what an ended subscription left in its connection's send
// queue: n bytes counted in u (e, when not nil, shared), and done, which
// ends the subscription's reference to u. The reference keeps u (and so
// what it counts) the user's until the connection closes: without it, a
// user whose streams all ended would start over from nothing while its
// leftovers are still held.
type leftover struct {
	u    *usage
	e    *encoded // nil: not shared
	n    int64
	done func()
}

func (l leftover) release() {
	l.u.unhold(l.e, l.n)
	if l.done != nil {
		l.done()
	}
}

// listener registers each connection accepted until it closes.
type listener struct {
	net.Listener
	cs *conns
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, cs: l.cs, key: c.RemoteAddr().String()}
	l.cs.mu.Lock()
	if l.cs.m == nil {
		l.cs.m = map[string]*conn{}
	}
	l.cs.m[tc.key] = &conn{}
	l.cs.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	cs   *conns
	key  string
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.cs.closed(c.key) })
	return c.Conn.Close()
}

// closed releases what the connection's ended subscriptions left.
func (cs *conns) closed(key string) {
	cs.mu.Lock()
	c := cs.m[key]
	delete(cs.m, key)
	if c != nil {
		c.closed = true
	}
	cs.mu.Unlock()
	if c == nil {
		return
	}
	for _, l := range c.left {
		l.release()
	}
}

// addStream counts one more subscription on the connection from addr;
// false when limit are open. A connection the server does not know (not
// accepted by Serve's listener) is not counted.
func (cs *conns) addStream(addr string, limit int) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[addr]
	if c == nil {
		return true
	}
	if c.streams >= limit {
		return false
	}
	c.streams++
	return true
}

func (cs *conns) doneStream(addr string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.m[addr]; c != nil {
		c.streams--
	}
}

// leave keeps l counted until the connection from addr closes; released
// at once if it is closed already or unknown.
func (cs *conns) leave(addr string, l leftover) {
	cs.mu.Lock()
	c := cs.m[addr]
	if c != nil && !c.closed {
		c.left = append(c.left, l)
		cs.mu.Unlock()
		return
	}
	cs.mu.Unlock()
	l.release()
}
