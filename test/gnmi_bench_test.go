package test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// passCreds sends a user's name and password as gNMI clients do.
type passCreds struct{ user, password string }

func (c passCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": c.user, "password": c.password}, nil
}
func (passCreds) RequireTransportSecurity() bool { return true }

// processCPU is the CPU time (user and system) a process has used.
func processCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

// BenchmarkGNMISampleCPU: 100 subscribers sampling the counters of 64
// ports every second (OpenConfig, TLS): the CPU swmgr spends on them, as a
// share of one core (swmgr runs as its own process; the subscribers are
// this one).
func BenchmarkGNMISampleCPU(b *testing.B) {
	g := startGNMIServer(b, "", "", "--ports", "64")
	pid := g.cmd.Process.Pid
	tlsCreds, err := credentials.NewClientTLSFromFile(filepath.Join(g.dir, "tls-cert.pem"), "localhost")
	if err != nil {
		b.Fatal(err)
	}
	idle := func(d time.Duration) float64 {
		c0, t0 := processCPU(b, pid), time.Now()
		time.Sleep(d)
		return float64(processCPU(b, pid)-c0) / float64(time.Since(t0))
	}
	before := idle(5 * time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const subs = 100
	received := make(chan int, subs)
	// One login first: the other 99 find the password checked (as
	// collectors that reconnect do), not 100 checks at once.
	if out, ok := g.run(b, "admin", blackBoxAdminPassword, "-capabilities"); !ok {
		b.Fatal(out)
	}
	for range subs {
		// Each subscriber its own connection, as separate collectors have.
		conn, err := grpc.NewClient(g.gnmiAddr, grpc.WithTransportCredentials(tlsCreds), grpc.WithPerRPCCredentials(passCreds{"admin", blackBoxAdminPassword}))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		s, err := gpb.NewGNMIClient(conn).Subscribe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		err = s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
			Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF,
			Subscription: []*gpb.Subscription{{
				Path: &gpb.Path{Origin: "openconfig", Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "*"}}, {Name: "state"}, {Name: "counters"}}},
				Mode: gpb.SubscriptionMode_SAMPLE, SampleInterval: uint64(time.Second),
			}},
		}}})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			n := 0
			for {
				r, err := s.Recv()
				if err != nil {
					if ctx.Err() == nil {
						b.Errorf("a subscriber ended: %v", err)
					}
					received <- n
					return
				}
				n += len(r.GetUpdate().GetUpdate())
			}
		}()
	}
	time.Sleep(3 * time.Second) // every subscription set up and sampling
	const window = 10 * time.Second
	during := idle(window)
	cancel()
	total := 0
	for range subs {
		total += <-received
	}
	b.ReportMetric(100*during, "cpu%-of-a-core-100subs")
	b.ReportMetric(100*before, "cpu%-of-a-core-idle")
	b.ReportMetric(float64(total)/(window+3*time.Second).Seconds(), "leaves/s-received")
	for range b.N {
	}
}
