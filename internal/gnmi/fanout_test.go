package gnmi

import (
	"context"
	"fmt"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/swmgr/swmgr/internal/model"
)

// TestNextGap: a group's notifications leave at once while commits come
// at less than QuietRate a second, and at least MinBusyGap apart, doubling
// up to MaxBusyGap, while they come at BusyRate or more; two commits that
// happen to come together are not a busy feed.
func TestNextGap(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		gap     time.Duration
		n       int
		elapsed time.Duration
		want    time.Duration
	}{
		{0, 1, 10 * ms, 0},                        // 100 commits/s
		{0, 2, ms, 0},                             // two together
		{0, 16, 2 * ms, MinBusyGap},               // a burst: 640/s over MinBusyGap
		{MinBusyGap, 12, 25 * ms, 2 * MinBusyGap}, // 480/s
		{80 * ms, 50, 100 * ms, MaxBusyGap},       // 500/s
		{MaxBusyGap, 30, 100 * ms, MaxBusyGap},    // 300/s: between, kept
		{MaxBusyGap, 10, 100 * ms, 0},             // 100/s: quiet
		{MaxBusyGap, 1, time.Hour, 0},             // the first after a pause
	} {
		if got := nextGap(c.gap, c.n, c.elapsed); got != c.want {
			t.Errorf("nextGap(%v, %d, %v) = %v; want %v", c.gap, c.n, c.elapsed, got, c.want)
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
// until its initial values are queued, then queues it first, in order; a
// member that has left gets nothing; a member whose sender is busy is not
// waited for.
func TestMemberHoldsUntilStarted(t *testing.T) {
	var cut error
	out := &sender{q: make(chan queued, 8), cancel: func(err error) { cut = err }}
	m := &member{out: out}
	a, b, c := &grpc.PreparedMsg{}, &grpc.PreparedMsg{}, &grpc.PreparedMsg{}
	d := &delivery{done: make(chan struct{})}
	d.left.Store(1)
	m.deliver(a, d)
	m.deliver(b, d)
	if len(out.q) != 0 {
		t.Fatalf("%d notifications queued before the initial values", len(out.q))
	}
	out.put(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
	if err := m.started(); err != nil {
		t.Fatal(err)
	}
	m.deliver(c, d) // the queue is not empty: not waited for
	var got []any
	for len(out.q) > 0 {
		got = append(got, (<-out.q).m)
	}
	if len(got) != 4 || got[1] != a || got[2] != b || got[3] != c {
		t.Errorf("queued %v; want the sync, then a, b, c", got)
	}
	if n := d.left.Load(); n != 1 {
		t.Errorf("the delivery waits for %d sends; want none (held, or the sender was busy)", n-1)
	}
	m.deliver(a, d) // free now: waited for
	if n := d.left.Load(); n != 2 {
		t.Errorf("the delivery waits for %d sends; want 1", n-1)
	}
	(<-out.q).sent()
	if n := d.left.Load(); n != 1 {
		t.Errorf("after the send the delivery waits for %d; want none", n-1)
	}
	m.mu.Lock()
	m.gone = true
	m.mu.Unlock()
	m.deliver(b, d)
	if len(out.q) != 0 || cut != nil {
		t.Errorf("a member that left got a notification (%d queued, cut: %v)", len(out.q), cut)
	}
}
