package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/feed"
)

// A target is what one subscription's path names, in either origin.
type target interface {
	// read returns the current values.
	read(ctx context.Context) ([]leaf, error)
	// config reports whether every value is configuration, which the
	// change feed reports (ON_CHANGE from the feed).
	config() bool
	// fromDiff returns what one committed change does to the values:
	// updates, and paths deleted.
	fromDiff(d *engine.Diff) ([]leaf, []*gpb.Path)
}

// nativeTarget is a native path's selections.
type nativeTarget struct {
	s      *Server
	origin string
	sels   []sel
}

func (t *nativeTarget) read(ctx context.Context) ([]leaf, error) {
	var out []leaf
	for _, sl := range t.sels {
		ls, err := t.s.nativeLeaves(ctx, sl)
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

func (t *nativeTarget) config() bool {
	for _, sl := range t.sels {
		if sl.state {
			return false
		}
	}
	return true
}

func (t *nativeTarget) fromDiff(d *engine.Diff) ([]leaf, []*gpb.Path) {
	var upd []leaf
	var del []*gpb.Path
	for _, sl := range t.sels {
		if sl.state || sl.kind.Name != d.Kind {
			continue
		}
		obj := d.After
		if d.Op == "delete" {
			obj = d.Before
		}
		names, m, err := fieldsOf(sl.kind, false, obj)
		if err != nil {
			continue
		}
		keys := make(map[string]string, len(sl.kind.Keys()))
		for _, f := range sl.kind.Keys() {
			keys[f.Name] = rawText(m[f.Name])
		}
		if !sl.matches(keys) {
			continue
		}
		if d.Op == "delete" {
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
			upd = append(upd, leaf{p, d.After})
			continue
		}
		var before map[string]json.RawMessage
		if d.Before != nil {
			_ = json.Unmarshal(d.Before, &before)
		}
		for _, n := range names {
			if sl.field != "*" && sl.field != n {
				continue
			}
			if b, ok := before[n]; ok && bytes.Equal(b, m[n]) {
				continue
			}
			p := objectPath(false, sl.kind, keys, n)
			p.Origin = t.origin
			upd = append(upd, leaf{p, m[n]})
		}
	}
	return upd, del
}

// targetOf is the target of a subscription's full path.
func (s *Server) targetOf(p *gpb.Path) (target, error) {
	native, err := isNative(p)
	if err != nil {
		return nil, err
	}
	if !native {
		return s.oc.target(s, p)
	}
	sels, err := s.parseNative(p)
	if err != nil {
		return nil, err
	}
	return &nativeTarget{s: s, origin: p.GetOrigin(), sels: sels}, nil
}

// subscription is one subscription of a SubscriptionList, resolved.
type subscription struct {
	t         target
	mode      gpb.SubscriptionMode // ON_CHANGE or SAMPLE, once decided
	interval  time.Duration        // SAMPLE (and ON_CHANGE of state, polled)
	heartbeat time.Duration
	suppress  bool
	mu        sync.Mutex
	last      map[string][]byte // path -> value last sent, for suppress_redundant and polled ON_CHANGE
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
		t, err := s.targetOf(full)
		if err != nil {
			return grpcError(err)
		}
		sc := &subscription{t: t, mode: sub.GetMode(), interval: time.Duration(sub.GetSampleInterval()), heartbeat: time.Duration(sub.GetHeartbeatInterval()), suppress: sub.GetSuppressRedundant(), last: map[string][]byte{}}
		if sc.mode == gpb.SubscriptionMode_TARGET_DEFINED {
			sc.mode = gpb.SubscriptionMode_SAMPLE
			if t.config() {
				sc.mode = gpb.SubscriptionMode_ON_CHANGE
			}
		}
		if sc.mode == gpb.SubscriptionMode_SAMPLE {
			if sc.interval == 0 {
				sc.interval = DefaultSampleInterval
			}
			if sc.interval < MinSampleInterval {
				return status.Errorf(codes.InvalidArgument, "%s: sample_interval %s is below the shortest, %s", pathString(full), sc.interval, MinSampleInterval)
			}
		} else {
			sc.interval = StatePollInterval
		}
		if sc.heartbeat != 0 && sc.heartbeat < MinSampleInterval {
			return status.Errorf(codes.InvalidArgument, "%s: heartbeat_interval %s is below the shortest, %s", pathString(full), sc.heartbeat, MinSampleInterval)
		}
		subs = append(subs, sc)
	}
	if len(subs) == 0 {
		return status.Error(codes.InvalidArgument, "the SubscriptionList has no subscription")
	}
	out := &sender{stream: stream, q: make(chan *gpb.SubscribeResponse, s.o.SubscriberQueue), cancel: cancel, done: make(chan struct{})}
	go out.run()
	defer out.stop()
	enc := list.GetEncoding()
	prefix := list.GetPrefix()
	var fsub *feed.Subscription
	if list.GetMode() == gpb.SubscriptionList_STREAM {
		fsub = s.o.Engine.Feed().Subscribe()
		defer fsub.Close()
	}
	initial := func(recordLast bool) error {
		for _, sc := range subs {
			ls, err := sc.t.read(ctx)
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
	if list.GetUpdatesOnly() {
		for _, sc := range subs {
			if ls, err := sc.t.read(ctx); err == nil {
				sc.remember(ls)
			}
		}
		if err := out.sync(); err != nil {
			return err
		}
	} else if err := initial(true); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	for _, sc := range subs {
		if sc.mode == gpb.SubscriptionMode_ON_CHANGE && sc.t.config() && sc.heartbeat == 0 {
			continue // the change feed alone
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.poll(ctx, sc, prefix, enc, out) }()
	}
	go func() { // a client's half-close or error ends nothing; reads keep the stream's flow going
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	var events []feed.Event
	for {
		select {
		case <-ctx.Done():
			return cause(ctx)
		case <-s.stop:
			return status.Error(codes.Unavailable, "swmgr is shutting down")
		case <-fsub.Notify:
		}
		events, err = fsub.Take(events[:0])
		if err != nil {
			return status.Error(codes.ResourceExhausted, "subscriber too slow: it fell behind the change feed's kept commits and was cut off; subscribe again")
		}
		for _, ev := range events {
			var rev engine.Revision
			if err := json.Unmarshal(ev.Data, &rev); err != nil {
				continue
			}
			for i := range rev.Changes {
				for _, sc := range subs {
					if sc.mode != gpb.SubscriptionMode_ON_CHANGE || !sc.t.config() {
						continue
					}
					upd, del := sc.t.fromDiff(&rev.Changes[i])
					if len(upd) == 0 && len(del) == 0 {
						continue
					}
					sc.remember(upd)
					if err := out.updates(prefix, enc, upd, del); err != nil {
						return err
					}
				}
			}
		}
	}
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

// poll samples a subscription: SAMPLE at its interval (with
// suppress_redundant, only what changed, unless the heartbeat is due),
// ON_CHANGE of state at StatePollInterval (only what changed), and the
// heartbeat of ON_CHANGE configuration.
func (s *Server) poll(ctx context.Context, sc *subscription, prefix *gpb.Path, enc gpb.Encoding, out *sender) {
	interval := sc.interval
	onlyHeartbeat := sc.mode == gpb.SubscriptionMode_ON_CHANGE && sc.t.config()
	if onlyHeartbeat {
		interval = sc.heartbeat
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	lastFull := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-tick.C:
		}
		ls, err := sc.t.read(ctx)
		if err != nil {
			out.fail(grpcError(err))
			return
		}
		heartbeat := sc.heartbeat > 0 && time.Since(lastFull) >= sc.heartbeat
		changedOnly := !heartbeat && (sc.suppress || sc.mode == gpb.SubscriptionMode_ON_CHANGE)
		if heartbeat {
			lastFull = time.Now()
		}
		send := ls[:0:0]
		sc.mu.Lock()
		for _, l := range ls {
			k := pathString(l.path)
			if changedOnly && bytes.Equal(sc.last[k], l.json) {
				continue
			}
			sc.last[k] = l.json
			send = append(send, l)
		}
		sc.mu.Unlock()
		if len(send) == 0 {
			continue
		}
		if err := out.updates(prefix, enc, send, nil); err != nil {
			return
		}
	}
}

// sender writes a subscription's responses from a bounded queue: a
// subscriber that does not read them fills the queue and is cut off with
// ResourceExhausted, rather than slowing commits or growing memory.
type sender struct {
	stream gpb.GNMI_SubscribeServer
	q      chan *gpb.SubscribeResponse
	cancel context.CancelCauseFunc
	done   chan struct{}
	once   sync.Once
	// ended: the RPC returned; nothing more is sent (a Send after the
	// handler returned is not allowed).
	ended atomic.Bool
}

var errSlow = status.Error(codes.ResourceExhausted, "subscriber too slow: its queue of notifications is full; it was cut off, subscribe again")

func (o *sender) run() {
	defer close(o.done)
	for r := range o.q {
		if o.ended.Load() {
			continue
		}
		if err := o.stream.Send(r); err != nil {
			o.fail(err)
			for range o.q {
			}
			return
		}
	}
}

func (o *sender) fail(err error) { o.cancel(err) }

func (o *sender) put(r *gpb.SubscribeResponse) error {
	select {
	case o.q <- r:
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
	n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Delete: del}
	if t := prefix.GetTarget(); t != "" {
		n.Prefix = &gpb.Path{Target: t}
	}
	for _, l := range ls {
		n.Update = append(n.Update, &gpb.Update{Path: l.path, Val: typedValue(enc, l.json)})
	}
	return o.put(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}})
}
