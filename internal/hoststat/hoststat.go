// Package hoststat reads the Linux host's CPU times and memory from /proc:
// what gNMI's host kinds (OpenConfig's /system/cpus and /system/memory)
// and the service's SystemStatus report. It is a leaf both front doors'
// sides import, so the host is read one way.
package hoststat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPUColumns are /proc/stat's first seven columns of a cpu line, in order:
// user, nice, system, idle, iowait, irq, softirq.
const CPUColumns = 7

// idle and iowait are the columns that are not work.
const (
	colIdle = 3
	colWait = 4
)

// CPUShare is one CPU's time between two reads (or since boot at the
// first), in percent.
type CPUShare struct {
	Index   string            // "ALL" for the sum of all CPUs, else the CPU's number
	Columns [CPUColumns]int64 // each of /proc/stat's columns' share
	Total   int64             // everything but idle and iowait
}

// CPUSampler reads /proc/stat and keeps the CPU times it read, so that a
// share is that of the time since its previous read, as top shows it.
type CPUSampler struct {
	proc string
	// reuse: a read within this long of the previous one answers the
	// previous one's shares (a few clock ticks are no measure).
	reuse time.Duration

	mu     sync.Mutex
	last   map[string][]uint64 // CPU index -> /proc/stat's times at the last read
	lastAt time.Time
	shares []CPUShare
}

// NewCPUSampler reads /proc/stat below proc (normally "/proc"). A read
// within reuse of the previous one answers the previous shares again
// (0: every read reads).
func NewCPUSampler(proc string, reuse time.Duration) *CPUSampler {
	return &CPUSampler{proc: proc, reuse: reuse, last: map[string][]uint64{}}
}

// Read returns every CPU's share of time since the previous read, "ALL"
// first.
func (s *CPUSampler) Read() ([]CPUShare, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.shares != nil && now.Sub(s.lastAt) < s.reuse {
		return append([]CPUShare(nil), s.shares...), nil
	}
	b, err := os.ReadFile(filepath.Join(s.proc, "stat"))
	if err != nil {
		return nil, fmt.Errorf("hoststat: %w", err)
	}
	var out []CPUShare
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 1+CPUColumns || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		index := strings.TrimPrefix(f[0], "cpu")
		if index == "" {
			index = "ALL"
		}
		times := make([]uint64, 0, len(f)-1)
		for _, v := range f[1:] {
			n, _ := strconv.ParseUint(v, 10, 64)
			times = append(times, n)
		}
		delta := append([]uint64(nil), times...)
		if last := s.last[index]; len(last) == len(times) {
			for i := range delta {
				delta[i] -= min(last[i], delta[i])
			}
		}
		s.last[index] = times
		var sum uint64
		for _, d := range delta {
			sum += d
		}
		pct := func(n uint64) int64 {
			if sum == 0 {
				return 0
			}
			return int64((n*100 + sum/2) / sum)
		}
		c := CPUShare{Index: index, Total: 100 - pct(delta[colIdle]+delta[colWait])}
		for i := range c.Columns {
			c.Columns[i] = pct(delta[i])
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hoststat: no cpu line in %s/stat", s.proc)
	}
	s.shares, s.lastAt = out, now
	return append([]CPUShare(nil), out...), nil
}

// Meminfo returns /proc/meminfo's values below proc, in bytes (those
// given in kB multiplied).
func Meminfo(proc string) (map[string]int64, error) {
	b, err := os.ReadFile(filepath.Join(proc, "meminfo"))
	if err != nil {
		return nil, fmt.Errorf("hoststat: %w", err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[name] = n
	}
	return out, nil
}

// Memory is the host's memory in bytes: Total is MemTotal, Available
// MemAvailable (what can be had without swapping), Used the difference.
type Memory struct{ Total, Available, Used int64 }

// ReadMemory reads the host's memory from /proc/meminfo below proc.
func ReadMemory(proc string) (Memory, error) {
	m, err := Meminfo(proc)
	if err != nil {
		return Memory{}, err
	}
	if m["MemTotal"] <= 0 {
		return Memory{}, fmt.Errorf("hoststat: no MemTotal in %s/meminfo", proc)
	}
	return Memory{Total: m["MemTotal"], Available: m["MemAvailable"], Used: m["MemTotal"] - m["MemAvailable"]}, nil
}
