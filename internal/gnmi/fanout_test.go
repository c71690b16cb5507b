package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// TestNextGap: a group's notifications leave at once while commits come
// at less than QuietRate a second, and at least MinBusyGap apart, doubling
// up to MaxBusyGap, while they come at BusyRate or more; two commits that
// happen to come together are not a busy feed. Past SendScale members the
// rates are of sends: 1,000 members at 200 commits a second are as busy as
// 100 at 2,000.
func TestNextGap(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		gap     time.Duration
		n       int
		members int
		elapsed time.Duration
		want    time.Duration
	}{
		{0, 1, 1, 10 * ms, 0},                        // 100 commits/s
		{0, 2, 1, ms, 0},                             // two together
		{0, 16, 1, 2 * ms, MinBusyGap},               // a burst: 640/s over MinBusyGap
		{MinBusyGap, 12, 1, 25 * ms, 2 * MinBusyGap}, // 480/s
		{80 * ms, 50, 1, 100 * ms, MaxBusyGap},       // 500/s
		{MaxBusyGap, 30, 1, 100 * ms, MaxBusyGap},    // 300/s: between, kept
		{MaxBusyGap, 10, 1, 100 * ms, 0},             // 100/s: quiet
		{MaxBusyGap, 1, 1, time.Hour, 0},             // the first after a pause
		{0, 1, 100, 10 * ms, 0},                      // 100/s to 100 members: 10,000 sends/s
		{MaxBusyGap, 30, 100, 100 * ms, MaxBusyGap},  // 300/s to 100: kept
		{0, 5, 1000, 25 * ms, MinBusyGap},            // 200/s to 1,000: 200,000 sends/s
		{MinBusyGap, 5, 1000, 50 * ms, 2 * MinBusyGap},
		{MaxBusyGap, 3, 1000, 100 * ms, MaxBusyGap}, // 30/s to 1,000: between, kept
		{MaxBusyGap, 1, 1000, 100 * ms, 0},          // 10/s to 1,000: quiet
		// The first notification of a group: the time since the epoch.
		{0, 1, 1000, time.Duration(time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC).UnixNano()), 0},
	} {
		if got := nextGap(c.gap, c.n, c.members, c.elapsed); got != c.want {
			t.Errorf("nextGap(%v, %d, %d members, %v) = %v; want %v", c.gap, c.n, c.members, c.elapsed, got, c.want)
		}
	}
}

// TestNotificationsAreShared: subscriptions alike get each commit in one
// notification built and encoded once for all of them, in commit order,
// and the server's one follower of the change feed is not a client of it.
func TestNotificationsAreShared(t *testing.T) {
	fx := start(t, Options{})
	const subs, commits = 20, 5
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := onChangeStreams(t, ctx, fx, subs, p("swmgr", "/config/Port[IntfRef=fpPort1]/Mtu"))
	if n := fx.f.E.Feed().Subscribers(); n != 0 {
		t.Errorf("the change feed counts %d clients; want 0 (gNMI follows it once, for all its subscriptions)", n)
	}
	builds0 := fx.srv.fan.builds.Load()
	for i := range commits {
		mtu := fmt.Sprint(2000 + i)
		fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": "fpPort1", "Mtu": int64(2000 + i)}))
		for _, s := range streams {
			recv(t, s, "Mtu "+mtu, func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "Mtu", mtu) })
		}
	}
	if n := fx.srv.fan.builds.Load() - builds0; n != commits {
		t.Errorf("%d subscriptions alike, %d commits: %d notifications built; want one a commit", subs, commits, n)
	}
}

// TestMemberHoldsUntilStarted: a new member keeps what its group sends
// until its initial values are queued, then queues it first, in order,
// but for what those values already hold; a member that has left gets
// nothing; a member whose sender is busy is not waited for.
func TestMemberHoldsUntilStarted(t *testing.T) {
	var cut error
	out := &sender{q: newSendQueue(8), cancel: func(err error) { cut = err }}
	m := &member{out: out}
	a, b, c := &encoded{msg: &grpc.PreparedMsg{}}, &encoded{msg: &grpc.PreparedMsg{}}, &encoded{msg: &grpc.PreparedMsg{}}
	d := &delivery{done: make(chan struct{})}
	d.left.Store(1)
	m.deliver(a, 1, d)
	m.deliver(b, 2, d)
	if out.q.len() != 0 {
		t.Fatalf("%d notifications queued before the initial values", out.q.len())
	}
	out.put(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
	if err := m.started(0); err != nil {
		t.Fatal(err)
	}
	m.deliver(c, 3, d) // the queue is not empty: not waited for
	var got []any
	for out.q.len() > 0 {
		got = append(got, out.q.next().m)
	}
	if len(got) != 4 || got[1] != a.msg || got[2] != b.msg || got[3] != c.msg {
		t.Errorf("queued %v; want the sync, then a, b, c", got)
	}
	if n := d.left.Load(); n != 1 {
		t.Errorf("the delivery waits for %d sends; want none (held, or the sender was busy)", n-1)
	}
	m.deliver(a, 4, d) // free now: waited for
	if n := d.left.Load(); n != 2 {
		t.Errorf("the delivery waits for %d sends; want 1", n-1)
	}
	out.q.next().sent()
	if n := d.left.Load(); n != 1 {
		t.Errorf("after the send the delivery waits for %d; want none", n-1)
	}
	m.mu.Lock()
	m.gone = true
	m.mu.Unlock()
	m.deliver(b, 5, d)
	if out.q.len() != 0 || cut != nil {
		t.Errorf("a member that left got a notification (%d queued, cut: %v)", out.q.len(), cut)
	}

	// What the initial values already hold (commits up to 1) is not sent
	// again.
	m = &member{out: out}
	m.deliver(a, 1, d)
	m.deliver(b, 2, d)
	if err := m.started(1); err != nil {
		t.Fatal(err)
	}
	if out.q.len() != 1 || out.q.next().m != b.msg {
		t.Errorf("started after a read that holds commit 1: want b alone queued")
	}
}

// view is what a subscriber was told: each path's last value (JSON,
// normalized), deletes applied to the path and what lies under it.
type view map[string]string

func (v view) apply(n *gpb.Notification) {
	for _, d := range n.GetDelete() {
		k := pathString(d)
		for p := range v {
			if p == k || strings.HasPrefix(p, k+"/") {
				delete(v, p)
			}
		}
	}
	for _, u := range n.GetUpdate() {
		raw := u.GetVal().GetJsonVal()
		if raw == nil {
			raw = u.GetVal().GetJsonIetfVal()
		}
		var x any
		if json.Unmarshal(raw, &x) == nil {
			raw, _ = json.Marshal(x)
		}
		v[pathString(u.GetPath())] = string(raw)
	}
}

// TestNewSubscribersMissNoCommit: subscribers that start while commits
// land, each getting its initial values then the commits, end with the
// values the store holds: no commit falls between a subscriber's initial
// read and its place on the change feed (its member joins its group
// before the read, and a commit is in the store before the change feed
// has it: a commit that lands in between may come twice, never not at
// all), and the membership leaves (a port's VLANs) that commits change
// one after another are each updated and deleted as the store has them.
func TestNewSubscribersMissNoCommit(t *testing.T) {
	// 64 subscribers and then one per path, on one connection.
	fx := start(t, Options{UserSubscriptions: 128, ConnSubscriptions: 128})
	makeVlans(fx, 10, 20)
	// Many VLANs: the initial values of /config/Vlan take a while to read
	// and send, during which commits land.
	var many []engine.Edit
	for id := range 1000 {
		many = append(many, fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": int64(2000 + id), "Description": strings.Repeat("x", 60)}))
	}
	fx.f.MustApply(many...)
	// The paths, and how each subscriber knows it has seen the last
	// commit (the marker), which comes after all the others.
	paths := []struct {
		path   *gpb.Path
		marker func(view) bool
	}{
		{p("swmgr", "/config/Port[IntfRef=*]/Mtu"), func(v view) bool { return v["swmgr:/config/Port[IntfRef=fpPort1]/Mtu"] == "9000" }},
		{p("swmgr", "/config/Vlan"), func(v view) bool { _, ok := v["swmgr:/config/Vlan[VlanId=4000]"]; return ok }},
		{ocp("/interfaces/interface[name=*]/config/mtu"), func(v view) bool { return v["openconfig:/interfaces/interface[name=fpPort1]/config/mtu"] == "9000" }},
		{ocp("/interfaces/interface[name=*]/ethernet/switched-vlan/config"), func(v view) bool {
			return v["openconfig:/interfaces/interface[name=fpPort4]/ethernet/switched-vlan/config/trunk-vlans"] == "[20]"
		}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	stop := make(chan struct{})
	writerDone := make(chan int)
	go func() { // commits until told to stop
		n := 0
		defer func() { writerDone <- n }()
		ports := []string{"fpPort1", "fpPort2", "fpPort3"}
		for ; n < 1800; n++ { // VLANs 100 to 1899; 4000 is the marker
			select {
			case <-stop:
				return
			default:
			}
			var edits []engine.Edit
			switch n % 4 {
			case 0:
				edits = append(edits, fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": ports[n%3], "Mtu": int64(1500 + n%500)}))
			case 1:
				// A VLAN made at every 4k+1, kept: one commit missed
				// would show; half of them deleted two commits on.
				edits = append(edits, fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": int64(100 + n)}))
			case 2:
				edits = append(edits, fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(10), "UntagIntfList": ports[n%3 : n%3+1]}))
			case 3:
				if n/4%2 == 1 {
					edits = append(edits, fx.f.Edit(model.Delete, "Vlan", model.Object{"VlanId": int64(100 + n - 2)}))
				}
				edits = append(edits,
					fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(20), "IntfList": ports[:n%4]}),
					fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": ports[(n+1)%3], "Mtu": int64(1500 + n%500)}))
			}
			if _, err := fx.f.Apply(edits...); err != nil {
				t.Errorf("commit %d: %v", n, err)
			}
		}
	}()

	const subs = 64
	type result struct {
		i   int
		v   view
		err error
	}
	synced := make(chan struct{}, subs)
	results := make(chan result, subs)
	for i := range subs {
		time.Sleep(time.Duration(i%5) * time.Millisecond) // spread among the commits
		go func() {
			pt := paths[i%len(paths)]
			enc := []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF}[i/len(paths)%2]
			s, err := fx.c.Subscribe(ctx)
			if err == nil {
				err = s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
					Mode: gpb.SubscriptionList_STREAM, Encoding: enc,
					Subscription: []*gpb.Subscription{{Path: pt.path, Mode: gpb.SubscriptionMode_ON_CHANGE}},
				}}})
			}
			v := view{}
			isSynced := false
			for err == nil {
				var r *gpb.SubscribeResponse
				if r, err = s.Recv(); err != nil {
					break
				}
				if r.GetSyncResponse() {
					isSynced = true
					synced <- struct{}{}
					continue
				}
				v.apply(r.GetUpdate())
				if isSynced && pt.marker(v) {
					break
				}
			}
			results <- result{i, v, err}
		}()
	}
	for range subs {
		select {
		case <-synced:
		case <-time.After(20 * time.Second):
			t.Fatal("a subscriber's sync did not come")
		}
	}
	close(stop)
	n := <-writerDone
	fx.f.MustApply(
		fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": "fpPort1", "Mtu": int64(9000)}),
		fx.f.Edit(model.Create, "Vlan", model.Object{"VlanId": int64(4000)}),
		fx.f.Edit(model.Update, "Vlan", model.Object{"VlanId": int64(20), "IntfList": []string{"fpPort4"}}),
	)
	t.Logf("%d commits while %d subscribers started", n, subs)

	// What each path holds now, as a new subscriber is told.
	want := map[string]view{}
	for i := range subs {
		pt := paths[i%len(paths)]
		enc := []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF}[i/len(paths)%2]
		k := fmt.Sprint(pathString(pt.path), enc)
		if want[k] != nil {
			continue
		}
		s, err := fx.c.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_ONCE, Encoding: enc,
			Subscription: []*gpb.Subscription{{Path: pt.path}},
		}}})
		v := view{}
		for {
			r, err := s.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if r.GetSyncResponse() {
				break
			}
			v.apply(r.GetUpdate())
		}
		want[k] = v
	}
	for range subs {
		var r result
		select {
		case r = <-results:
		case <-time.After(20 * time.Second):
			t.Fatal("a subscriber did not get the last commit")
		}
		if r.err != nil {
			t.Errorf("subscriber %d: %v", r.i, r.err)
			continue
		}
		pt := paths[r.i%len(paths)]
		enc := []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF}[r.i/len(paths)%2]
		w := want[fmt.Sprint(pathString(pt.path), enc)]
		if !maps.Equal(r.v, w) {
			t.Errorf("subscriber %d to %s (%v) was told\n%v\nthe store holds\n%v", r.i, pathString(pt.path), enc, r.v, w)
		}
	}
}

// next takes the next queued response (the queue is not empty).
func (q *sendQueue) next() queued {
	r, _, _ := q.take()
	return r
}
