package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// coalesce is the notification of the commits evs for a subscription's
// target: each path once, with what the last commit left (a delete, an
// update, or both when it was deleted then made again), timestamped with
// the last commit's time; nil when nothing concerns it.
func coalesce(evs []*decodedEvent, t target, prefix *gpb.Path, enc gpb.Encoding) *gpb.SubscribeResponse {
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
	return notification(prefix, enc, ts, kept, del)
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
	key  string
	mu   sync.Mutex
	last map[string][]byte // path -> value last sent
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
		sc := &subscription{t: t, heartbeat: time.Duration(sub.GetHeartbeatInterval()), last: map[string][]byte{}}
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
	out := &sender{stream: stream, q: make(chan queued, s.o.SubscriberQueue), cancel: cancel, done: make(chan struct{}), timeout: s.o.StalledSubscriber}
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
	initial := func(recordLast bool) error {
		for _, sc := range subs {
			ls, err := sc.t.read(ctx, dataType{true, true}, 0)
			if err != nil {
				return grpcError(err)
			}
			if recordLast {
				sc.remember(ls)
			}
			if err := out.updates(prefix, enc, ls, nil); err != nil {
				return err
			}
		}
		return out.sync()
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
				sc.remember(ls)
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

func (sc *subscription) remember(ls []leaf) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, l := range ls {
		sc.last[pathString(l.path)] = l.json
	}
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
			msg, err := s.messages.get(fmt.Sprint(sc.key, "|", what, "|", tick.UnixNano()), every, func() (*grpc.PreparedMsg, error) {
				// Shared: not cut short when this subscription ends.
				ls, err := sc.t.read(context.WithoutCancel(ctx), what, every/2)
				if err != nil || len(ls) == 0 {
					return nil, err
				}
				m := &grpc.PreparedMsg{}
				return m, m.Encode(stream, notification(prefix, enc, tick.UnixNano(), ls, nil))
			})
			if err != nil {
				out.fail(grpcError(err))
				return
			}
			if msg != nil && out.put(msg) != nil {
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
			pr := &polled{leaves: ls, keys: make([]string, len(ls)), time: time.Now().UnixNano()}
			for i, l := range ls {
				pr.keys[i] = pathString(l.path)
			}
			return pr, nil
		})
		if err != nil {
			out.fail(grpcError(err))
			return
		}
		var changed []int // indices in pr.leaves
		sc.mu.Lock()
		for i, l := range pr.leaves {
			k := pr.keys[i]
			if bytes.Equal(sc.last[k], l.json) {
				continue
			}
			sc.last[k] = l.json
			changed = append(changed, i)
		}
		sc.mu.Unlock()
		if len(changed) == 0 {
			continue
		}
		msg, err := s.messages.get(changedKey(sc.key, what, tick, changed), every, func() (*grpc.PreparedMsg, error) {
			send := make([]leaf, len(changed))
			for j, i := range changed {
				send[j] = pr.leaves[i]
			}
			m := &grpc.PreparedMsg{}
			return m, m.Encode(stream, notification(prefix, enc, pr.time, send, nil))
		})
		if err != nil {
			out.fail(grpcError(err))
			return
		}
		if out.put(msg) != nil {
			return
		}
	}
}

// polled is one poll's read, shared by the subscriptions alike that poll
// at the same tick: the values, their paths as strings, and when it was
// read (unix ns).
type polled struct {
	leaves []leaf
	keys   []string
	time   int64
}

// changedKey names the notification of the values changed at a poll: the
// subscriptions alike that send the same of the poll's values share it.
func changedKey(key string, what dataType, tick time.Time, changed []int) string {
	b := fmt.Appendf(nil, "%s|%v|%d|changed", key, what, tick.UnixNano())
	for _, i := range changed {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
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
// subscriber that does not read them fills the queue and is cut off with
// ResourceExhausted, rather than slowing commits or growing memory.
type sender struct {
	stream gpb.GNMI_SubscribeServer
	q      chan queued
	cancel context.CancelCauseFunc
	done   chan struct{}
	once   sync.Once
	// ended: the RPC returned; nothing more is sent (a Send after the
	// handler returned is not allowed).
	ended atomic.Bool
	// gone: run returned (a send failed, or the queue was closed).
	gone atomic.Bool
	// sending is when the Send under way began (unix ns; 0: none), and
	// timeout how long one may take before the subscriber is cut off.
	sending atomic.Int64
	timeout time.Duration
}

var (
	errSlow    = status.Error(codes.ResourceExhausted, "subscriber too slow: its queue of notifications is full; it was cut off, subscribe again")
	errStalled = status.Error(codes.ResourceExhausted, "subscriber too slow: it has not taken a notification for too long; it was cut off, subscribe again")
)

// queued is one response to send: a *gpb.SubscribeResponse, or a
// *grpc.PreparedMsg shared by subscriptions alike; d, when not nil, is
// told once it is sent (or dropped).
type queued struct {
	m any
	d *delivery
}

func (o *sender) run() {
	defer close(o.done)
	defer o.gone.Store(true)
	for r := range o.q {
		if o.ended.Load() {
			r.sent()
			continue
		}
		o.sending.Store(time.Now().UnixNano())
		err := o.stream.SendMsg(r.m)
		o.sending.Store(0)
		r.sent()
		if err != nil {
			o.fail(err)
			for r := range o.q {
				r.sent()
			}
			return
		}
	}
}

func (r queued) sent() {
	if r.d != nil {
		r.d.sent()
	}
}

// idle says whether the sender has nothing queued nor being sent, and
// sends what is queued.
func (o *sender) idle() bool { return len(o.q) == 0 && o.sending.Load() == 0 && !o.gone.Load() }

func (o *sender) fail(err error) { o.cancel(err) }

func (o *sender) put(r any) error { return o.putCounted(r, nil) }

// putCounted queues r; d, when not nil, is told once it is sent (or
// dropped), but not when putCounted fails.
func (o *sender) putCounted(r any, d *delivery) error {
	if t := o.sending.Load(); t != 0 && o.timeout > 0 && time.Since(time.Unix(0, t)) > o.timeout {
		o.fail(errStalled)
		return errStalled
	}
	select {
	case o.q <- queued{r, d}:
		return nil
	default:
		o.fail(errSlow)
		return errSlow
	}
}

// close ends the queue; run sends what it holds.
func (o *sender) close() {
	o.once.Do(func() { close(o.q) })
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

// updates queues one notification of updates and deletes.
func (o *sender) updates(prefix *gpb.Path, enc gpb.Encoding, ls []leaf, del []*gpb.Path) error {
	if len(ls) == 0 && len(del) == 0 {
		return nil
	}
	return o.put(notification(prefix, enc, time.Now().UnixNano(), ls, del))
}

// notification is the response carrying updates and deletes.
func notification(prefix *gpb.Path, enc gpb.Encoding, ts int64, ls []leaf, del []*gpb.Path) *gpb.SubscribeResponse {
	n := &gpb.Notification{Timestamp: ts, Delete: del}
	if t := prefix.GetTarget(); t != "" {
		n.Prefix = &gpb.Path{Target: t}
	}
	for _, l := range ls {
		n.Update = append(n.Update, &gpb.Update{Path: l.path, Val: typedValue(enc, l.json)})
	}
	return &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}
}
