package test

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	fpb "github.com/openconfig/gnoi/file"
	spb "github.com/openconfig/gnoi/system"
)

// BenchmarkGNOIPing16 runs 16 Ping streams at once (four users, four each:
// the per-user bound) of 20 echo requests at the non-admins' fastest
// interval (0.2 s) to loopback, and reports swmgr's CPU per stream and its
// peak resident memory: what swmgr adds to the ping processes (which are
// not swmgr's CPU).
//
//	go test -run '^$' -bench BenchmarkGNOIPing16 -benchtime 3x ./test/
func BenchmarkGNOIPing16(b *testing.B) {
	g := startGNOIServer(b)
	users := []string{"pinger1", "pinger2", "pinger3", "pinger4"}
	for _, u := range users {
		g.expect(b, 201, "POST", "/config/User", fmt.Sprintf(`{"Name":%q,"Group":"users","Password":"ping-pass-1"}`, u))
	}
	sys := spb.NewSystemClient(g.conn)
	pid := g.cmd.Process.Pid
	resetPeak(b, pid)
	rss := procKiB(b, pid, "VmRSS")
	cpu := processCPU(b, pid)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for i := range 16 {
			ctx := as(b, users[i%4], "ping-pass-1")
			wg.Go(func() {
				st, err := sys.Ping(ctx, &spb.PingRequest{Destination: "127.0.0.1", Count: 20, Interval: int64(200 * time.Millisecond)})
				if err != nil {
					b.Error(err)
					return
				}
				rs, err := recvAll(st.Recv)
				if err != nil || len(rs) != 21 {
					b.Errorf("ping: %d responses, %v", len(rs), err)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	used := processCPU(b, pid) - cpu
	b.ReportMetric(float64(used.Microseconds())/float64(16*b.N), "swmgr-cpu-us/stream")
	b.ReportMetric(float64(procKiB(b, pid, "VmHWM")-rss), "peak-rss-growth-KiB")
}

// BenchmarkGNOIFileGet50MB reads a 50 MB file with File.Get (TLS, a
// SHA-256 on both ends) and with cat, and reports both throughputs.
//
//	go test -run '^$' -bench BenchmarkGNOIFileGet50MB -benchtime 5x ./test/
func BenchmarkGNOIFileGet50MB(b *testing.B) {
	g := startGNOIServer(b)
	const size = 50 << 20
	data := make([]byte, size)
	rand.Read(data)
	p := filepath.Join(g.dir, "uploads", "big")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	files := fpb.NewFileClient(g.conn)
	admin := asAdmin(b)
	var gnoiTook, catTook time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		got, err := getFile(admin, files, "/uploads/big")
		if err != nil || len(got) != size {
			b.Fatalf("Get: %d bytes, %v", len(got), err)
		}
		gnoiTook += time.Since(start)
		start = time.Now()
		cmd := exec.Command("cat", p)
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		n, _ := io.Copy(io.Discard, out)
		cmd.Wait()
		if n != size {
			b.Fatalf("cat: %d bytes", n)
		}
		catTook += time.Since(start)
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(size*b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(gnoiTook), "gnoi-MB/s")
	b.ReportMetric(mbps(catTook), "cat-MB/s")
}
