package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/swmgr/swmgr/internal/peercred"
)

// PeerOptions configure Peers.
type PeerOptions struct {
	// UserGroup reports the group of the swmgr User named name; ok is
	// false when no User has that name.
	UserGroup func(ctx context.Context, name string) (group string, ok bool, err error)
	// RefuseOthers refuses requests without credentials from local users
	// who are not swmgr Users (by default they may read).
	RefuseOthers bool
	// Self is the uid of this process (default os.Getuid()): like root, it
	// is admin, since it owns the data directory anyway.
	Self *uint32
	// Cred and UserName are the kernel and passwd lookups (defaults
	// peercred.Of and os/user); tests replace them.
	Cred     func(net.Conn) (peercred.Cred, error)
	UserName func(uid uint32) (string, error)
}

// Peers attributes requests that come without credentials from this host
// (a loopback TCP connection or a Unix socket) to the OS user that owns the
// client's socket:
//
//   - root, and the uid swmgr runs as, are admin;
//   - an OS user whose name is a swmgr User has that User's role;
//   - any other local user may read (or nothing, with RefuseOthers).
//
// The kernel lookup is made once per connection, at its first request
// without credentials (ConnContext attaches a slot for it); the role is
// looked up again only after an account changed (Forget).
type Peers struct {
	opts PeerOptions
	self uint32
	gen  atomic.Uint64
}

// NewPeers makes Peers.
func NewPeers(opts PeerOptions) *Peers {
	p := &Peers{opts: opts, self: uint32(os.Getuid())}
	if opts.Self != nil {
		p.self = *opts.Self
	}
	if p.opts.Cred == nil {
		p.opts.Cred = peercred.Of
	}
	if p.opts.UserName == nil {
		p.opts.UserName = osUserName
	}
	return p
}

// osUserName is the passwd name of uid, or "uid:<n>" for a uid without one
// (no User can have that name: it is not a POSIX user name).
func osUserName(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		var unknown user.UnknownUserIdError
		if errors.As(err, &unknown) {
			return "uid:" + strconv.FormatUint(uint64(uid), 10), nil
		}
		return "", fmt.Errorf("the name of uid %d: %w", uid, err)
	}
	return u.Username, nil
}

// Forget makes every connection look up its user's role again on its next
// request: an account changed (made, deleted, its group changed).
func (p *Peers) Forget(string) { p.gen.Add(1) }

// peerConn is the slot ConnContext attaches to a connection.
type peerConn struct {
	peers *Peers // whose connection it is: a held request asks them again (Sessions)
	conn  net.Conn
	once  sync.Once
	uid   uint32
	name  string
	err   error
	role  atomic.Pointer[peerRole]
}

type peerRole struct {
	gen uint64
	id  Identity
	err error
}

// ConnContext is for http.Server.ConnContext: it attaches to each
// connection the slot where its peer's identity is kept, under the key of
// a request's identity: a request that the handler attaches no identity to
// (one without credentials, from this peer) finds the connection's
// (FromContext).
func (p *Peers) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, identityKey{}, &peerConn{peers: p, conn: c})
}

// errPeerUnknown wraps failures to tell who the peer is.
var errPeerUnknown = errors.New("cannot tell which local user is on the other end of the connection")

// errNotAUser is the refusal of a local user who is not a swmgr User when
// RefuseOthers is set.
var errNotAUser = errors.New("is not a swmgr User, and this switch refuses local users who are not (send credentials)")

// identity is the identity of the peer of the request's connection.
func (p *Peers) identity(ctx context.Context) (Identity, error) {
	pc, _ := ctx.Value(identityKey{}).(*peerConn)
	if pc == nil {
		return Identity{}, fmt.Errorf("%w: the listener does not track its connections", errPeerUnknown)
	}
	pc.once.Do(func() {
		var cred peercred.Cred
		if cred, pc.err = p.opts.Cred(pc.conn); pc.err != nil {
			pc.err = fmt.Errorf("%w: %w", errPeerUnknown, pc.err)
			return
		}
		pc.uid = cred.UID
		if pc.name, pc.err = p.opts.UserName(cred.UID); pc.err != nil {
			pc.err = fmt.Errorf("%w: %w", errPeerUnknown, pc.err)
		}
	})
	if pc.err != nil {
		return Identity{}, pc.err
	}
	gen := p.gen.Load()
	if r := pc.role.Load(); r != nil && r.gen == gen {
		return r.id, r.err
	}
	r := &peerRole{gen: gen, id: Identity{Name: pc.name, Local: true}}
	switch {
	case pc.uid == 0 || pc.uid == p.self:
		r.id.Role = Admin
	default:
		group, ok, err := p.opts.UserGroup(ctx, pc.name)
		switch {
		case err != nil:
			return Identity{}, fmt.Errorf("the role of local user %s: %w", pc.name, err) // not kept: try again
		case ok:
			r.id.Group, r.id.Role = group, RoleOf(group)
		case p.opts.RefuseOthers:
			r.err = fmt.Errorf("local user %s %w", pc.name, errNotAUser)
		default:
			r.id.Role = Reader
		}
	}
	pc.role.Store(r)
	return r.id, r.err
}
