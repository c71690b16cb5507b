package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/swmgr/swmgr/internal/engine"
)

// A target is what one subscription's path names, in either origin.
type target interface {
	// read returns the current values of the parts dt names; state may
	// come from a read made for another subscription up to maxAge ago.
	read(ctx context.Context, dt dataType, maxAge time.Duration) ([]leaf, error)
	// parts says whether the target has configuration (which the change
	// feed reports) and state (which is polled).
	parts() dataType
	// fromDiff returns what one committed change does to the
	// configuration values: updates, and paths deleted.
	fromDiff(c *change) ([]leaf, []*gpb.Path)
}

// nativeTarget is a native path's selections.
type nativeTarget struct {
	s      *Server
	origin string
	sels   []sel
}

func (t *nativeTarget) read(ctx context.Context, dt dataType, maxAge time.Duration) ([]leaf, error) {
	var out []leaf
	for _, sl := range t.sels {
		if sl.state && !dt.state || !sl.state && !dt.config {
			continue
		}
		ls, err := t.s.nativeLeaves(ctx, sl, maxAge)
		if err != nil {
			return nil, err
		}
		out = append(out, ls...)
	}
	for i := range out {
		out[i].path.Origin = t.origin
	}
	return out, nil
}

func (t *nativeTarget) parts() dataType {
	var dt dataType
	for _, sl := range t.sels {
		dt.state = dt.state || sl.state
		dt.config = dt.config || !sl.state
	}
	return dt
}

func (t *nativeTarget) fromDiff(c *change) ([]leaf, []*gpb.Path) {
	var upd []leaf
	var del []*gpb.Path
	for _, sl := range t.sels {
		if sl.state || sl.kind.Name != c.Kind {
			continue
		}
		obj := c.After
		if c.Op == "delete" {
			obj = c.Before
		}
		keys := make(map[string]string, len(sl.kind.Keys()))
		for _, f := range sl.kind.Keys() {
			v, _ := memberOf(obj, f.Name)
			keys[f.Name] = rawText(v)
		}
		if !sl.matches(keys) {
			continue
		}
		if c.Op == "delete" {
			p := objectPath(false, sl.kind, keys, "")
			if sl.field != "" && sl.field != "*" {
				p = objectPath(false, sl.kind, keys, sl.field)
			}
			p.Origin = t.origin
			del = append(del, p)
			continue
		}
		if sl.field == "" {
			p := objectPath(false, sl.kind, keys, "")
			p.Origin = t.origin
			upd = append(upd, leaf{p, c.After})
			continue
		}
		after, before := c.maps()
		for _, f := range sl.kind.Fields {
			n := f.Name
			v, ok := after[n]
			if !ok || sl.field != "*" && sl.field != n {
				continue
			}
			if b, ok := before[n]; ok && bytes.Equal(b, v) {
				continue
			}
			p := objectPath(false, sl.kind, keys, n)
			p.Origin = t.origin
			upd = append(upd, leaf{p, v})
		}
	}
	return upd, del
}

// change is one committed change, decoded once for every subscription.
type change struct {
	engine.Diff
	once          sync.Once
	after, before map[string]json.RawMessage
	// members is what the commit did to the objects that membership
	// leaves gather, on its first change of their kind (memberState).
	members *memberChange
}

// maps is the object after and before the change, by field (decoded once,
// when a subscription first needs them).
func (c *change) maps() (after, before map[string]json.RawMessage) {
	c.once.Do(func() {
		_ = json.Unmarshal(c.After, &c.after)
		_ = json.Unmarshal(c.Before, &c.before)
	})
	return c.after, c.before
}

// coalesce is the notifications of the commits evs for a subscription's
// target: each path once, with what the last commit left (a delete, an
// update, or both when it was deleted then made again), timestamped with
// the last commit's time; nil when nothing concerns it.
func coalesce(evs []*decodedEvent, t target, prefix *gpb.Path, enc gpb.Encoding) []*gpb.SubscribeResponse {
	var ts int64
	updates := map[string]int{} // path -> index in upd
	deletes := map[string]int{} // path -> index in del
	var upd []leaf
	var del []*gpb.Path
	for _, d := range evs {
		ts = d.time
		for _, c := range d.changes {
			u, dl := t.fromDiff(c)
			for _, p := range dl {
				k := pathString(p)
				if i, ok := updates[k]; ok {
					upd[i].path = nil // dropped: deleted since
					delete(updates, k)
				}
				if _, ok := deletes[k]; !ok {
					deletes[k] = len(del)
					del = append(del, p)
				}
			}
			for _, l := range u {
				k := pathString(l.path)
				if i, ok := updates[k]; ok {
					upd[i].json = l.json
					continue
				}
				updates[k] = len(upd)
				upd = append(upd, l)
			}
		}
	}
	kept := upd[:0]
	for _, l := range upd {
		if l.path != nil {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 && len(del) == 0 {
		return nil
	}
	return notifications(prefix, enc, ts, kept, del)
}

// targetOf is the target of a subscription's full path.
func (s *Server) targetOf(p *gpb.Path, enc gpb.Encoding) (target, error) {
	native, err := isNative(p)
	if err != nil {
		return nil, err
	}
	if !native {
		return s.oc.target(s, p, enc)
	}
	sels, err := s.parseNative(p)
	if err != nil {
		return nil, err
	}
	return &nativeTarget{s: s, origin: p.GetOrigin(), sels: sels}, nil
}

// subscription is one subscription of a SubscriptionList, resolved: its
// configuration from the change feed (ON_CHANGE, TARGET_DEFINED), and
// what is polled at interval: everything (SAMPLE) or the state (ON_CHANGE
// of state, polled for changes; TARGET_DEFINED's state, sampled).
type subscription struct {
	t           target
	feed        bool          // configuration from the change feed
	poll        dataType      // what is read at interval
	interval    time.Duration // of poll
	changedOnly bool          // a poll sends only what changed since last sent
	heartbeat   time.Duration // everything again at this interval; 0: never
	// key names what the change feed gives this subscription (its path,
	// encoding and prefix): subscriptions with the same key share each
	// notification, encoded once.
	key string
	mu  sync.Mutex
	// base is what the polls that send what changed compare with: the
	// values last sent of the polled part, as the poll that read them
	// (shared by every subscription alike that sent it) or, until the
	// first poll, the subscription's own initial read.
	base *polled
}

// Sample intervals: the default (SAMPLE without an interval, state under
// TARGET_DEFINED), the shortest accepted, and how often state that is
// subscribed ON_CHANGE is polled for changes.
const (
	DefaultSampleInterval = 10 * time.Second
	MinSampleInterval     = 100 * time.Millisecond
	StatePollInterval     = time.Second
)

// Subscribe serves ONCE, POLL and STREAM subscriptions.
func (s *Server) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	user := identityOf(ctx).Name
	u := s.users.acquire(user)
	defer s.users.release(user, u)
	if !u.addStream(s.o.UserSubscriptions) {
		return status.Errorf(codes.ResourceExhausted, "%s has %d Subscribe streams open, the most one user may: put several paths in one SubscriptionList, or close streams first", user, s.o.UserSubscriptions)
	}
	defer u.doneStream()
	_, addr := addrOf(ctx)
	if !s.conns.addStream(addr, s.o.ConnSubscriptions) {
		return status.Errorf(codes.ResourceExhausted, "this connection has %d Subscribe streams open, the most one connection may: put several paths in one SubscriptionList, or close streams first", s.o.ConnSubscriptions)
	}
	defer s.conns.doneStream(addr)
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	list := first.GetSubscribe()
	if list == nil {
		return status.Error(codes.InvalidArgument, "the first SubscribeRequest must carry a SubscriptionList")
	}
	mode := modeName(list.GetMode())
	if as := streamOf(stream.Context()); as != nil {
		as.mode = mode // for the access line
	}
	if err := checkEncoding(list.GetEncoding()); err != nil {
		return err
	}
	if len(list.GetUseModels()) > 0 {
		return status.Error(codes.Unimplemented, "use_models is not supported; every model is served")
	}
	if list.GetAllowAggregation() {
		list.AllowAggregation = false // nothing is aggregated: allowed, ignored
	}
	var subs []*subscription
	for _, sub := range list.GetSubscription() {
		full, err := joinPath(list.GetPrefix(), sub.GetPath())
		if err != nil {
			return err
		}
		t, err := s.targetOf(full, list.GetEncoding())
		if err != nil {
			return grpcError(err)
		}
		parts := t.parts()
		sc := &subscription{t: t, heartbeat: time.Duration(sub.GetHeartbeatInterval())}
		interval := time.Duration(sub.GetSampleInterval())
		switch sub.GetMode() {
		case gpb.SubscriptionMode_SAMPLE:
			sc.poll, sc.interval, sc.changedOnly = parts, interval, sub.GetSuppressRedundant()
			if sc.interval == 0 {
				sc.interval = DefaultSampleInterval
			}
		case gpb.SubscriptionMode_ON_CHANGE:
			sc.feed = parts.config
			if parts.state {
				sc.poll, sc.interval, sc.changedOnly = dataType{state: true}, StatePollInterval, true
			}
		default: // TARGET_DEFINED
			sc.feed = parts.config
			if parts.state {
				sc.poll, sc.interval, sc.changedOnly = dataType{state: true}, interval, sub.GetSuppressRedundant()
				if sc.interval == 0 {
					sc.interval = DefaultSampleInterval
				}
			}
		}
		if sc.interval != 0 && sc.interval < MinSampleInterval {
			return status.Errorf(codes.InvalidArgument, "%s: sample_interval %s is below the shortest, %s", pathString(full), sc.interval, MinSampleInterval)
		}
		if sc.heartbeat != 0 && sc.heartbeat < MinSampleInterval {
			return status.Errorf(codes.InvalidArgument, "%s: heartbeat_interval %s is below the shortest, %s", pathString(full), sc.heartbeat, MinSampleInterval)
		}
		sc.key = fmt.Sprint(list.GetEncoding(), "|", list.GetPrefix().GetTarget(), "|", pathString(full))
		subs = append(subs, sc)
	}
	if len(subs) == 0 {
		return status.Error(codes.InvalidArgument, "the SubscriptionList has no subscription")
	}
	if m := s.o.Metrics; m != nil {
		m.GNMISubscription(mode, 1)
		defer m.GNMISubscription(mode, -1)
	}
	out := s.newSender(stream, cancel)
	go out.run()
	defer out.stop()
	enc := list.GetEncoding()
	prefix := list.GetPrefix()
	// A STREAM's configuration comes from the change feed: its members
	// join their groups before the initial values are read, so that no
	// commit falls between, and hold the notifications until those values
	// are queued.
	var members []*member
	if list.GetMode() == gpb.SubscriptionList_STREAM {
		defer func() {
			for _, m := range members {
				s.fan.leave(m)
			}
		}()
		for _, sc := range subs {
			if sc.feed {
				m, err := s.fan.join(sc, out, stream, prefix, enc)
				if err != nil {
					return grpcError(err)
				}
				members = append(members, m)
			}
		}
	}
	readInitial := func(recordLast bool) error {
		for _, sc := range subs {
			ls, err := sc.t.read(ctx, dataType{true, true}, 0)
			if err != nil {
				return grpcError(err)
			}
			if recordLast {
				if err := s.rememberPolled(ctx, sc, ls); err != nil {
					return err
				}
			}
			// Encoded at once (the values' bytes, not their structures,
			// wait for the client), and counted against the user's bound.
			msgs, err := encode(stream, notifications(prefix, enc, time.Now().UnixNano(), ls, nil))
			if err != nil {
				return grpcError(err)
			}
			if err := out.putAll(msgs); err != nil {
				return err
			}
		}
		return out.sync()
	}
	// The initial values are read with one of the user's read tokens: a
	// read of / holds every value until it is encoded.
	initial := func(recordLast bool) error {
		return u.whileReading(ctx, true, func() error { return readInitial(recordLast) })
	}
	switch list.GetMode() {
	case gpb.SubscriptionList_ONCE:
		if err := initial(false); err != nil {
			return err
		}
		return out.finish(ctx)
	case gpb.SubscriptionList_POLL:
		if err := initial(false); err != nil {
			return err
		}
		for {
			req, err := stream.Recv()
			if err != nil {
				return nil
			}
			if req.GetPoll() == nil {
				return status.Error(codes.InvalidArgument, "a POLL subscription takes Poll requests only")
			}
			if err := initial(false); err != nil {
				return err
			}
		}
	}
	// STREAM
	var read uint64 // every commit up to it is in the initial values
	if list.GetUpdatesOnly() {
		// What is polled for changes starts from the current values
		// (the configuration comes from the change feed).
		for _, sc := range subs {
			if !sc.changedOnly || sc.interval == 0 {
				continue
			}
			if ls, err := sc.t.read(ctx, sc.poll, sc.interval/2); err == nil {
				s.remember(sc, ls)
			}
		}
		if err := out.sync(); err != nil {
			return err
		}
	} else {
		read = s.o.Engine.LastCommit() // before the read: see engine.LastCommit
		if err := initial(true); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	for _, sc := range subs {
		if sc.interval == 0 && sc.heartbeat == 0 {
			continue // the change feed alone
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.poll(ctx, sc, stream, prefix, enc, out) }()
	}
	go func() { // a client's half-close or error ends nothing; reads keep the stream's flow going
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	for _, m := range members {
		if err := m.started(read); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		return cause(ctx)
	case <-s.stop:
		return status.Error(codes.Unavailable, "swmgr is shutting down")
	}
}

// modeName is a SubscriptionList mode as the access log and the metrics
// name it; a mode that is none of the three is served as STREAM.
func modeName(m gpb.SubscriptionList_Mode) string {
	switch m {
	case gpb.SubscriptionList_ONCE:
		return "once"
	case gpb.SubscriptionList_POLL:
		return "poll"
	}
	return "stream"
}

// cause is the status a cancelled subscription ends with.
func cause(ctx context.Context) error {
	err := context.Cause(ctx)
	if _, ok := status.FromError(err); ok && err != nil {
		return err
	}
	return status.FromContextError(ctx.Err()).Err()
}

// remember records ls as sent: the values that later polls compare with,
// and the paths whose disappearance they report as deletes (ls must be
// all of what the poll reads).
func (s *Server) remember(sc *subscription, ls []leaf) {
	b := s.newPolled(ls, time.Now().UnixNano())
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.base = b
}

// rememberPolled records, of the initial values ls, what the polls of a
// subscription that sends what changed compare with: all of ls when
// everything is polled, else a read of the polled part alone (the state:
// the configuration's changes and deletes come from the change feed).
func (s *Server) rememberPolled(ctx context.Context, sc *subscription, ls []leaf) error {
	if !sc.changedOnly || sc.interval == 0 {
		return nil
	}
	if sc.poll != (dataType{true, true}) {
		var err error
		if ls, err = sc.t.read(ctx, sc.poll, sc.interval/2); err != nil {
			return grpcError(err)
		}
	}
	s.remember(sc, ls)
	return nil
}

// poll reads a subscription's polled part at its interval (sending only
// what changed when changedOnly), and everything at its heartbeat. Polls
// fall on multiples of the interval in wall-clock time, so that the
// subscriptions with the same interval poll together: they share the
// state read, and those that send everything share the notification,
// encoded once (Server.samples).
func (s *Server) poll(ctx context.Context, sc *subscription, stream grpc.ServerStream, prefix *gpb.Path, enc gpb.Encoding, out *sender) {
	every := sc.interval
	if every == 0 || sc.heartbeat != 0 && sc.heartbeat < every {
		every = sc.heartbeat
	}
	timer := time.NewTimer(time.Until(time.Now().Truncate(every).Add(every)))
	defer timer.Stop()
	var lastPoll, lastFull time.Time
	start := time.Now()
	for {
		var tick time.Time
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case tick = <-timer.C:
		}
		tick = tick.Truncate(every)
		timer.Reset(time.Until(tick.Add(every)))
		if lastFull.IsZero() {
			lastFull = start
		}
		heartbeat := sc.heartbeat > 0 && tick.Sub(lastFull) >= sc.heartbeat-every/2
		due := sc.interval > 0 && (lastPoll.IsZero() || tick.Sub(lastPoll) >= sc.interval-every/2)
		if !heartbeat && !due {
			continue
		}
		what, changedOnly := sc.poll, sc.changedOnly
		if heartbeat {
			what, changedOnly, lastFull = dataType{true, true}, false, tick
		}
		lastPoll = tick
		if !changedOnly {
			msgs, err := s.messages.get(fmt.Sprint(sc.key, "|", what, "|", tick.UnixNano()), every, func() ([]*encoded, error) {
				// Shared: not cut short when this subscription ends.
				ls, err := sc.t.read(context.WithoutCancel(ctx), what, every/2)
				if err != nil || len(ls) == 0 {
					return nil, err
				}
				return encode(stream, notifications(prefix, enc, tick.UnixNano(), ls, nil))
			})
			if err != nil {
				out.fail(grpcError(err))
				return
			}
			if out.putAll(msgs) != nil {
				return
			}
			continue
		}
		// The subscriptions alike that poll at this tick share the read
		// and, when they have the same values to send (all of them, but
		// for one that started since the last tick), the notification.
		pr, err := s.polls.get(fmt.Sprint(sc.key, "|", what, "|", tick.UnixNano()), every, func() (*polled, error) {
			// Shared: not cut short when this subscription ends. A
			// read another subscription made within half the interval
			// will do.
			ls, err := sc.t.read(context.WithoutCancel(ctx), what, every/2)
			if err != nil {
				return nil, err
			}
			s.pollReads.Add(1)
			return s.newPolled(ls, time.Now().UnixNano()), nil
		})
		if err != nil {
			out.fail(grpcError(err))
			return
		}
		// What changed since the subscription's base is compared and
		// encoded once for all the subscriptions alike with the same base:
		// those that sent the last poll (all of them, but for one that
		// started since the last tick) share one comparison and one
		// notification, and from now on this poll as their base.
		sc.mu.Lock()
		base := sc.base
		sc.base = pr
		sc.mu.Unlock()
		if base == nil {
			base = &polled{}
		}
		msgs, err := s.messages.get(fmt.Sprint(sc.key, "|", what, "|", tick.UnixNano(), "|changed since|", base.id), every, func() ([]*encoded, error) {
			s.pollCompares.Add(1)
			changed, gone := changedSince(base, pr)
			if len(changed) == 0 && len(gone) == 0 {
				return nil, nil
			}
			send := make([]leaf, len(changed))
			for j, i := range changed {
				send[j] = pr.leaves[i]
			}
			return encode(stream, notifications(prefix, enc, pr.time, send, gone))
		})
		if err != nil {
			out.fail(grpcError(err))
			return
		}
		if out.putAll(msgs) != nil {
			return
		}
	}
}

// changedSince is what a poll pr changed of base: the indices in pr.leaves
// of the values that changed or are new, and the paths of base that pr no
// longer has (deleted), in the order of their paths.
func changedSince(base, pr *polled) (changed []int, gone []*gpb.Path) {
	found := 0
	for i, l := range pr.leaves {
		j, ok := base.index[pr.keys[i]]
		if ok {
			found++
		}
		if !ok || !bytes.Equal(base.leaves[j].json, l.json) {
			changed = append(changed, i)
		}
	}
	if found < len(base.leaves) {
		var keys []int // of base
		for j, k := range base.keys {
			if _, ok := pr.index[k]; !ok {
				keys = append(keys, j)
			}
		}
		slices.SortFunc(keys, func(a, b int) int { return strings.Compare(base.keys[a], base.keys[b]) })
		for _, j := range keys {
			gone = append(gone, base.leaves[j].path)
		}
	}
	return changed, gone
}

// polled is the values of one read of a subscription's polled part: a
// poll's, shared by the subscriptions alike that poll at the same tick,
// or a subscription's initial read; their paths as strings, and when it
// was read (unix ns). It is never modified once made.
type polled struct {
	// id names it among the server's reads, as the base a poll's changes
	// are compared with (0: nothing read).
	id     uint64
	leaves []leaf
	keys   []string
	index  map[string]int // keys -> index in leaves
	time   int64
}

// newPolled is the read ls, made at t (unix ns).
func (s *Server) newPolled(ls []leaf, t int64) *polled {
	pr := &polled{id: s.pollIDs.Add(1), leaves: ls, keys: make([]string, len(ls)), index: make(map[string]int, len(ls)), time: t}
	for i, l := range ls {
		pr.keys[i] = pathString(l.path)
		pr.index[pr.keys[i]] = i
	}
	return pr
}

// sharedCache keeps what subscriptions alike share, each built once: a
// poll's notification, for those that poll at the same moment; a poll's
// read, for those that send what changed. An entry is kept twice the keep
// its first user asked for.
type sharedCache[T any] struct {
	mu    sync.Mutex
	m     map[string]*sharedEntry[T]
	swept time.Time // the last sweep of expired entries
}

type sharedEntry[T any] struct {
	once    sync.Once
	expires time.Time
	v       T
	err     error
}

// sweepEvery is how often the expired entries of a sharedCache are
// dropped (not at every new entry: 100 subscriptions make hundreds of
// entries a second).
const sweepEvery = 100 * time.Millisecond

func (c *sharedCache[T]) get(key string, keep time.Duration, build func() (T, error)) (T, error) {
	now := time.Now()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*sharedEntry[T]{}
	}
	e := c.m[key]
	if e == nil {
		e = &sharedEntry[T]{expires: now.Add(2 * keep)}
		c.m[key] = e
		if now.Sub(c.swept) >= sweepEvery {
			c.swept = now
			for k, old := range c.m {
				if now.After(old.expires) {
					delete(c.m, k)
				}
			}
		}
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	return e.v, e.err
}

// sender writes a subscription's responses from a bounded queue: a
// subscriber that does not read them fills the queue, or its user's bound
// on bytes queued, or leaves one send under way for longer than timeout,
// and is cut off with ResourceExhausted, rather than slowing commits or
// growing memory.
type sender struct {
	stream gpb.GNMI_SubscribeServer
	q      *sendQueue
	cancel context.CancelCauseFunc
	done   chan struct{}
	// ended: the RPC returned; nothing more is sent (a Send after the
	// handler returned is not allowed).
	ended atomic.Bool
	// gone: run returned (a send failed, or the queue was closed).
	gone atomic.Bool
	// sending is when the Send under way began (unix ns; 0: none), and
	// timeout how long one may take: stall cuts the subscriber off then,
	// whether or not anything else is queued for it (a Send held by
	// gRPC's flow control returns once the stream ends).
	sending atomic.Int64
	timeout time.Duration
	stall   *time.Timer
	// u counts the bytes queued of the user's subscriptions, up to limit
	// (nil: not counted); what a subscription cut off may have left in
	// gRPC's send queue stays counted until its connection (addr in
	// conns) closes.
	u     *usage
	limit int64
	conns *conns
	addr  string
	// leaveOnEnd: cut off for not taking its notifications: what the
	// last sends left in gRPC's send queue stays there.
	leaveOnEnd atomic.Bool
	// onDone runs when run returns.
	onDone func()
}

// newSender is the sender of a Subscribe stream.
func (s *Server) newSender(stream gpb.GNMI_SubscribeServer, cancel context.CancelCauseFunc) *sender {
	_, addr := addrOf(stream.Context())
	o := &sender{stream: stream, q: newSendQueue(s.o.SubscriberQueue), cancel: cancel, done: make(chan struct{}),
		timeout: s.o.StalledSubscriber, limit: s.o.UserQueuedBytes, conns: &s.conns, addr: addr}
	user := identityOf(stream.Context()).Name
	o.u = s.users.acquire(user)
	o.stall = time.AfterFunc(time.Hour, func() { o.fail(errStalled) })
	o.stall.Stop()
	o.onDone = func() { s.users.release(user, o.u) }
	return o
}

var (
	errSlow    = status.Error(codes.ResourceExhausted, "subscriber too slow: its queue of notifications is full; it was cut off, subscribe again")
	errStalled = status.Error(codes.ResourceExhausted, "subscriber too slow: it has not taken a notification for too long; it was cut off, subscribe again")
)

// errUserQueued is the end of a subscription whose notification would
// pass its user's bound on bytes queued.
func errUserQueued(limit int64) error {
	return status.Errorf(codes.ResourceExhausted, "subscriber too slow: the notifications queued for this user's subscriptions and not taken would pass %d bytes; it was cut off: read the subscriptions, or subscribe to fewer or narrower paths", limit)
}

// grpcWriteQuota is what gRPC takes of a stream's sends before a Send
// waits for the client to take them (its writeQuota), beyond the last one.
const grpcWriteQuota = 64 << 10

// queued is one response to send: a *gpb.SubscribeResponse, or a
// *grpc.PreparedMsg shared by subscriptions alike (e); n is its size in
// bytes; d, when not nil, is told once it is sent (or dropped).
type queued struct {
	m any
	d *delivery
	e *encoded
	n int64
}

func (o *sender) run() {
	defer close(o.done)
	defer o.gone.Store(true)
	var last queued // the last sent: it may be in gRPC's send queue still
	defer func() {
		if o.stall != nil {
			o.stall.Stop()
		}
		o.release(last)
		done := o.onDone
		if o.u != nil && last.m != nil && o.leaveOnEnd.Load() {
			n := last.n + grpcWriteQuota
			o.u.hold(nil, n, 1<<62)
			o.conns.leave(o.addr, leftover{u: o.u, n: n, done: done})
			done = nil // with the leftover
		}
		if done != nil {
			done()
		}
	}()
	for r, ok := o.q.wait(); ok; r, ok = o.q.wait() {
		if o.ended.Load() {
			o.release(r)
			r.sent()
			continue
		}
		o.sending.Store(time.Now().UnixNano())
		if o.stall != nil {
			o.stall.Reset(o.timeout)
		}
		err := o.stream.SendMsg(r.m)
		if o.stall != nil {
			o.stall.Stop()
		}
		o.sending.Store(0)
		r.sent()
		if err != nil {
			o.release(r)
			o.fail(err)
			for r, ok := o.q.wait(); ok; r, ok = o.q.wait() {
				o.release(r)
				r.sent()
			}
			return
		}
		o.release(last)
		last = r
	}
}

// release ends the count of r's bytes.
func (o *sender) release(r queued) {
	if r.m == nil {
		return
	}
	if o.u != nil {
		o.u.unhold(r.e, r.n)
	}
}

func (r queued) sent() {
	if r.d != nil {
		r.d.sent()
	}
}

// idle says whether the sender has nothing queued nor being sent, and
// sends what is queued.
func (o *sender) idle() bool { return o.q.len() == 0 && o.sending.Load() == 0 && !o.gone.Load() }

func (o *sender) fail(err error) {
	if status.Code(err) == codes.ResourceExhausted {
		o.leaveOnEnd.Store(true)
	}
	o.cancel(err)
}

// put queues a *gpb.SubscribeResponse or an *encoded one.
func (o *sender) put(r any) error { return o.putCounted(r, nil) }

// putAll queues the encoded responses in order.
func (o *sender) putAll(rs []*encoded) error {
	for _, r := range rs {
		if err := o.put(r); err != nil {
			return err
		}
	}
	return nil
}

// putCounted queues r; d, when not nil, is told once it is sent (or
// dropped), but not when putCounted fails.
func (o *sender) putCounted(r any, d *delivery) error {
	q := queued{m: r, d: d}
	switch x := r.(type) {
	case *encoded:
		q.m, q.e, q.n = x.msg, x, int64(x.size)
	case *gpb.SubscribeResponse:
		q.n = int64(proto.Size(x))
	}
	if o.u != nil && !o.u.hold(q.e, q.n, o.limit) {
		err := errUserQueued(o.limit)
		o.fail(err)
		return err
	}
	if !o.q.push(q) {
		o.release(q)
		o.fail(errSlow)
		return errSlow
	}
	return nil
}

// close ends the queue; run sends what it holds.
func (o *sender) close() {
	o.q.close()
}

// stop ends the queue when the RPC returns: what it still holds is
// dropped.
func (o *sender) stop() {
	o.ended.Store(true)
	o.close()
}

// finish waits for everything queued to be sent (ONCE).
func (o *sender) finish(ctx context.Context) error {
	o.close()
	select {
	case <-o.done:
	case <-ctx.Done():
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func (o *sender) sync() error {
	return o.put(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
}

// notifications are the responses carrying updates ls and deletes del,
// each up to maxNotificationBytes of them (the deletes first, as a
// notification applies them first).
func notifications(prefix *gpb.Path, enc gpb.Encoding, ts int64, ls []leaf, del []*gpb.Path) []*gpb.SubscribeResponse {
	var out []*gpb.SubscribeResponse
	var n *gpb.Notification
	size := 0
	add := func(s int) {
		if n == nil || size+s > maxNotificationBytes && size > 0 {
			n = &gpb.Notification{Timestamp: ts}
			if t := prefix.GetTarget(); t != "" {
				n.Prefix = &gpb.Path{Target: t}
			}
			out = append(out, &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}})
			size = 0
		}
		size += s
	}
	for _, p := range del {
		add(pathSize(p))
		n.Delete = append(n.Delete, p)
	}
	for _, l := range ls {
		add(pathSize(l.path) + len(l.json))
		n.Update = append(n.Update, &gpb.Update{Path: l.path, Val: typedValue(enc, l.json)})
	}
	return out
}

// pathSize is about a path's encoded size.
func pathSize(p *gpb.Path) int {
	n := len(p.GetOrigin()) + 4
	for _, e := range p.GetElem() {
		n += len(e.GetName()) + 4
		for k, v := range e.GetKey() {
			n += len(k) + len(v) + 8
		}
	}
	return n
}

// sendQueue is a sender's queue of responses, up to max of them. Its
// slice grows with what is queued and is let go once empty: a channel of
// max entries would hold its whole buffer (max x 40 bytes, 160 KiB at the
// default) for every subscription open, all the time.
type sendQueue struct {
	mu     sync.Mutex
	items  []queued
	head   int // items[head:] are queued
	max    int
	closed bool
	ready  chan struct{} // signalled when an item is queued or the queue closed
}

func newSendQueue(max int) *sendQueue {
	return &sendQueue{max: max, ready: make(chan struct{}, 1)}
}

// push queues r; false when max are queued already. What is pushed after
// close is never sent.
func (q *sendQueue) push(r queued) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items)-q.head >= q.max {
		return false
	}
	q.items = append(q.items, r)
	q.signal()
	return true
}

// signal wakes wait; q.mu is held.
func (q *sendQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// wait takes the next response, waiting for one; false once the queue is
// closed and empty.
func (q *sendQueue) wait() (queued, bool) {
	for {
		if r, ok, closed := q.take(); ok || closed {
			return r, ok
		}
		<-q.ready
	}
}

// take takes the next response if there is one; closed reports a closed
// and empty queue.
func (q *sendQueue) take() (r queued, ok, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return queued{}, false, q.closed
	}
	r = q.items[q.head]
	q.items[q.head] = queued{}
	q.head++
	if q.head == len(q.items) {
		q.head = 0
		if cap(q.items) > keptQueue {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
	}
	return r, true, false
}

// keptQueue is the most entries an empty queue keeps room for.
const keptQueue = 64

func (q *sendQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// close ends the queue: wait returns what it holds, then false.
func (q *sendQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.signal()
}
