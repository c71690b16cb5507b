package gnmi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
)

// testUsers are the users the tests' Login knows: name -> password, role.
var testUsers = map[string]struct {
	password string
	role     auth.Role
}{
	"admin":    {"admin-pass", auth.Admin},
	"operator": {"operator-pass", auth.Operator},
	"viewer":   {"viewer-pass", auth.Reader},
}

func testLogin(_ context.Context, name, password string, _ netip.Addr) (auth.Identity, *auth.Refusal) {
	u, ok := testUsers[name]
	if !ok || u.password != password {
		return auth.Identity{}, &auth.Refusal{Err: apierr.New(401, apierr.CodeUnauthorized, "", "", "wrong user name or password")}
	}
	return auth.Identity{Name: name, Role: u.role}, nil
}

// creds sends a user's name and password as gnmi_cli does.
type creds struct{ user, password string }

func (c creds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": c.user, "password": c.password}, nil
}
func (creds) RequireTransportSecurity() bool { return false }

type fixture struct {
	addr string
	f    *enginetest.Fixture
	srv  *Server
	c    gpb.GNMIClient
}

// start runs a gNMI server on a real engine (bbolt, the simulated switch)
// on loopback, and a client logged in as admin.
func start(t testing.TB, o Options) *fixture {
	t.Helper()
	f := enginetest.New(t, t.TempDir())
	hist := history.New(f.E)
	if err := hist.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.Engine, o.History, o.Login = f.E, hist, testLogin
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Stop(time.Second) })
	return &fixture{addr: ln.Addr().String(), f: f, srv: srv, c: dial(t, ln.Addr().String(), creds{"admin", "admin-pass"})}
}

func dial(t testing.TB, addr string, c creds) gpb.GNMIClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gpb.NewGNMIClient(conn)
}

// p parses a path written as /a/b[k=v]/c in origin; a key's value may
// hold "/" (a prefix).
func p(origin, s string) *gpb.Path {
	out := &gpb.Path{Origin: origin}
	var parts []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i == len(s) || s[i] == '/' && depth == 0:
			if i > start {
				parts = append(parts, s[start:i])
			}
			start = i + 1
		case s[i] == '[':
			depth++
		case s[i] == ']':
			depth--
		}
	}
	for _, part := range parts {
		name, rest, _ := strings.Cut(part, "[")
		e := &gpb.PathElem{Name: name}
		for rest != "" {
			kv, after, _ := strings.Cut(rest, "]")
			k, v, _ := strings.Cut(kv, "=")
			if e.Key == nil {
				e.Key = map[string]string{}
			}
			e.Key[k] = v
			rest = strings.TrimPrefix(after, "[")
		}
		out.Elem = append(out.Elem, e)
	}
	return out
}

func jv(s string) *gpb.TypedValue {
	return &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(s)}}
}

func codeOfErr(err error) codes.Code { return status.Code(err) }

func TestOpenConfigTableMatchesModel(t *testing.T) {
	if _, err := newOCTree(model.Builtin()); err != nil {
		t.Fatal(err)
	}
}

// docs/gnmi.md lists every OpenConfig leaf served, as the table maps it.
func TestDocsListEveryOpenConfigLeaf(t *testing.T) {
	doc, err := os.ReadFile("../../docs/gnmi.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range model.OpenConfigLeaves() {
		row := fmt.Sprintf("| `%s` | %s.%s |", r.Path, r.Kind, r.Field)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/gnmi.md lacks the row %s", row)
		}
	}
	if !strings.Contains(string(doc), OpenConfigRelease) {
		t.Errorf("docs/gnmi.md does not name the OpenConfig release %s", OpenConfigRelease)
	}
}

// Bad paths and requests get the right code and a message naming them.
func TestBadRequests(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	for _, c := range []struct {
		req  *gpb.GetRequest
		code codes.Code
		msg  string
	}{
		{&gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/Nope")}}, codes.NotFound, `no kind "Nope"`},
		{&gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/Port[IntfRef=fpPort1]/Nope")}}, codes.NotFound, `no field "Nope"`},
		{&gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/Port[Name=fpPort1]")}}, codes.InvalidArgument, `no key "Name"`},
		{&gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=192.0.2.1]")}}, codes.NotFound, "no such object"},
		{&gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/Port")}, Encoding: gpb.Encoding_PROTO}, codes.Unimplemented, "encoding PROTO"},
		{&gpb.GetRequest{Path: []*gpb.Path{p("yang", "/config")}}, codes.Unimplemented, `origin "yang"`},
		{&gpb.GetRequest{Path: []*gpb.Path{p("openconfig", "/components/component[name=x]/port/breakout-mode")}}, codes.Unimplemented, "/components/component[name=x]/port/breakout-mode"},
		{&gpb.GetRequest{Path: []*gpb.Path{p("openconfig", "/qos")}}, codes.Unimplemented, "/qos"},
	} {
		_, err := fx.c.Get(ctx, c.req)
		if codeOfErr(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: got %v, want %s naming %q", c.req.Path, err, c.code, c.msg)
		}
	}
	// A wildcard that matches nothing is an empty answer.
	r, err := fx.c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=*]")}})
	if err != nil || len(r.Notification[0].Update) != 0 {
		t.Errorf("empty wildcard: %v %v", r, err)
	}
	// A viewer may read but not write.
	v := dial(t, fx.addr, creds{"viewer", "viewer-pass"})
	if _, err := v.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{{Path: p("swmgr", "/config/NtpServer[IpAddr=192.0.2.1]"), Val: jv(`{}`)}}}); codeOfErr(err) != codes.PermissionDenied {
		t.Errorf("a viewer's Set: %v", err)
	}
}

// recv reads responses until one satisfies ok, failing after a while.
func recv(t *testing.T, s gpb.GNMI_SubscribeClient, what string, ok func(*gpb.SubscribeResponse) bool) {
	t.Helper()
	type res struct {
		r   *gpb.SubscribeResponse
		err error
	}
	deadline := time.After(20 * time.Second)
	for {
		ch := make(chan res, 1)
		go func() { r, err := s.Recv(); ch <- res{r, err} }()
		select {
		case <-deadline:
			t.Fatalf("%s did not come", what)
		case x := <-ch:
			if x.err != nil {
				t.Fatalf("waiting for %s: %v", what, x.err)
			}
			if ok(x.r) {
				return
			}
		}
	}
}

func hasUpdate(r *gpb.SubscribeResponse, pathPart, val string) bool {
	for _, u := range r.GetUpdate().GetUpdate() {
		if strings.Contains(pathString(u.GetPath()), pathPart) && strings.Contains(string(u.GetVal().GetJsonVal()), val) {
			return true
		}
	}
	return false
}

func isSync(r *gpb.SubscribeResponse) bool { return r.GetSyncResponse() }

// onChangeStreams opens n STREAM subscriptions, updates only, ON_CHANGE
// to path, and waits for each one's sync.
func onChangeStreams(t *testing.T, ctx context.Context, fx *fixture, n int, path *gpb.Path) []gpb.GNMI_SubscribeClient {
	t.Helper()
	var streams []gpb.GNMI_SubscribeClient
	for range n {
		s, err := fx.c.Subscribe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
			Subscription: []*gpb.Subscription{{Path: path, Mode: gpb.SubscriptionMode_ON_CHANGE}},
		}}})
		recv(t, s, "the sync", isSync)
		streams = append(streams, s)
	}
	return streams
}

// STREAM: TARGET_DEFINED picks ON_CHANGE for configuration; ON_CHANGE of
// state (oper-status) comes as it changes; updates_only skips the initial
// values; SAMPLE with suppress_redundant sends only changes, plus the
// heartbeat.
func TestSubscribeStream(t *testing.T) {
	fx := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, UpdatesOnly: true,
		Subscription: []*gpb.Subscription{
			{Path: p("swmgr", "/config/NtpServer"), Mode: gpb.SubscriptionMode_TARGET_DEFINED},
			{Path: p("openconfig", "/interfaces/interface[name=fpPort1]/state/oper-status"), Mode: gpb.SubscriptionMode_ON_CHANGE},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil || !first.GetSyncResponse() {
		t.Fatalf("updates_only: the first response is %v (%v), not the sync", first, err)
	}
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "192.0.2.5"}))
	recv(t, s, "the create", func(r *gpb.SubscribeResponse) bool {
		return hasUpdate(r, "NtpServer[IpAddr=192.0.2.5]", `"IpAddr":"192.0.2.5"`)
	})
	fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": "fpPort1", "AdminState": "UP"}))
	recv(t, s, "oper-status UP", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "oper-status", `"UP"`) })
	fx.f.MustApply(fx.f.Edit(model.Delete, "NtpServer", model.Object{"IpAddr": "192.0.2.5"}))
	recv(t, s, "the delete", func(r *gpb.SubscribeResponse) bool {
		return len(r.GetUpdate().GetDelete()) == 1 && strings.Contains(pathString(r.GetUpdate().GetDelete()[0]), "192.0.2.5")
	})

	// SAMPLE, suppress_redundant: a port that is down does not count, so
	// after the first sample only the heartbeat repeats its counters.
	s2, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM,
		Subscription: []*gpb.Subscription{{Path: p("swmgr", "/state/Port[IntfRef=fpPort2]/IfInOctets"), Mode: gpb.SubscriptionMode_SAMPLE,
			SampleInterval: uint64(100 * time.Millisecond), SuppressRedundant: true, HeartbeatInterval: uint64(time.Second)}},
	}}})
	recv(t, s2, "the initial value", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "IfInOctets", "0") })
	recv(t, s2, "the sync", isSync)
	start := time.Now()
	recv(t, s2, "the heartbeat", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "IfInOctets", "0") })
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("an unchanged value was sent again before the heartbeat (suppress_redundant)")
	}
}

// POLL answers each Poll with the values and a sync; ONCE ends after its
// sync.
func TestSubscribePollAndOnce(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	s, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &gpb.SubscriptionList{Mode: gpb.SubscriptionList_POLL, Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config/Port[IntfRef=fpPort3]/Mtu")}}}
	s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: sub}})
	recv(t, s, "the first values", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "Mtu", "1500") })
	recv(t, s, "the sync", isSync)
	fx.f.MustApply(fx.f.Edit(model.Update, "Port", model.Object{"IntfRef": "fpPort3", "Mtu": int64(9000)}))
	s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Poll{Poll: &gpb.Poll{}}})
	recv(t, s, "the polled values", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "Mtu", "9000") })
	recv(t, s, "the sync", isSync)

	o, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub.Mode = gpb.SubscriptionList_ONCE
	o.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: sub}})
	recv(t, o, "the values", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "Mtu", "9000") })
	recv(t, o, "the sync", isSync)
	if _, err := o.Recv(); err != io.EOF {
		t.Errorf("ONCE did not end after its sync: %v", err)
	}
}

// A subscriber that does not read is cut off with ResourceExhausted once
// its send has stalled too long; commits go on meanwhile.
func TestSlowSubscriberIsCutOff(t *testing.T) {
	fx := start(t, Options{SubscriberQueue: 8, StalledSubscriber: 500 * time.Millisecond})
	ctx := context.Background()
	s, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
	}}})
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	// Nothing more is read while commits of 1,000 changes each go on,
	// for as long as it takes.
	for round := 0; ; round++ {
		var edits []engine.Edit
		for i := 0; i < 1000; i++ {
			edits = append(edits, fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.%d", round%250, i/250, i%250+1)}))
		}
		fx.f.MustApply(edits...)
		if cut := fx.srv.feedSubscribers(); cut == 0 {
			break
		}
		if round == 200 {
			t.Fatal("the subscriber that reads nothing was not cut off")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		_, err := s.Recv()
		if err == nil {
			continue
		}
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "too slow") {
			t.Fatalf("the slow subscriber ended with %v", err)
		}
		return
	}
}

// Get answers JSON and JSON_IETF; a Set's value comes back by Get.
func TestGetSetRoundTrip(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	_, err := fx.c.Set(ctx, &gpb.SetRequest{
		Update:  []*gpb.Update{{Path: p("openconfig", "/system/ntp/servers/server[address=192.0.2.9]/config"), Val: jv(`{"openconfig-system:prefer":true,"address":"192.0.2.9"}`)}},
		Replace: []*gpb.Update{{Path: p("swmgr", "/config/Port[IntfRef=fpPort2]"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"swmgr:Mtu":9000}`)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fx.c.Get(ctx, &gpb.GetRequest{Encoding: gpb.Encoding_JSON_IETF, Path: []*gpb.Path{
		p("openconfig", "/system/ntp/servers/server[address=*]/config/prefer"),
		p("swmgr", "/config/Port[IntfRef=fpPort2]"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if v := string(r.Notification[0].Update[0].GetVal().GetJsonIetfVal()); v != "true" {
		t.Errorf("prefer: %s", v)
	}
	var port map[string]any
	json.Unmarshal(r.Notification[1].Update[0].GetVal().GetJsonIetfVal(), &port)
	if port["Mtu"] != float64(9000) || port["Description"] != "FP Port" {
		t.Errorf("the replaced port: %v", port)
	}
}

// A secret written over gNMI is never read back: not in an object, not as
// a field, not in the config log's record of the Set.
func TestSecretsAreNotRead(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	const secret = "archive-secret-42"
	_, err := fx.c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{{
		Path: p("swmgr", "/config/ConfigArchiveServer[IpAddr=192.0.2.50]"),
		Val:  jv(`{"Username":"u","Password":"` + secret + `"}`),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fx.c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{
		p("swmgr", "/config/ConfigArchiveServer[IpAddr=192.0.2.50]"),
		p("swmgr", "/config/ConfigArchiveServer[IpAddr=*]/Password"),
		p("swmgr", "/state/ConfigArchiveServer[IpAddr=192.0.2.50]/Password"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.String(), secret) {
		t.Errorf("a Get answered the secret: %s", r)
	}
	if v := string(r.Notification[1].Update[0].GetVal().GetJsonVal()); v != `""` {
		t.Errorf("Password read as %s", v)
	}
	if strings.Contains(string(fx.f.Dump()), secret) {
		t.Error("the store holds the secret in clear")
	}
}

// TestPollsAreShared: subscriptions alike ON_CHANGE to / poll the state
// together: each tick reads it once for all of them, however many they
// are.
func TestPollsAreShared(t *testing.T) {
	var stateReads atomic.Int64
	var stateKinds sync.Map // the kinds the service's state is read of
	fx := start(t, Options{State: func(ctx context.Context, k *model.Kind) ([]model.Object, error) {
		stateReads.Add(1)
		stateKinds.Store(k.Name, true)
		return nil, nil
	}})
	const subs = 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := onChangeStreams(t, ctx, fx, subs, p("swmgr", "/"))
	reads0, state0, t0 := fx.srv.pollReads.Load(), stateReads.Load(), time.Now()
	// SystemParam's UpTime changes every second: every subscriber is told.
	for _, s := range streams {
		recv(t, s, "UpTime", func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "SystemParam", "UpTime") })
	}
	time.Sleep(1500 * time.Millisecond)
	ticks := int64(time.Since(t0)/StatePollInterval) + 2
	if n := fx.srv.pollReads.Load() - reads0; n > ticks {
		t.Errorf("%d subscriptions alike read / %d times in %d ticks; want once a tick", subs, n, ticks)
	}
	kinds := int64(0)
	stateKinds.Range(func(any, any) bool { kinds++; return true })
	if n := stateReads.Load() - state0; n > kinds*ticks {
		t.Errorf("%d subscriptions alike read the service's (empty) state %d times in %d ticks; want once a tick for each of its %d kinds", subs, n, ticks, kinds)
	}
}

// TestPollsAreComparedOnce: subscriptions alike ON_CHANGE to / compare
// each poll of the state with what they last sent once for all of them
// (a new one once more, at its first poll), not each on its own, and
// every one of them is still told each change.
func TestPollsAreComparedOnce(t *testing.T) {
	fx := start(t, Options{})
	const subs = 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := onChangeStreams(t, ctx, fx, subs, p("swmgr", "/"))
	upTime := func(r *gpb.SubscribeResponse) bool { return hasUpdate(r, "SystemParam", "UpTime") }
	// SystemParam's UpTime changes every second: once each subscriber is
	// told, every subscription is past its first poll.
	for _, s := range streams {
		recv(t, s, "UpTime", upTime)
	}
	compares0, t0 := fx.srv.pollCompares.Load(), time.Now()
	for range 2 {
		for _, s := range streams {
			recv(t, s, "UpTime again", upTime)
		}
	}
	ticks := int64(time.Since(t0)/StatePollInterval) + 2
	if n := fx.srv.pollCompares.Load() - compares0; n > ticks {
		t.Errorf("%d subscriptions alike compared their polls %d times in %d ticks; want once a tick for all of them", subs, n, ticks)
	}
	// One more, started now, compares from its own read first; it and
	// the others are each told a new server's state and its delete.
	streams = append(streams, onChangeStreams(t, ctx, fx, 1, p("swmgr", "/"))...)
	stateOf := func(ps ...*gpb.Path) bool {
		for _, p := range ps {
			if strings.Contains(pathString(p), "/state/NtpServer[IpAddr=10.7.0.9]") {
				return true
			}
		}
		return false
	}
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.7.0.9"}))
	for i, s := range streams {
		recv(t, s, fmt.Sprint("subscriber ", i, ": the new server's state"), func(r *gpb.SubscribeResponse) bool {
			var ps []*gpb.Path
			for _, u := range r.GetUpdate().GetUpdate() {
				ps = append(ps, u.GetPath())
			}
			return stateOf(ps...)
		})
	}
	fx.f.MustApply(fx.f.Edit(model.Delete, "NtpServer", model.Object{"IpAddr": "10.7.0.9"}))
	for i, s := range streams {
		recv(t, s, fmt.Sprint("subscriber ", i, ": the delete of the server's state"), func(r *gpb.SubscribeResponse) bool {
			return stateOf(r.GetUpdate().GetDelete()...)
		})
	}
}
