package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/accounts/accountstest"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/configlog"
	"github.com/swmgr/swmgr/internal/model"
)

// The engine's figures (bench/README.md). Each compares two things measured in the same
// run, alternating rounds, and reports the ratio of the medians. Run:
//
//	go test -run '^$' -bench 'Engine' -benchtime 1x ./internal/engine/

const benchRounds = 5

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// addr makes the n-th unique NtpServer address.
func addr(n int) string { return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255) }

// NtpServer create latency (p50 of sequential creates) while another
// client loops User creates and deletes (a password hash each), against
// the same without it. Target: <= 1.5x. Both go the way a REST write goes:
// Engine.Apply with the config log entry the REST layer makes (the body,
// its password redacted), on the simulated switch's account files opened
// as serve opens them (accounts.SwitchFilesOptions: yescrypt hashes,
// written behind).
//
// Two more ratios are reported for information, not for the target: the
// same beside a User loop whose hashes are sha512crypt (about 10x cheaper
// than yescrypt, so the loop commits several times as often), and beside a
// loop of NtpServer creates and deletes, a client that does no account
// work at all and commits as fast as the writer lets it: that one measures
// what any other writer costs on this disk (bench/README.md).
func BenchmarkEngineNtpCreateBesideUserLoop(b *testing.B) {
	dir := b.TempDir()
	acc, err := accounts.OpenFiles(filepath.Join(dir, "accounts"), accounts.SwitchFilesOptions())
	if err != nil {
		b.Fatal(err)
	}
	f := newAccountsFixture(b, dir, acc, true)
	fast, _ := newUserFixture(b) // sha512crypt, as the tests use
	ntpBesideUsers(b, f, "bench", fast)
}

// The same with the host's kind of accounts, as the Linux backend has them
// (accounts.OS: useradd, userdel, ... run inside the writer), acting on
// account files of its own under a prefix. Needs root and the tools.
func BenchmarkNtpCreateBesideOSAccountLoop(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the OS account tools need root, even under a prefix")
	}
	for _, tool := range []string{"useradd", "userdel", "groupadd", "groupdel", "usermod"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				b.Skipf("%s is not installed", tool)
			}
		}
	}
	root := accountstest.Prefix(b)
	f := newAccountsFixture(b, b.TempDir(), &accounts.OS{Prefix: root, Scheme: accounts.SHA512}, false)
	ntpBesideUsers(b, f, "opsbench", nil)
}

// ntpBesideUsers measures NtpServer creates alone and beside a loop of
// User creates and deletes (names prefix0, prefix1, ...) on f, and the
// control beside a loop of NtpServer creates and deletes. With fast, it
// also measures the User loop on that fixture (its accounts hashing with
// another scheme), for information.
func ntpBesideUsers(b *testing.B, f *fixture, prefix string, fast *fixture) {
	ctx := context.Background()
	write := func(f *fixture, op backend.Op, kind string, fields model.Object) error {
		k := f.kind(kind)
		method := map[backend.Op]string{backend.Create: "POST", backend.Delete: "DELETE"}[op]
		raw, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		body, err := model.DecodeBody(raw)
		if err != nil {
			return err
		}
		info := &LogInfo{API: k.API(), Operation: method, Data: configlog.RedactBody(k, body)}
		_, err = f.e.Apply(ctx, []Edit{f.edit(op, kind, fields)}, Meta{Source: "bench", User: "admin"}, info)
		return err
	}
	n := 0
	var userOps int64
	var busy time.Duration
	// p50 runs 100 sequential NtpServer creates on f, beside a loop of
	// creates and deletes of kind loop ("" for none), and returns their
	// median.
	p50 := func(f *fixture, loop string) time.Duration {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var ops atomic.Int64
		if loop != "" {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					name := fmt.Sprintf("%s%d", prefix, i)
					obj, key := user(name, "operator", "Secret-pass-123"), model.Object{"Name": name}
					if loop == "NtpServer" {
						obj = model.Object{"IpAddr": name + ".example.com"}
						key = obj
					}
					if err := write(f, backend.Create, loop, obj); err != nil {
						b.Error(err)
						return
					}
					if err := write(f, backend.Delete, loop, key); err != nil {
						b.Error(err)
						return
					}
					ops.Add(2)
				}
			})
			time.Sleep(20 * time.Millisecond)
		}
		var lat []time.Duration
		start := time.Now()
		for range 100 {
			n++
			start := time.Now()
			if err := write(f, backend.Create, "NtpServer", model.Object{"IpAddr": addr(n)}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		close(stop)
		wg.Wait()
		if loop != "" && ops.Load() == 0 {
			b.Fatalf("the %s loop made no round while the creates ran", loop)
		}
		if loop == "User" && f != fast {
			userOps += ops.Load()
			busy += time.Since(start)
		}
		return medianOf(lat)
	}
	var alone, beside, control, fastAlone, fastBeside []time.Duration
	for range benchRounds {
		alone = append(alone, p50(f, ""))
		beside = append(beside, p50(f, "User"))
		control = append(control, p50(f, "NtpServer"))
		if fast != nil {
			fastAlone = append(fastAlone, p50(fast, ""))
			fastBeside = append(fastBeside, p50(fast, "User"))
		}
	}
	a, u, c := medianOf(alone), medianOf(beside), medianOf(control)
	b.ReportMetric(float64(a.Microseconds())/1000, "ms-p50-alone")
	b.ReportMetric(float64(u.Microseconds())/1000, "ms-p50-beside-users")
	b.ReportMetric(float64(userOps)/busy.Seconds(), "user-ops/s-beside")
	b.ReportMetric(u.Seconds()/a.Seconds(), "ratio(target<=1.5)")
	// The control: the same beside a loop of NtpServer creates and
	// deletes, a writer with no account work at all. What the User loop
	// costs beyond it is the User's own.
	b.ReportMetric(c.Seconds()/a.Seconds(), "ratio-beside-ntp-loop")
	if fast != nil {
		b.ReportMetric(medianOf(fastBeside).Seconds()/medianOf(fastAlone).Seconds(), "ratio-beside-sha512-users")
	}
}

// slowBackend is the simulated switch behind a per-call cost: every call
// into it (one batch of commits, or one commit) takes cost.
type slowBackend struct {
	backend.Backend
	cost time.Duration
}

func (s slowBackend) ApplyBatch(ctx context.Context, commits []*backend.Commit) (int, error) {
	time.Sleep(s.cost)
	return backend.ApplyBatch(ctx, s.Backend, s.Backend.Drivers(), commits)
}

// creates runs clients goroutines doing single NtpServer creates for d and
// returns creates per second. next numbers the addresses.
func creates(b *testing.B, e *Engine, clients int, d time.Duration, next *atomic.Int64) float64 {
	k := e.reg.Lookup(model.Config, "NtpServer")
	var done atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				ed := Edit{Kind: k, Op: backend.Create, Fields: model.Object{"IpAddr": addr(int(next.Add(1)))}}
				if _, err := e.Apply(context.Background(), []Edit{ed}, Meta{Source: "bench"}, nil); err != nil {
					b.Error(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

// With a backend whose every call costs 5 ms, 64 concurrent single creates
// (the writer hands the backend each group commit as one batch) against
// one backend call per commit. Target: >= 10x.
func BenchmarkEngineSlowBackendBatches(b *testing.B) {
	var next atomic.Int64
	run := func(perCommit bool) float64 {
		f := newFixtureWith(b, b.TempDir(), model.Builtin(), func(bk backend.Backend) backend.Backend { return slowBackend{bk, 5 * time.Millisecond} })
		if perCommit {
			f.e.MaxBackendBatch = 1
		}
		defer f.e.Close()
		return creates(b, f.e, 64, 2*time.Second, &next)
	}
	var batched, single []float64
	for range benchRounds {
		batched = append(batched, run(false))
		single = append(single, run(true))
	}
	bt, st := medianF(batched), medianF(single)
	b.ReportMetric(bt, "creates/s-batched")
	b.ReportMetric(st, "creates/s-one-call-per-commit")
	b.ReportMetric(bt/st, "ratio(target>=10)")
}

// Durable creates from 64 clients with GOMAXPROCS=1 against GOMAXPROCS=2,
// on one engine and data directory. Target: >= 0.8.
func BenchmarkEngineDurableCreatesOneProc(b *testing.B) {
	f := newFixture(b, b.TempDir())
	var next atomic.Int64
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var one, two []float64
	for range benchRounds {
		runtime.GOMAXPROCS(1)
		one = append(one, creates(b, f.e, 64, 2*time.Second, &next))
		runtime.GOMAXPROCS(2)
		two = append(two, creates(b, f.e, 64, 2*time.Second, &next))
	}
	o, t := medianF(one), medianF(two)
	b.ReportMetric(o, "creates/s-GOMAXPROCS=1")
	b.ReportMetric(t, "creates/s-GOMAXPROCS=2")
	b.ReportMetric(o/t, "ratio(target>=0.8)")
}
