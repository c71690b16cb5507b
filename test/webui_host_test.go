package test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestWebUIShowsHostCPUAndMemory: the front panel's system view shows the
// host's CPU and memory as state/SystemStatus reports them (the page
// reads them over REST, every few seconds while it is shown).
func TestWebUIShowsHostCPUAndMemory(t *testing.T) {
	s, b := serverAndChromium(t, 1280, 900)
	st := s.expect(t, 200, "GET", "/state/SystemStatus", "").object()
	cpu, ok := st["CpuUtilization"].(float64)
	total, _ := st["MemoryTotal"].(float64)
	used, _ := st["MemoryUsed"].(float64)
	if !ok || cpu < 0 || cpu > 100 || total <= 0 || used <= 0 || used > total {
		t.Fatalf("SystemStatus: CpuUtilization %v, MemoryTotal %v, MemoryUsed %v", st["CpuUtilization"], st["MemoryTotal"], st["MemoryUsed"])
	}

	b.openAsAdmin(s)
	shown := func() (cpu, mem, at string) {
		t.Helper()
		b.waitFor(`document.querySelector('#system [data-field="memory"]').textContent !== ''`, 20*time.Second)
		var got struct{ CPU, Memory, At string }
		b.eval(&got, `({CPU: document.querySelector('#system [data-field="cpu"]').textContent, Memory: document.querySelector('#system [data-field="memory"]').textContent, At: document.querySelector('#system [data-field="cpu"]').title})`)
		return got.CPU, got.Memory, got.At
	}
	gotCPU, gotMem, at := shown()
	if m := regexp.MustCompile(`^(\d+) %$`).FindStringSubmatch(gotCPU); m == nil {
		t.Errorf("CPU shown as %q, want a percentage", gotCPU)
	} else if n, _ := strconv.Atoi(m[1]); n < 0 || n > 100 {
		t.Errorf("CPU shown as %q", gotCPU)
	}
	// The total is the host's (it does not move); the part used does.
	wantTotal := fmt.Sprintf("%.1f GiB", total/(1<<30))
	if m := regexp.MustCompile(`^(\d+(\.\d)? [KMG]iB) used of ([\d.]+ GiB) \((\d+) %\)$`).FindStringSubmatch(gotMem); m == nil || m[3] != wantTotal {
		t.Errorf("memory shown as %q, want \"<used> used of %s (<n> %%)\"", gotMem, wantTotal)
	}
	// Read again while shown: the time of the read moves.
	b.waitFor(`document.querySelector('#system [data-field="cpu"]').title !== `+jsString(at), 20*time.Second)
}
