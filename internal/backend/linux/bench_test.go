package linux

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
)

// benchLab is a switch namespace with n ports swp1..swp<n>: veth pairs
// whose both ends are ports (the benchmarks need netdevs, not traffic).
func benchLab(b *testing.B, n int) *lab {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	l := &lab{t: b, prefix: fmt.Sprintf("lnb%05d", os.Getpid()%100000)}
	l.sw = l.prefix + "sw"
	b.Cleanup(l.cleanup)
	if out, err := exec.Command("ip", "netns", "add", l.sw).CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	var batch strings.Builder
	for i := 1; i <= n; i += 2 {
		fmt.Fprintf(&batch, "link add swp%d type veth peer name swp%d\n", i, i+1)
	}
	cmd := exec.Command("ip", "-n", l.sw, "-batch", "-")
	cmd.Stdin = strings.NewReader(batch.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	return l
}

func benchSwitch(b *testing.B, l *lab, dir string) *sw { return startSwitch(b, l, dir) }

func addrEdits(s *sw, n int, op backend.Op) []engine.Edit {
	edits := make([]engine.Edit, 0, n)
	for i := 1; i <= n; i++ {
		edits = append(edits, s.edit(op, "IPv4Intf", model.Object{"IntfRef": fmt.Sprint("fpPort", i), "IpAddr": fmt.Sprintf("10.%d.%d.1/24", i/256, i%256)}))
	}
	return edits
}

// BenchmarkCommit1000IPv4Intf is one commit of 1,000 IPv4Intf creates
// through the engine: check, kernel (1,000 addresses) and store (fsync).
// The deletes between iterations are not timed.
func BenchmarkCommit1000IPv4Intf(b *testing.B) {
	l := benchLab(b, 1000)
	s := benchSwitch(b, l, b.TempDir())
	defer s.stop()
	for i := 0; i < b.N; i++ {
		edits := addrEdits(s, 1000, backend.Create)
		b.StartTimer()
		if err := s.commit(edits...); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if out, _ := exec.Command("ip", "-n", l.sw, "-o", "-4", "addr", "show").Output(); strings.Count(string(out), "\n") < 1000 {
			b.Fatalf("kernel has %d addresses", strings.Count(string(out), "\n"))
		}
		if err := s.commit(addrEdits(s, 1000, backend.Delete)...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartReconcile1000 is a start of swmgr (open the store and the
// kernel, replay = reconcile, discovery) with 1,000 IPv4Intf and their
// ports already in place in both, plus one more reconciliation pass.
func BenchmarkStartReconcile1000(b *testing.B) {
	l := benchLab(b, 1000)
	dir := b.TempDir()
	s := benchSwitch(b, l, dir)
	if err := s.commit(addrEdits(s, 1000, backend.Create)...); err != nil {
		b.Fatal(err)
	}
	s.stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := benchSwitch(b, l, dir)
		if c := s.be.Reconcile(); len(c) != 0 {
			b.Fatalf("reconcile after start changed %v", c)
		}
		b.StopTimer()
		s.stop()
		b.StartTimer()
	}
}

// BenchmarkGetStatePorts64 is GET /public/v1/state/Ports on 64 ports
// through the REST handler; it reports link dumps per GET (must be 1).
func BenchmarkGetStatePorts64(b *testing.B) {
	l := benchLab(b, 64)
	s := benchSwitch(b, l, b.TempDir())
	defer s.stop()
	get := getStatePorts(b, api.New(api.Options{Engine: s.e, History: history.New(s.e), Candidates: candidates.New(s.e), Log: quiet()}), 64)
	dumps := s.be.Kernel().linkDumps.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.be.forgetState() // every GET dumps afresh
		if rec := get(); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
	b.ReportMetric(float64(s.be.Kernel().linkDumps.Load()-dumps)/float64(b.N), "dumps/op")
}

// BenchmarkGetStatePorts64Sim is the same GET against the simulated
// backend with 64 ports: the engine's and the REST layer's share of
// BenchmarkGetStatePorts64 (store read, decoding, state merge, JSON), to
// set against BenchmarkPortStates64, the Linux backend's.
func BenchmarkGetStatePorts64Sim(b *testing.B) {
	e := simEngine(b, 64)
	get := getStatePorts(b, api.New(api.Options{Engine: e, History: history.New(e), Candidates: candidates.New(e), Log: quiet()}), 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rec := get(); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// simEngine is an engine over a store in a temporary directory and the
// simulated switch with ports ports, started; the benchmark's end closes
// both.
func simEngine(b *testing.B, ports int) *engine.Engine {
	dir := b.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	box, err := secrets.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(model.Builtin(), st, sim.New(sim.Options{Ports: ports}), box, quiet())
	b.Cleanup(e.Close)
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkPortStates64 is the backend's share of a GET /state/Ports: the
// one link dump of 64 ports.
func BenchmarkPortStates64(b *testing.B) {
	l := benchLab(b, 64)
	k, err := OpenKernel(KernelOptions{Netns: l.sw})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	netdevs, _ := k.Netdevs()
	m, _ := DefaultPortMap(netdevs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st, err := k.PortStates(m); err != nil || len(st) != 64 {
			b.Fatal(err, len(st))
		}
	}
}

// getStatePorts returns a GET /state/Ports through h, after checking once
// that it answers all the ports.
func getStatePorts(b *testing.B, h http.Handler, ports int) func() *httptest.ResponseRecorder {
	b.Helper()
	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/public/v1/state/Ports", nil))
		return rec
	}
	if rec := get(); rec.Code != 200 || strings.Count(rec.Body.String(), `"OperState"`) != ports {
		b.Fatalf("%d %.200s", rec.Code, rec.Body.String())
	}
	return get
}
