package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// fill creates n NtpServers in commits of 10,000.
func fill(b testing.TB, s *switchHarness, n int) {
	k := s.eng.Registry().Lookup(model.Config, "NtpServer")
	for start := 0; start < n; start += 10000 {
		var edits []engine.Edit
		for i := start; i < min(start+10000, n); i++ {
			edits = append(edits, engine.Edit{Kind: k, Op: backend.Create, Fields: model.Object{
				"IpAddr": fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), "MinPoll": int64(4 + i%4)}})
		}
		if _, err := s.eng.Apply(context.Background(), edits, engine.Meta{Source: "bench"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// peakRSS returns VmHWM in MiB; resetPeakRSS starts a new peak (Linux
// clear_refs 5), so a figure covers only the step measured.
func peakRSS() float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func resetPeakRSS() {
	debug.FreeOSMemory() // the setup's garbage is not the step's
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

const benchObjects = 100000

// BenchmarkSaveConfig100k saves 100,000 objects (plus the switch's own) to
// the data directory: target ≤ 2 s, RSS < 300 MiB.
func BenchmarkSaveConfig100k(b *testing.B) {
	s := newSwitch(b, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	fill(b, s, benchObjects)
	fields := model.Object{"Timestamp": "disabled", "RetryCount": int64(0), "Timeout": int64(30)}
	resetPeakRSS()
	b.ReportMetric(peakRSS(), "RSS-before-MiB")
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.lc.Save(context.Background(), fields, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	fi, _ := os.Stat(filepath.Join(s.dir, StartupConfig))
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	b.ReportMetric(peakRSS(), "peak-RSS-MiB")
}

// BenchmarkRestore100k restores a saved file of 100,000 objects onto a
// switch reset to factory defaults: 100,000 creates as one commit, one
// revision. Target ≤ 10 s, RSS < 300 MiB.
func BenchmarkRestore100k(b *testing.B) {
	s := newSwitch(b, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	fill(b, s, benchObjects)
	if _, err := s.lc.Save(context.Background(), model.Object{"Timestamp": "disabled"}, false); err != nil {
		b.Fatal(err)
	}
	var peak float64
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if _, err := s.eng.Replace(context.Background(), engine.Replacement{Keep: s.lc.keepAdmins}, engine.Request{Meta: engine.Meta{Source: "bench"}}); err != nil {
			b.Fatal(err)
		}
		resetPeakRSS()
		rev := s.revision()
		b.StartTimer()
		code, body := s.do("POST", "/action/ResetConfigToFile", `{}`)
		b.StopTimer()
		if code != 200 {
			b.Fatalf("%d %s", code, body)
		}
		if s.revision() != rev+1 {
			b.Fatalf("the restore made %d revisions", s.revision()-rev)
		}
		peak = max(peak, peakRSS())
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-RSS-MiB")
}

// BenchmarkReset100k runs ResetConfig on a switch holding 100,000 created
// objects: 100,000 deletes as one commit (checking that nothing still
// names a deleted object must not cost O(n²)).
func BenchmarkReset100k(b *testing.B) {
	s := newSwitch(b, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	var peak float64
	for b.Loop() {
		b.StopTimer()
		fill(b, s, benchObjects)
		resetPeakRSS()
		rev := s.revision()
		b.StartTimer()
		code, body := s.do("POST", "/action/ResetConfig", ``)
		b.StopTimer()
		if code != 200 || s.revision() != rev+1 {
			b.Fatalf("%d %s; %d revisions", code, body, s.revision()-rev)
		}
		peak = max(peak, peakRSS())
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-RSS-MiB")
}

// BenchmarkCommitsWithHangingArchive measures commit throughput while an
// OnChange ConfigArchiveServer points at a server that accepts the
// connection and then hangs, against no archive server, in alternating
// rounds of the same run. Target: ratio ≥ 0.95.
func BenchmarkCommitsWithHangingArchive(b *testing.B) {
	s := newSwitch(b, harnessOptions{})
	fill(b, s, 1000)
	port := sshdtest.HangingServer(b)
	k := s.eng.Registry().Lookup(model.Config, "NtpServer")
	cas := s.eng.Registry().Lookup(model.Config, "ConfigArchiveServer")
	const workers, round, rounds = 4, 2 * time.Second, 5
	var seq atomic.Int64
	commits := func() float64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(round)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					i := seq.Add(1)
					ed := engine.Edit{Kind: k, Op: backend.Update, Target: engine.Target{Key: model.Object{"IpAddr": fmt.Sprintf("10.0.%d.%d", w, i%200)}},
						Fields: model.Object{"MinPoll": int64(4 + i%3), "MaxPoll": int64(10)}}
					if _, err := s.eng.Apply(context.Background(), []engine.Edit{ed}, engine.Meta{Source: "bench"}, nil); err != nil {
						b.Error(err)
						return
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / round.Seconds()
	}
	server := func(on bool) {
		var ed engine.Edit
		if on {
			ed = engine.Edit{Kind: cas, Op: backend.Create, Fields: model.Object{"IpAddr": "127.0.0.1", "Port": int64(port), "Username": "x", "Password": "y",
				"OnChange": true, "Interval": int64(0), "RetryCount": int64(3), "Timeout": int64(60)}}
		} else {
			ed = engine.Edit{Kind: cas, Op: backend.Delete, Target: engine.Target{Key: model.Object{"IpAddr": "127.0.0.1"}}}
		}
		if _, err := s.eng.Apply(context.Background(), []engine.Edit{ed}, engine.Meta{Source: "bench"}, nil); err != nil {
			b.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	// Alternating rounds; the figure is the ratio of the medians, so that
	// one round slowed by something else on the machine does not decide it.
	var without, with []float64
	b.ResetTimer()
	for b.Loop() {
		for range rounds {
			without = append(without, commits())
			server(true)
			with = append(with, commits())
			if st, _ := s.lc.sched.State("127.0.0.1"); !st.Running {
				b.Fatalf("the archive upload is not hanging: %+v", st)
			}
			server(false)
		}
	}
	b.Logf("commits/s without: %.0f; with a hanging OnChange server: %.0f", without, with)
	b.ReportMetric(median(without), "commits/s-without")
	b.ReportMetric(median(with), "commits/s-with-hanging")
	b.ReportMetric(median(with)/median(without), "ratio")
}

// BenchmarkEngineCommit100k is the engine's share of a restore: the same
// 100,000 creates handed to one engine commit directly (no file, no
// decoding), for comparison with BenchmarkRestore100k.
func BenchmarkEngineCommit100k(b *testing.B) {
	s := newSwitch(b, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	k := s.eng.Registry().Lookup(model.Config, "NtpServer")
	var peak float64
	for b.Loop() {
		b.StopTimer()
		if _, err := s.eng.Replace(context.Background(), engine.Replacement{Keep: s.lc.keepAdmins}, engine.Request{Meta: engine.Meta{Source: "bench"}}); err != nil {
			b.Fatal(err)
		}
		edits := make([]engine.Edit, benchObjects)
		for i := range edits {
			edits[i] = engine.Edit{Kind: k, Op: backend.Create, Fields: model.Object{"IpAddr": fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), "MinPoll": int64(4 + i%4)}}
		}
		resetPeakRSS()
		b.StartTimer()
		if _, err := s.eng.Apply(context.Background(), edits, engine.Meta{Source: "bench"}, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		peak = max(peak, peakRSS())
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-RSS-MiB")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRestoreFlexFile300k restores a FlexSwitch-shaped (format 1)
// file of 300,000 NtpServers of one field each (7 MB) onto a new switch:
// the file is small, the objects many. Peak RSS (VmHWM, reset before the
// step) target ≤ 300 MiB; bench/restorerss.sh measures the whole process.
func BenchmarkRestoreFlexFile300k(b *testing.B) {
	const n = 300000
	s := newSwitch(b, harnessOptions{tune: func(o *Options) { o.NoScheduler = true }})
	var sb strings.Builder
	sb.WriteString(`{"ConfigData":{"NtpServer":[`)
	for i := range n {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, `{"IpAddr":"10.%d.%d.%d"}`, i>>16, (i>>8)&255, i&255)
	}
	sb.WriteString("]}}\n")
	file := filepath.Join(b.TempDir(), "flex.json")
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	sb = strings.Builder{}
	var peak float64
	for b.Loop() {
		b.StopTimer()
		if _, err := s.eng.Replace(context.Background(), engine.Replacement{Keep: s.lc.keepAdmins}, engine.Request{Meta: engine.Meta{Source: "bench"}}); err != nil {
			b.Fatal(err)
		}
		resetPeakRSS()
		b.StartTimer()
		code, body := s.do("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"//`+file+`"}`)
		b.StopTimer()
		if code != 200 {
			b.Fatalf("%d %s", code, body)
		}
		peak = max(peak, peakRSS())
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-RSS-MiB")
}
