package gnmi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/syncbuf"
)

// Each RPC, refused or not, writes one access line when it ends (a
// Subscribe's when the stream ends) and is counted in
// swmgr_gnmi_rpc_duration_seconds; no credential reaches the line.
func TestRPCAccessLineAndMetrics(t *testing.T) {
	out := &syncbuf.Buffer{}
	m := obs.NewMetrics()
	fx := start(t, Options{Access: obs.NewAccessLog(out, "json", slog.LevelInfo), Metrics: m})
	fx.f.MustApply(fx.f.Edit(model.Create, "NtpServer", model.Object{"IpAddr": "10.0.0.1"}))
	conn, err := grpc.NewClient("passthrough:///"+fx.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	anonymous := gpb.NewGNMIClient(conn)
	wrong := dial(t, fx.addr, creds{"admin", "not-the-admin-pass"})
	ctx := context.Background()
	get := &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll"), p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MaxPoll")}}
	once := func(c gpb.GNMIClient) error {
		s, err := c.Subscribe(ctx)
		if err != nil {
			return err
		}
		s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_ONCE, Encoding: gpb.Encoding_JSON,
			Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config/NtpServer")}},
		}}})
		for {
			if _, err := s.Recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	for _, c := range []struct {
		name string
		call func() error
		code codes.Code
		want map[string]any // the line's fields; nil: absent
	}{
		{"Get without credentials", func() error { _, err := anonymous.Get(ctx, get); return err }, codes.Unauthenticated,
			map[string]any{"msg": "gnmi", "user": nil, "method": "Get", "code": "Unauthenticated", "paths": 2.0}},
		{"Get with a wrong password", func() error { _, err := wrong.Get(ctx, get); return err }, codes.Unauthenticated,
			map[string]any{"user": nil, "method": "Get", "code": "Unauthenticated", "paths": 2.0}},
		{"Get", func() error { _, err := fx.c.Get(ctx, get); return err }, codes.OK,
			map[string]any{"user": "admin", "method": "Get", "code": "OK", "paths": 2.0, "mode": nil}},
		{"Get of nothing there", func() error {
			_, err := fx.c.Get(ctx, &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.9.9.9]")}})
			return err
		}, codes.NotFound, map[string]any{"user": "admin", "method": "Get", "code": "NotFound", "paths": 1.0}},
		{"Set", func() error {
			_, err := fx.c.Set(ctx, &gpb.SetRequest{
				Update: []*gpb.Update{{Path: p("swmgr", "/config/NtpServer[IpAddr=10.0.0.2]"), Val: jv(`{"MinPoll":5}`)}},
				Delete: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.3]")},
			})
			return err
		}, codes.OK, map[string]any{"user": "admin", "method": "Set", "code": "OK", "paths": 2.0}},
		{"Capabilities", func() error { _, err := fx.c.Capabilities(ctx, &gpb.CapabilityRequest{}); return err }, codes.OK,
			map[string]any{"user": "admin", "method": "Capabilities", "code": "OK", "paths": nil, "mode": nil}},
		{"Subscribe ONCE", func() error { return once(fx.c) }, codes.OK,
			map[string]any{"user": "admin", "method": "Subscribe", "code": "OK", "paths": nil, "mode": "once", "notifications": 1.0}},
		{"Subscribe without credentials", func() error { return once(anonymous) }, codes.Unauthenticated,
			map[string]any{"user": nil, "method": "Subscribe", "code": "Unauthenticated", "mode": nil, "notifications": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rpcCount(t, m, c.want["method"].(string), c.code.String())
			if err := c.call(); status.Code(err) != c.code {
				t.Fatalf("%v, want %s", err, c.code)
			}
			text := out.Take()
			if strings.Contains(text, "pass") {
				t.Errorf("a password in the access log: %s", text)
			}
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d access lines, want 1: %q", len(lines), text)
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
				t.Fatalf("%v: %s", err, lines[0])
			}
			for k, v := range c.want {
				if got, ok := line[k]; v == nil && ok || v != nil && got != v {
					t.Errorf("%s: %v, want %v (line %s)", k, got, v, lines[0])
				}
			}
			if src, _ := line["source"].(string); !strings.HasPrefix(src, "127.0.0.1:") {
				t.Errorf("source %q (line %s)", src, lines[0])
			}
			if _, ok := line["latency_ms"].(float64); !ok {
				t.Errorf("no latency_ms: %s", lines[0])
			}
			if after := rpcCount(t, m, c.want["method"].(string), c.code.String()); after != before+1 {
				t.Errorf("swmgr_gnmi_rpc_duration_seconds{method=%s,code=%s}: %d after, %d before", c.want["method"], c.code, after, before)
			}
		})
	}
	if n := counter(t, m, "swmgr_login_failures_total"); n != 1 {
		t.Errorf("swmgr_login_failures_total %v, want 1 (the wrong password; no credentials is no failure)", n)
	}
}

// swmgr_gnmi_subscriptions counts the Subscribe streams open now.
func TestSubscriptionsGauge(t *testing.T) {
	m := obs.NewMetrics()
	fx := start(t, Options{Metrics: m})
	if n := subscriptions(t, m, "stream"); n != 0 {
		t.Fatalf("%v stream subscriptions before any", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := fx.c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON,
		Subscription: []*gpb.Subscription{{Path: p("swmgr", "/config/NtpServer"), Mode: gpb.SubscriptionMode_ON_CHANGE}},
	}}})
	recv(t, s, "the sync", isSync)
	if n := subscriptions(t, m, "stream"); n != 1 {
		t.Errorf("%v stream subscriptions while one is open", n)
	}
	cancel()
	// The server sees the cancellation when it comes.
	for deadline := time.Now().Add(10 * time.Second); subscriptions(t, m, "stream") != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ended subscription is still counted")
		}
	}
	if n := rpcCount(t, m, "Subscribe", "Canceled"); n != 1 {
		t.Errorf("%d Subscribe RPCs ended Canceled, want 1", n)
	}
}

// family is the metric family name in m; nil if it has no series.
func family(t *testing.T, m *obs.Metrics, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// labeled is the series of f whose labels are all of kv (name, value...).
func labeled(f *dto.MetricFamily, kv ...string) *dto.Metric {
next:
	for _, s := range f.GetMetric() {
		for i := 0; i < len(kv); i += 2 {
			found := false
			for _, l := range s.GetLabel() {
				if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return s
	}
	return nil
}

func rpcCount(t *testing.T, m *obs.Metrics, method, code string) uint64 {
	s := labeled(family(t, m, "swmgr_gnmi_rpc_duration_seconds"), "method", method, "code", code)
	return s.GetHistogram().GetSampleCount()
}

func subscriptions(t *testing.T, m *obs.Metrics, mode string) float64 {
	return labeled(family(t, m, "swmgr_gnmi_subscriptions"), "mode", mode).GetGauge().GetValue()
}

func counter(t *testing.T, m *obs.Metrics, name string) float64 {
	return labeled(family(t, m, name)).GetCounter().GetValue()
}

// BenchmarkUnaryObserved is the unary interceptor around a handler that
// does nothing, with a Get's request: without the access log and metrics
// (off) and with them (on: JSON to io.Discard), for the allocations and
// the time observing adds (compare obs's BenchmarkWrapOverhead, REST's).
func BenchmarkUnaryObserved(b *testing.B) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("username", "admin", "password", "admin-pass"))
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}})
	req := &gpb.GetRequest{Path: []*gpb.Path{p("swmgr", "/config/NtpServer[IpAddr=10.0.0.1]/MinPoll")}}
	info := &grpc.UnaryServerInfo{FullMethod: "/gnmi.gNMI/Get"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"off", Options{}},
		{"on", Options{Access: obs.NewAccessLog(io.Discard, "json", slog.LevelInfo), Metrics: obs.NewMetrics()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := &Server{o: c.o}
			s.o.Login = testLogin
			b.ReportAllocs()
			for b.Loop() {
				s.unaryAuth(ctx, req, info, handler)
			}
		})
	}
}
