package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// procKiB is a /proc/<pid>/status field in KiB (VmRSS, VmHWM).
func procKiB(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// resetPeak starts the process's VmHWM over from its VmRSS now.
func resetPeak(t testing.TB, pid int) {
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkGNMIReadOnlyWorstCase: what the worst requests of a read-only
// user cost a `swmgr serve --ports 64 --gnmi` process holding 1,000
// NtpServers (/ answers ~250 KiB): a Get of 3,000 "/" paths, the same
// from 8 clients at once, a Get of 1,000 "/" paths (under the bound on
// paths: stopped by the bound on the answer); then 600 Subscribe streams
// of / that never read (10 connections of 60, their windows 64 KiB), and
// the same again once the stall cut-off has ended them. Figures: peak RSS
// growth of the process over each step (VmHWM, reset before it), its CPU,
// and the median latency of a commit (REST create, 40 of them) with the
// 600 stalled streams open over none.
func BenchmarkGNMIReadOnlyWorstCase(b *testing.B) {
	g := startGNMIServer(b, "", "--ports", "64")
	pid := g.cmd.Process.Pid
	g.expect(b, 201, "POST", "/config/User", `{"Name":"probe","Group":"users","Password":"probe-password-1"}`)
	for i := range 1000 {
		g.expect(b, 201, "POST", "/config/NtpServer", fmt.Sprintf(`{"IpAddr":"10.8.%d.%d"}`, i/250, i%250+1))
	}
	tlsCreds, err := credentials.NewClientTLSFromFile(filepath.Join(g.dir, "tls-cert.pem"), "localhost")
	if err != nil {
		b.Fatal(err)
	}
	dialProbe := func() *grpc.ClientConn {
		conn, err := grpc.NewClient(g.gnmiAddr, grpc.WithTransportCredentials(tlsCreds), grpc.WithPerRPCCredentials(passCreds{"probe", "probe-password-1"}),
			grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(2<<30)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		return conn
	}
	step := func(name string, f func()) {
		time.Sleep(500 * time.Millisecond)
		rss := procKiB(b, pid, "VmRSS")
		resetPeak(b, pid)
		cpu := processCPU(b, pid)
		f()
		growth := procKiB(b, pid, "VmHWM") - rss
		b.ReportMetric(float64(growth)/1024, name+"-peak-rss-growth-MiB")
		b.ReportMetric((processCPU(b, pid) - cpu).Seconds(), name+"-cpu-s")
		b.Logf("%s: VmRSS before %d KiB, peak growth %d KiB, VmRSS after %d KiB", name, rss, growth, procKiB(b, pid, "VmRSS"))
	}
	conn := dialProbe()
	c := gpb.NewGNMIClient(conn)
	if _, err := c.Capabilities(context.Background(), &gpb.CapabilityRequest{}); err != nil {
		b.Fatal(err)
	}
	getSlash := func(n int) error {
		req := &gpb.GetRequest{Encoding: gpb.Encoding_JSON}
		for range n {
			req.Path = append(req.Path, &gpb.Path{})
		}
		_, err := c.Get(context.Background(), req)
		return err
	}
	step("get3000", func() { b.Logf("Get of 3000 /: %v", status.Code(getSlash(3000))) })
	step("get1000", func() { b.Logf("Get of 1000 /: %v", getSlash(1000)) })
	step("get1000x8", func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); getSlash(1000) }()
		}
		wg.Wait()
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stalled := func() (opened, refused int) {
		for range 10 {
			sc := gpb.NewGNMIClient(dialProbe())
			for range 60 {
				s, err := sc.Subscribe(ctx)
				if err != nil {
					refused++
					continue
				}
				s.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
					Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON,
					Subscription: []*gpb.Subscription{{Path: &gpb.Path{}, Mode: gpb.SubscriptionMode_ON_CHANGE}},
				}}})
				if _, err := s.Recv(); err != nil { // the first response, then nothing
					refused++
					continue
				}
				opened++
			}
		}
		return opened, refused
	}
	latency := func() time.Duration {
		var ds []time.Duration
		for i := range 40 {
			body := fmt.Sprintf(`{"IpAddr":"10.6.%d.%d"}`, i/250, i%250+1)
			t0 := time.Now()
			r := g.expect(b, 201, "POST", "/config/NtpServer", body)
			ds = append(ds, time.Since(t0))
			g.expect(b, 200, "DELETE", "/config/NtpServer/"+r.str("ObjectId"), "")
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	none := latency()
	var with time.Duration
	step("streams600", func() {
		opened, refused := stalled()
		time.Sleep(2 * time.Second) // their sends fill the windows
		with = latency()
		b.Logf("600 stalled streams: %d opened, %d refused or cut", opened, refused)
	})
	b.ReportMetric(float64(with)/float64(none), "commit-p50-600stalled/none")
	b.Logf("commit p50: %v with 600 stalled streams, %v without", with, none)
	time.Sleep(35 * time.Second) // the stall cut-off (30 s) ends them
	step("streams600-reopened", func() {
		opened, refused := stalled()
		time.Sleep(2 * time.Second)
		b.Logf("600 stalled streams again: %d opened, %d refused or cut", opened, refused)
	})
	for range b.N {
	}
}
