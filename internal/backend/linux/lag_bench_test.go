package linux

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/model"
)

// benchLAGs is how many LAGs the LAG benchmarks make, of two ports each:
// a 48-port leaf's worth of port channels.
const benchLAGs = 48

// lagEdits are the creates (or deletes) of PortChannel1..48, the i-th of
// fpPort<i> and fpPort<i+48>, and, with vlan, VLAN 100 with every LAG a
// tagged member: all in one commit (single false), or one commit per LAG
// (single), each creating its LAG and putting it in the VLAN.
func lagEdits(s *sw, op backend.Op, vlan, single bool) [][]engine.Edit {
	var commits [][]engine.Edit
	var all []engine.Edit
	var members []string
	for i := 1; i <= benchLAGs; i++ {
		name := fmt.Sprint("PortChannel", i)
		members = append(members, name)
		lag := s.edit(op, "LaPortChannel", model.Object{"IntfRef": name, "IntfRefList": []string{fmt.Sprint("fpPort", i), fmt.Sprint("fpPort", i+benchLAGs)}})
		if !single {
			all = append(all, lag)
			continue
		}
		c := []engine.Edit{lag}
		if vlan && op != backend.Delete {
			vop := backend.Update
			if i == 1 {
				vop = backend.Create
			}
			c = append(c, s.edit(vop, "Vlan", model.Object{"VlanId": int64(100), "IntfList": append([]string(nil), members...)}))
		}
		commits = append(commits, c)
	}
	if vlan && op == backend.Delete {
		v := []engine.Edit{s.edit(backend.Delete, "Vlan", model.Object{"VlanId": int64(100)})}
		if single {
			return append([][]engine.Edit{v}, commits...)
		}
		all = append(v, all...)
	} else if vlan && !single {
		all = append(all, s.edit(backend.Create, "Vlan", model.Object{"VlanId": int64(100), "IntfList": members}))
	}
	if !single {
		commits = [][]engine.Edit{all}
	}
	return commits
}

// benchmarkLAGCommits times making the 48 LAGs (and their VLAN, with
// vlan) as one commit and as 48; the deletes between iterations are not
// timed. check, if set, runs after each timed make. The metric vlan says
// whether the VLAN was made (1) or not (0).
func benchmarkLAGCommits(b *testing.B, s *sw, vlan bool, check func(b *testing.B)) {
	for _, single := range []bool{false, true} {
		name := "one-commit"
		if single {
			name = "48-commits"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(boolFloat(vlan), "vlan")
			for i := 0; i < b.N; i++ {
				b.StartTimer()
				for _, c := range lagEdits(s, backend.Create, vlan, single) {
					if err := s.commit(c...); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if check != nil {
					check(b)
				}
				if err := s.commit(lagEdits(s, backend.Delete, vlan, false)[0]...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommit48LAGs makes 48 LAGs of two ports each, with VLAN 100 over
// all of them where the kernel has VLAN-filtering bridges, through the
// engine on the Linux backend: one commit against 48. It needs the
// bonding driver, which the VM has: SWMGR_VMTEST_BENCH=BenchmarkCommit48LAGs
// with TestStockKernelInVM runs it there (docs/linux-backend.md).
func BenchmarkCommit48LAGs(b *testing.B) {
	l := benchLab(b, 2*benchLAGs)
	s := benchSwitch(b, l, b.TempDir())
	defer s.stop()
	f := s.be.Kernel().Features()
	if !f.Bond {
		b.Skip("the kernel has no bonding driver")
	}
	benchmarkLAGCommits(b, s, f.BridgeVLAN && f.VLAN, func(b *testing.B) {
		out, _ := exec.Command("ip", "-n", l.sw, "-o", "link", "show", "type", "bond").Output()
		if n := strings.Count(string(out), "\n"); n != benchLAGs {
			b.Fatalf("the kernel has %d bonds, want %d", n, benchLAGs)
		}
	})
}

// BenchmarkCommit48LAGsSim is BenchmarkCommit48LAGs on the simulated
// switch (96 ports): the engine's and the store's share.
func BenchmarkCommit48LAGsSim(b *testing.B) {
	e := simEngine(b, 2*benchLAGs)
	benchmarkLAGCommits(b, &sw{t: b, reg: e.Registry(), e: e}, true, nil)
}

func boolFloat(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
