package gnmi

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// makeNtpServers commits n NtpServers with a long description-like field
// (MinPoll and the address), so that / holds a few hundred KiB.
func makeNtpServers(fx *fixture, n int) {
	var edits []engine.Edit
	for i := range n {
		edits = append(edits, fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.9.%d.%d", i/250, i%250+1)}))
	}
	fx.f.MustApply(edits...)
}

// A read-only user's Get of thousands of "/" paths is refused, whatever
// it names: too many paths, or an answer past the bound.
func TestGetOfManyPathsIsRefused(t *testing.T) {
	fx := start(t, Options{})
	makeNtpServers(fx, 1000) // / answers ~150 KiB
	viewer := dial(t, fx.addr, creds{"viewer", "viewer-pass"})
	for _, n := range []int{3000, 200} {
		req := &gpb.GetRequest{Encoding: gpb.Encoding_JSON}
		for range n {
			req.Path = append(req.Path, &gpb.Path{})
		}
		_, err := viewer.Get(context.Background(), req)
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "Subscribe") {
			t.Errorf("a Get of %d paths /: %v; want ResourceExhausted saying what to do instead", n, err)
		}
	}
}

// The answer's bound stops the Get at the path that passes it; a user's
// Gets at once share a bound; one path under both is answered.
func TestGetAnswerBounds(t *testing.T) {
	fx := start(t, Options{MaxGetAnswer: 64 << 10, UserGetBytes: 32 << 10})
	makeNtpServers(fx, 400) // /config/NtpServer: ~60 KiB of answer
	get := func(paths ...string) error {
		req := &gpb.GetRequest{Encoding: gpb.Encoding_JSON}
		for _, s := range paths {
			req.Path = append(req.Path, p("swmgr", s))
		}
		_, err := fx.c.Get(context.Background(), req)
		return err
	}
	if err := get("/config/NtpServer[IpAddr=10.9.0.1]/MinPoll"); err != nil {
		t.Fatalf("a Get of one leaf: %v", err)
	}
	err := get("/config/NtpServer", "/config/NtpServer")
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a Get past the user's bound: %v; want ResourceExhausted", err)
	}
	fx.srv.o.UserGetBytes = 1 << 30
	err = get("/config/NtpServer", "/config/NtpServer")
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "at path 2 of 2") {
		t.Errorf("a Get whose second path passes the answer's bound: %v; want ResourceExhausted at path 2", err)
	}
	fx.srv.users.mu.Lock()
	left := len(fx.srv.users.m)
	fx.srv.users.mu.Unlock()
	if left != 0 {
		t.Errorf("%d users still hold Get answers after their Gets", left)
	}
}

// A read-only user may open only so many Subscribe streams.
func TestSubscriptionsPerUserAreBounded(t *testing.T) {
	fx := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	viewer := dial(t, fx.addr, creds{"viewer", "viewer-pass"})
	refused := 0
	for i := range DefaultUserSubscriptions + 1 {
		s, err := viewer.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
			Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config/Vlan"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
		}}})
		r, err := s.Recv()
		switch {
		case err == nil && r.GetSyncResponse():
		case status.Code(err) == codes.ResourceExhausted:
			refused++
			if i != DefaultUserSubscriptions {
				t.Fatalf("stream %d refused: %v", i+1, err)
			}
		default:
			t.Fatalf("stream %d: %v %v", i+1, r, err)
		}
	}
	if refused != 1 {
		t.Errorf("%d streams over the bound refused; want 1", refused)
	}
}

// stalledStream subscribes to / on a connection of its own whose client
// takes nothing after the first response: its window (64 KiB, fixed) fills.
func stalledStream(t *testing.T, ctx context.Context, fx *fixture) (*grpc.ClientConn, error) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+fx.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(creds{"viewer", "viewer-pass"}), grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s, err := gpb.NewGNMIClient(conn).Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON,
		Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
	}}})
	_, err = s.Recv()
	return conn, err
}

// waitFor polls cond until it holds; false after a minute.
func waitUntil(cond func() bool) bool {
	for range 600 {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// A subscriber that takes nothing is cut off after StalledSubscriber even
// when nothing more is queued for it (no commit comes), and what it held
// is counted against its user until its connection closes, then
// released.
func TestStalledSubscriberIsCutWithoutANextNotification(t *testing.T) {
	fx := start(t, Options{StalledSubscriber: 300 * time.Millisecond})
	makeNtpServers(fx, 3000) // ~400 KiB of initial values
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := stalledStream(t, ctx, fx)
	if err != nil {
		t.Fatal(err)
	}
	if !waitUntil(func() bool { return fx.srv.feedSubscribers() == 0 }) {
		t.Fatal("the stalled subscriber was not cut off")
	}
	conn.Close()
	if !waitUntil(func() bool {
		fx.srv.users.mu.Lock()
		defer fx.srv.users.mu.Unlock()
		return len(fx.srv.users.m) == 0
	}) {
		t.Fatal("the user's usage was kept after its connection closed")
	}
}

// A user's subscriptions that take nothing hold at most UserQueuedBytes:
// the one that would pass it is cut off.
func TestQueuedBytesPerUserAreBounded(t *testing.T) {
	fx := start(t, Options{UserQueuedBytes: 600 << 10})
	makeNtpServers(fx, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 4 {
		if _, err := stalledStream(t, ctx, fx); err != nil && status.Code(err) != codes.ResourceExhausted {
			t.Fatal(err)
		}
	}
	if !waitUntil(func() bool { return fx.srv.feedSubscribers() < 4 }) {
		t.Fatal("4 stalled subscribers of / hold more than the user's bound, and none was cut off")
	}
	fx.srv.users.mu.Lock()
	u := fx.srv.users.m["viewer"]
	fx.srv.users.mu.Unlock()
	u.mu.Lock()
	queued := u.queued
	u.mu.Unlock()
	if queued > 600<<10 {
		t.Errorf("the user's subscriptions hold %d bytes; the bound is %d", queued, 600<<10)
	}
}

// ON_CHANGE of state, on native and OpenConfig paths, and SAMPLE with
// suppress_redundant: a deleted object's state leaves are deleted in the
// subscriber's view.
func TestPollsSendDeletes(t *testing.T) {
	fx := start(t, Options{})
	cases := []struct {
		name string
		path *gpb.Path
		mode gpb.SubscriptionMode
		leaf string // a state leaf of the NtpServer 10.7.0.1
	}{
		{"native on_change", p("swmgr", "/state/NtpServer"), gpb.SubscriptionMode_ON_CHANGE, "/state/NtpServer[IpAddr=10.7.0.1]"},
		{"openconfig on_change", ocp("/system/ntp/servers/server[address=*]/state"), gpb.SubscriptionMode_ON_CHANGE, "server[address=10.7.0.1]/state/address"},
		{"native sample suppress_redundant", p("swmgr", "/state/NtpServer"), gpb.SubscriptionMode_SAMPLE, "/state/NtpServer[IpAddr=10.7.0.1]"},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []gpb.GNMI_SubscribeClient
	for _, c := range cases {
		s, err := fx.c.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode:         gpb.SubscriptionList_STREAM,
			Subscription: []*gpb.Subscription{{Path: c.path, Mode: c.mode, SampleInterval: uint64(time.Second), SuppressRedundant: true}},
		}}})
		recv(t, s, c.name+": the sync", isSync)
		streams = append(streams, s)
	}
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.7.0.1"}))
	for i, c := range cases {
		recv(t, streams[i], c.name+": the new server's state", func(r *gpb.SubscribeResponse) bool {
			for _, u := range r.GetUpdate().GetUpdate() {
				if strings.Contains(pathString(u.GetPath()), c.leaf) {
					return true
				}
			}
			return false
		})
	}
	fx.f.MustApply(fx.f.Edit(model.Delete, "NtpServer", model.Object{"IpAddr": "10.7.0.1"}))
	for i, c := range cases {
		recv(t, streams[i], c.name+": the delete of the server's state", func(r *gpb.SubscribeResponse) bool {
			for _, d := range r.GetUpdate().GetDelete() {
				if strings.Contains(pathString(d), c.leaf) {
					return true
				}
			}
			return false
		})
	}
}

// A user's Gets that read many objects wait for one of its read tokens
// (shared with its subscriptions' initial reads); a Get of one object's
// leaf does not.
func TestGetsOfManyObjectsShareTheUsersReads(t *testing.T) {
	fx := start(t, Options{})
	makeNtpServers(fx, 10)
	viewer := dial(t, fx.addr, creds{"viewer", "viewer-pass"})
	u := fx.srv.users.acquire("viewer")
	defer fx.srv.users.release("viewer", u)
	for range userReads {
		u.reads <- struct{}{} // every token held, as by reads under way
	}
	get := func(origin, path string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := viewer.Get(ctx, &gpb.GetRequest{Encoding: gpb.Encoding_JSON, Path: []*gpb.Path{p(origin, path)}})
		return err
	}
	if err := get("swmgr", "/config/NtpServer[IpAddr=10.9.0.1]/MinPoll"); err != nil {
		t.Errorf("a Get of one leaf while the user's reads are taken: %v", err)
	}
	for _, c := range []struct{ origin, path string }{{"swmgr", "/"}, {"swmgr", "/config/NtpServer"}, {"openconfig", "/system/ntp"}} {
		if err := get(c.origin, c.path); status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("a Get of %s %s while the user's reads are taken: %v; want it to wait for one (DeadlineExceeded)", c.origin, c.path, err)
		}
	}
	<-u.reads
	if err := get("swmgr", "/config/NtpServer"); err != nil {
		t.Errorf("a Get of a kind once a read is free: %v", err)
	}
}

// A Get's answer is encoded as it is read: each path's notification
// carries the request's timestamp and target and the path's updates.
func TestGetAnswerIsEncodedPerPath(t *testing.T) {
	fx := start(t, Options{})
	makeNtpServers(fx, 3)
	req := &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF, Prefix: &gpb.Path{Target: "sw1"}, Path: []*gpb.Path{
		p("swmgr", "/config/NtpServer[IpAddr=10.9.0.1]/MinPoll"),
		p("swmgr", "/config/NtpServer/MinPoll"),
		p("swmgr", "/config/NtpServer[IpAddr=10.9.0.1]/MinPoll"), // from the Get cache
	}}
	for range 2 { // the second from the Get cache
		resp, err := fx.c.Get(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := []int{1, 3, 1}
		if len(resp.GetNotification()) != len(want) {
			t.Fatalf("%d notifications; want %d", len(resp.GetNotification()), len(want))
		}
		for i, n := range resp.GetNotification() {
			if n.GetTimestamp() == 0 || n.GetPrefix().GetTarget() != "sw1" || len(n.GetUpdate()) != want[i] {
				t.Errorf("notification %d: %v; want the timestamp, target sw1 and %d updates", i, n, want[i])
			}
			for _, u := range n.GetUpdate() {
				if got := string(u.GetVal().GetJsonIetfVal()); got != "6" || u.GetPath().GetElem()[2].GetName() != "MinPoll" {
					t.Errorf("notification %d: update %v; want MinPoll 6", i, u)
				}
			}
		}
	}
}

// What a subscription cut off left in gRPC's send queue stays counted
// against its user while its connection is open, even once every stream
// of the user has ended: a user that reopens its streams does not start
// over from nothing.
func TestLeftoversStayCountedAfterTheUsersStreamsEnd(t *testing.T) {
	fx := start(t, Options{StalledSubscriber: 300 * time.Millisecond})
	makeNtpServers(fx, 3000) // ~400 KiB of initial values
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := stalledStream(t, ctx, fx); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(func() bool { return fx.srv.feedSubscribers() == 0 }) {
		t.Fatal("the stalled subscriber was not cut off")
	}
	var queued int64
	waitUntil(func() bool {
		fx.srv.users.mu.Lock()
		u := fx.srv.users.m["viewer"]
		fx.srv.users.mu.Unlock()
		if u == nil {
			return false
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		queued = u.queued
		return u.streams == 0
	})
	if queued < grpcWriteQuota {
		t.Errorf("with its streams ended and its connection open, the user's leftovers count %d bytes; want at least %d", queued, grpcWriteQuota)
	}
}

// An open subscription holds no room for SubscriberQueue notifications
// while it has none queued.
func TestIdleSubscriptionsHoldLittle(t *testing.T) {
	fx := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	const n = 32
	streams := onChangeStreams(t, ctx, fx, n, p("swmgr", "/config/Vlan"))
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := (int64(ms.HeapAlloc) - int64(before)) / n
	queue := int64(DefaultSubscriberQueue) * int64(unsafe.Sizeof(queued{}))
	if per > queue/2 {
		t.Errorf("each idle subscription (server and client) holds %d bytes; a queue of %d entries is %d", per, DefaultSubscriberQueue, queue)
	}
	runtime.KeepAlive(streams)
}

// A poll is compared with what a subscription last sent: the values that
// changed or are new, and the paths no longer there (in path order); the
// subscription then holds the poll itself (shared by the subscriptions
// alike), not a copy of its values.
func TestPolledValuesAreShared(t *testing.T) {
	srv := &Server{}
	leafAt := func(ip, v string) leaf {
		return leaf{p("swmgr", "/state/NtpServer[IpAddr="+ip+"]/Stratum"), []byte(v)}
	}
	cases := []struct {
		name       string
		base, poll []leaf
		changed    []int
		gone       []string
	}{
		{"one value changed", []leaf{leafAt("10.0.0.1", "2"), leafAt("10.0.0.2", "3")}, []leaf{leafAt("10.0.0.1", "2"), leafAt("10.0.0.2", "4")}, []int{1}, nil},
		{"nothing changed", []leaf{leafAt("10.0.0.1", "2")}, []leaf{leafAt("10.0.0.1", "2")}, nil, nil},
		{"new and gone", []leaf{leafAt("10.0.0.3", "2"), leafAt("10.0.0.1", "2"), leafAt("10.0.0.2", "2")}, []leaf{leafAt("10.0.0.1", "2"), leafAt("10.0.0.4", "1")}, []int{1}, []string{"10.0.0.2", "10.0.0.3"}},
		{"from nothing", nil, []leaf{leafAt("10.0.0.1", "2")}, []int{0}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := &subscription{}
			srv.remember(sc, c.base)
			base := sc.base
			pr := srv.newPolled(c.poll, 1)
			changed, gone := changedSince(base, pr)
			if !slices.Equal(changed, c.changed) {
				t.Errorf("changed %v; want %v", changed, c.changed)
			}
			var goneIPs []string
			for _, g := range gone {
				goneIPs = append(goneIPs, g.GetElem()[1].GetKey()["IpAddr"])
			}
			if !slices.Equal(goneIPs, c.gone) {
				t.Errorf("gone %v; want %v", goneIPs, c.gone)
			}
			if base.id == pr.id || base.id == 0 {
				t.Errorf("reads named %d and %d: each must have its own id", base.id, pr.id)
			}
		})
	}
}
