// Package gnmi is swmgr's gNMI front end: Capabilities, Get, Set and
// Subscribe over gRPC, on the same engine, users, roles, validation, config
// log and change feed as the REST API.
//
// Every RPC authenticates first: the metadata username and password are
// checked like HTTP Basic credentials (auth.Login: throttle, cache, the
// bound on checks); there is no anonymous path. Two origins are served:
// "swmgr", whose paths are derived from the model's declarations
// (/config/<Kind>[<Key>=<value>]/<Field>, /state/...), and "openconfig"
// (and the empty origin), the OpenConfig leaves that map onto swmgr's
// fields (openconfig.go). A SetRequest is one engine commit of source
// "gnmi"; its commit-confirmed extension is swmgr's confirmed commit.
// A Get of the configuration in the native origin is answered from the
// last Get of the same path while no commit has changed its kind since
// (getcache.go), as REST's GET by ObjectId is from the engine's object
// cache.
// docs/gnmi.md describes the paths, the mapping and the decisions.
package gnmi

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// DefaultPort is gNMI's conventional port (IANA's gnmi, 9339).
const DefaultPort = "9339"

// Login checks a user's credentials (auth.Login with the service's
// Verifier and Throttle).
type Login func(ctx context.Context, name, password string, addr netip.Addr) (auth.Identity, *auth.Refusal)

// StateSource lists the objects of a state-only kind from the provider
// the service's binding table binds to it (bind.Table.StateObjects); nil:
// only the engine's backend's.
type StateSource func(ctx context.Context, k *model.Kind) ([]model.Object, error)

// Options are what the gNMI server runs on.
type Options struct {
	Engine  *engine.Engine
	History *history.History // confirmed commits
	Login   Login
	State   StateSource
	TLS     *tls.Config // nil: plain TCP (tests only)
	Log     *slog.Logger
	// RefusalDelay holds a login refused by the throttle or the bound on
	// checks this long, as the HTTPS listener does.
	RefusalDelay time.Duration
	// SubscriberQueue is how many notifications a subscriber may have
	// waiting to be sent before it is cut off (ResourceExhausted); 0:
	// DefaultSubscriberQueue.
	SubscriberQueue int
	// StalledSubscriber is how long a subscriber may leave one
	// notification untaken (gRPC's flow control holding its send) before
	// it is cut off (ResourceExhausted) at the next notification for it;
	// 0: DefaultStalledSubscriber.
	StalledSubscriber time.Duration
	// Version is swmgr's version, which Capabilities and OpenConfig's
	// /system/state/software-version report.
	Version string
	// SimulatedSensors makes /components the simulated switch's sensors
	// rather than the host's (/sys/class/hwmon).
	SimulatedSensors bool
	// HandshakeTimeout bounds a connection's TLS handshake (and HTTP/2
	// preface); 0: gRPC's default, 120 s.
	HandshakeTimeout time.Duration
	// Access writes one line per RPC, refused ones too, when it ends
	// (a Subscribe's when the stream ends); nil: none.
	Access *obs.AccessLog
	// Metrics records each RPC when it ends and the open subscriptions;
	// nil: none.
	Metrics *obs.Metrics

	// Bounds on what one request, user and connection make swmgr hold
	// (limits.go); 0: the default of each.
	MaxGetPaths       int   // paths of one GetRequest: DefaultMaxGetPaths
	MaxGetAnswer      int64 // encoded bytes of one Get's answer: DefaultMaxGetAnswer
	UserGetBytes      int64 // answer bytes of one user's Gets at once: DefaultUserGetBytes
	UserSubscriptions int   // Subscribe streams open of one user: DefaultUserSubscriptions
	ConnSubscriptions int   // Subscribe streams open on one connection: DefaultConnSubscriptions
	UserQueuedBytes   int64 // notifications queued for one user, not taken: DefaultUserQueuedBytes

	// Sessions ends a subscription when its user's access ends, with the
	// status that says why (Unauthenticated, PermissionDenied); nil:
	// subscriptions end only with their clients or the server.
	Sessions *auth.Sessions

	// Services are served on the same gRPC server (gNOI): the same
	// listener, TLS, credentials, throttle, access log and metrics; each
	// declares what its methods need, which the server checks after the
	// credentials, before the method runs.
	Services []Service
}

// Service is another gRPC service served beside gNMI.
type Service interface {
	// Register registers its gRPC services.
	Register(grpc.ServiceRegistrar)
	// Need is what the full method (/package.Service/Method) needs of its
	// user; ok false when the method is not the service's.
	Need(fullMethod string) (need auth.Need, ok bool)
	// Refused is told of an RPC of its own refused for its user's role,
	// before it runs (to record it in the config log).
	Refused(ctx context.Context, fullMethod string, err error)
}

// gnmiPrefix starts the full method of gNMI's own RPCs, whose needs are
// decided in their handlers (a Set's by what it writes).
const gnmiPrefix = "/gnmi.gNMI/"

// need is what an RPC other than gNMI's needs of its user, as its service
// declares it; a method no service declares needs an admin.
func (s *Server) need(fullMethod string) (auth.Need, Service) {
	for _, svc := range s.o.Services {
		if n, ok := svc.Need(fullMethod); ok {
			return n, svc
		}
	}
	return auth.NeedAdmin, nil
}

// authorize refuses an RPC of another service than gNMI its user's role
// may not make (PermissionDenied), telling the service.
func (s *Server) authorize(ctx context.Context, fullMethod string, id auth.Identity) error {
	if strings.HasPrefix(fullMethod, gnmiPrefix) {
		return nil
	}
	need, svc := s.need(fullMethod)
	if id.Role.May(need) {
		return nil
	}
	err := status.Errorf(codes.PermissionDenied, "user %s (%s) may not call %s; that needs %s", id.Name, id.Role, fullMethod, need)
	if svc != nil {
		svc.Refused(context.WithValue(ctx, identityKey{}, id), fullMethod, err)
	}
	return err
}

// Identity is the user of an RPC the server authenticated (its context's).
func Identity(ctx context.Context) auth.Identity { return identityOf(ctx) }

// PeerAddr is the client's address of an RPC ("" if unknown).
func PeerAddr(ctx context.Context) string {
	_, addr := addrOf(ctx)
	return addr
}

// MaxRequest is the largest request accepted (a SetRequest of thousands
// of updates is a few MiB).
const MaxRequest = 16 << 20

// Defaults of Options.SubscriberQueue and Options.StalledSubscriber.
const (
	DefaultSubscriberQueue   = 4096
	DefaultStalledSubscriber = 30 * time.Second
)

// Server is the gNMI service.
type Server struct {
	gpb.UnimplementedGNMIServer
	o    Options
	reg  *model.Registry
	grpc *grpc.Server
	oc   *ocTree
	host *hostSource // the host kinds' (model.HostKinds)
	// states keeps state reads briefly for polling subscriptions.
	states stateCache
	// fan hands the change feed's commits to the subscriptions.
	fan fanout
	// messages keeps notifications for subscriptions alike, and polls
	// their reads.
	messages sharedCache[[]*encoded]
	polls    sharedCache[*polled]
	// pollReads counts the reads made for subscriptions that send the
	// polled values that changed (shared by the subscriptions alike).
	pollReads atomic.Int64
	// pollIDs names each polled read (polled.id); pollCompares counts the
	// comparisons of a poll with what was last sent (shared by the
	// subscriptions alike that sent the same).
	pollIDs      atomic.Uint64
	pollCompares atomic.Int64
	// memberReads counts the reads made of the objects a membership leaf
	// gathers (OpenConfig Member rows) for the change feed's commits.
	memberReads atomic.Int64
	// gets keeps answers of Gets of the configuration (getCache).
	gets getCache
	// users is what each user's RPCs hold now, conns the connections
	// served (limits.go).
	users users
	conns conns
	// bufs holds buffers for reads of one object and Get cache keys
	// (*[]byte).
	bufs sync.Pool
	// stop ends the subscriptions when the server stops.
	stop   chan struct{}
	closed bool
}

// windowSize is the flow-control window of each stream and of each
// connection: large enough that a Get of the whole configuration or a
// subscription's burst is not held back waiting for window updates.
const windowSize = 4 << 20

// streamWorkers run the RPCs (more at once each get a goroutine of their
// own, as without workers).
const streamWorkers = 16

// New makes the gNMI service.
func New(o Options) (*Server, error) {
	if o.Engine == nil || o.Login == nil {
		return nil, errors.New("gnmi: Engine and Login are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.SubscriberQueue <= 0 {
		o.SubscriberQueue = DefaultSubscriberQueue
	}
	if o.StalledSubscriber <= 0 {
		o.StalledSubscriber = DefaultStalledSubscriber
	}
	orDefault(&o.MaxGetPaths, DefaultMaxGetPaths)
	orDefault(&o.MaxGetAnswer, DefaultMaxGetAnswer)
	orDefault(&o.UserGetBytes, DefaultUserGetBytes)
	orDefault(&o.UserSubscriptions, DefaultUserSubscriptions)
	orDefault(&o.ConnSubscriptions, DefaultConnSubscriptions)
	orDefault(&o.UserQueuedBytes, DefaultUserQueuedBytes)
	s := &Server{o: o, reg: o.Engine.Registry(), stop: make(chan struct{})}
	s.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	s.fan.s = s
	oc, err := newOCTree(s.reg)
	if err != nil {
		return nil, err
	}
	s.oc = oc
	if s.host, err = newHostSource(o.Version, o.SimulatedSensors); err != nil {
		return nil, err
	}
	s.host.ntp = s.ntpState
	opts := []grpc.ServerOption{
		grpc.UnaryInterceptor(s.unaryAuth),
		grpc.StreamInterceptor(s.streamAuth),
		grpc.MaxRecvMsgSize(MaxRequest),
		// No answer larger than a Get's bound (a subscription's
		// notifications are smaller: maxNotificationBytes); gRPC's own
		// default is 2 GiB.
		grpc.MaxSendMsgSize(int(o.MaxGetAnswer) + sendMargin),
		grpc.MaxConcurrentStreams(1024),
		// Fixed flow-control windows: gRPC's default estimates the
		// bandwidth-delay product by sending a PING with the data of
		// every RPC (a write here, a read and an answer at the client);
		// a management plane's responses fit these windows anyway.
		grpc.InitialWindowSize(windowSize),
		grpc.InitialConnWindowSize(windowSize),
		// RPCs run on goroutines kept for the next ones rather than a new
		// goroutine each, whose stack would grow (copied, twice or more)
		// through the request's decoding and the engine's read every time.
		grpc.NumStreamWorkers(streamWorkers),
	}
	if o.HandshakeTimeout > 0 {
		opts = append(opts, grpc.ConnectionTimeout(o.HandshakeTimeout))
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	s.grpc = grpc.NewServer(opts...)
	gpb.RegisterGNMIServer(s.grpc, s)
	for _, svc := range o.Services {
		svc.Register(s.grpc)
	}
	return s, nil
}

// Serve answers gNMI on ln until Stop.
func (s *Server) Serve(ln net.Listener) error {
	return s.grpc.Serve(listener{Listener: ln, cs: &s.conns})
}

// orDefault sets *v to def when it is not positive.
func orDefault[T int | int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Stop ends the subscriptions and stops the server, waiting up to grace
// for the RPCs under way.
func (s *Server) Stop(grace time.Duration) {
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		s.grpc.Stop()
	}
}

// identity of an authenticated RPC: an auth.Identity (unary RPCs) or the
// *authedStream that holds it (streams).
type identityKey struct{}

func identityOf(ctx context.Context) auth.Identity {
	switch v := ctx.Value(identityKey{}).(type) {
	case auth.Identity:
		return v
	case *authedStream:
		return v.id
	}
	return auth.Identity{}
}

// streamOf is the authenticated stream whose context ctx is; nil if none.
func streamOf(ctx context.Context) *authedStream {
	as, _ := ctx.Value(identityKey{}).(*authedStream)
	return as
}

func addrOf(ctx context.Context) (netip.Addr, string) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}, ""
	}
	if t, ok := p.Addr.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return ap.Addr().Unmap(), ap.String()
	}
	ap, err := netip.ParseAddrPort(p.Addr.String())
	if err != nil {
		return netip.Addr{}, p.Addr.String()
	}
	return ap.Addr().Unmap(), p.Addr.String()
}

// authenticate checks the metadata credentials of an RPC before anything
// else runs.
func (s *Server) authenticate(ctx context.Context) (auth.Identity, error) {
	name, password := first(ctx, "username"), first(ctx, "password")
	if name == "" {
		return auth.Identity{}, status.Error(codes.Unauthenticated, "authentication required: send the credentials of a User as the metadata username and password")
	}
	addr, _ := addrOf(ctx)
	id, refused := s.o.Login(ctx, name, password, addr)
	if refused != nil {
		if refused.Hold {
			auth.HoldRefusal(ctx, s.o.RefusalDelay)
		}
		return auth.Identity{}, grpcError(refused.Err)
	}
	return id, nil
}

// first is the first value of the request metadata's key (read in place:
// FromIncomingContext would copy the whole metadata of every RPC).
func first(ctx context.Context, key string) string {
	if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	observed := s.o.Access != nil || s.o.Metrics != nil
	var start time.Time
	if observed {
		start = time.Now()
	}
	id, err := s.authenticate(ctx)
	if err == nil {
		err = s.authorize(ctx, info.FullMethod, id)
	}
	var resp any
	if err == nil {
		resp, err = handler(context.WithValue(ctx, identityKey{}, id), req)
	}
	if observed {
		s.observe(ctx, info.FullMethod, start, id.Name, pathCount(req), "", 0, err)
	}
	return resp, err
}

// pathCount is the number of paths a Get reads or a Set writes; -1 for
// the other requests.
func pathCount(req any) int {
	switch r := req.(type) {
	case *gpb.GetRequest:
		return len(r.GetPath())
	case *gpb.SetRequest:
		return len(r.GetDelete()) + len(r.GetReplace()) + len(r.GetUpdate()) + len(r.GetUnionReplace())
	}
	return -1
}

// authedStream is an authenticated stream: its context holds it (the
// identity), and it counts the notifications sent.
type authedStream struct {
	grpc.ServerStream
	ctx  context.Context
	id   auth.Identity
	mode string       // a Subscribe's (stream, once, poll), once known
	sent atomic.Int64 // responses sent but sync responses
}

func (a *authedStream) Context() context.Context { return a.ctx }

func (a *authedStream) SendMsg(m any) error {
	err := a.ServerStream.SendMsg(m)
	if err == nil {
		if r, ok := m.(*gpb.SubscribeResponse); !ok || r.GetUpdate() != nil {
			a.sent.Add(1)
		}
	}
	return err
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	observed := s.o.Access != nil || s.o.Metrics != nil
	var start time.Time
	if observed {
		start = time.Now()
	}
	ctx := ss.Context()
	id, err := s.authenticate(ctx)
	if err != nil {
		if observed {
			s.observe(ctx, info.FullMethod, start, "", -1, "", 0, err)
		}
		return err
	}
	if err := s.authorize(ctx, info.FullMethod, id); err != nil {
		if observed {
			s.observe(ctx, info.FullMethod, start, id.Name, -1, "", 0, err)
		}
		return err
	}
	need := auth.NeedRead
	if !strings.HasPrefix(info.FullMethod, gnmiPrefix) {
		need, _ = s.need(info.FullMethod)
	}
	as := &authedStream{ServerStream: ss, id: id}
	// The stream lasts while its user's access does, for what its method
	// needs: it ends with the status that says why.
	held, release := s.o.Sessions.Hold(ctx, id.Name, first(ctx, "password"), need)
	as.ctx = context.WithValue(held, identityKey{}, as)
	err = handler(srv, as)
	release()
	if refused := auth.Revoked(held); refused != nil {
		err = grpcError(refused)
	}
	if observed {
		s.observe(ctx, info.FullMethod, start, id.Name, -1, as.mode, as.sent.Load(), err)
	}
	return err
}

// observe writes an RPC's access line and records it in the metrics when
// it ends: user is "" unless it was authenticated, paths negative but for
// Get and Set, mode "" but for Subscribe.
func (s *Server) observe(ctx context.Context, fullMethod string, start time.Time, user string, paths int, mode string, sent int64, err error) {
	end := time.Now()
	took := end.Sub(start)
	code := statusCode(err)
	method := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	if m := s.o.Metrics; m != nil {
		m.ObserveGNMI(method, code, took)
		if code == codes.Unauthenticated && user == "" && first(ctx, "username") != "" { // not a stream whose user's access ended since
			m.LoginFailure()
		}
	}
	if a := s.o.Access; a != nil {
		var source net.Addr
		if p, ok := peer.FromContext(ctx); ok {
			source = p.Addr
		}
		a.WriteRPC(ctx, &obs.RPC{End: end, Latency: took, User: user, Source: source, Method: method, Code: code,
			Paths: paths, Mode: mode, Notifications: sent})
	}
}

// statusCode is the gRPC status code the client gets for err, as gRPC maps it.
func statusCode(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	return status.FromContextError(err).Code()
}

// meta is the engine's record of who made a change over gNMI.
func meta(ctx context.Context, comment string) engine.Meta {
	_, addr := addrOf(ctx)
	return engine.Meta{User: identityOf(ctx).Name, Addr: addr, Source: "gnmi", Comment: comment}
}
