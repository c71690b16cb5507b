package gnmi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/hoststat"
	"github.com/swmgr/swmgr/internal/model"
)

// hostSource reads the host kinds (model.HostKinds) from /proc and /sys:
// what OpenConfig's /system and /components tell of a Linux switch. It
// keeps the previous read's CPU times, so that a utilization is that of
// the time between two reads (the state cache's: one read per kind per
// poll, however many subscriptions), as top shows it.
type hostSource struct {
	reg       *model.Registry
	version   string
	simulated bool   // simulate the temperature sensors (the simulated switch)
	proc, sys string // roots, /proc and /sys
	// ntp reads HostNtpState, from the configuration (Server.ntpState).
	ntp func(context.Context) ([]model.Object, error)

	mu      sync.Mutex
	cpus    *hoststat.CPUSampler // the CPUs' times at the last read
	procs   map[int64]procTimes  // pid -> its CPU ticks at the last read
	procsAt time.Time
}

type procTimes struct {
	ticks uint64
	start uint64 // distinguishes a pid reused by a new process
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times: 100 on
// every architecture Linux switches run.
const clockTicks = 100

func newHostSource(version string, simulated bool) (*hostSource, error) {
	reg, err := model.HostRegistry()
	if err != nil {
		return nil, err
	}
	return &hostSource{reg: reg, version: version, simulated: simulated, proc: "/proc", sys: "/sys",
		cpus: hoststat.NewCPUSampler("/proc", 0), procs: map[int64]procTimes{}}, nil
}

// serves reports whether k is one of the host kinds.
func (h *hostSource) serves(k *model.Kind) bool { return h.reg.Named(k.Name) != nil }

func (h *hostSource) read(ctx context.Context, k *model.Kind) ([]model.Object, error) {
	switch k.Name {
	case "HostSystemState":
		return h.system()
	case "HostNtpState":
		if h.ntp != nil {
			return h.ntp(ctx)
		}
	case "HostCpuState":
		return h.cpuStates()
	case "HostMemoryState":
		return h.memory()
	case "HostProcessState":
		return h.processes()
	case "HostComponentState":
		return h.components(), nil
	}
	return nil, fmt.Errorf("gnmi: no host source for %s", k.Name)
}

// bootTime is /proc/stat's btime, seconds since the epoch.
func (h *hostSource) bootTime() (int64, error) {
	b, err := os.ReadFile(filepath.Join(h.proc, "stat"))
	if err != nil {
		return 0, fmt.Errorf("gnmi: host state: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("gnmi: host state: no btime in %s/stat", h.proc)
}

func (h *hostSource) system() ([]model.Object, error) {
	boot, err := h.bootTime()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(h.proc, "uptime"))
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %w", err)
	}
	up, err := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %s/uptime: %w", h.proc, err)
	}
	return []model.Object{{
		"BootTime":        boot * int64(time.Second),
		"CurrentDatetime": time.Now().Format(time.RFC3339),
		"UpTime":          int64(up * float64(time.Second)),
		"SoftwareVersion": h.version,
	}}, nil
}

// cpuFields are /proc/stat's columns in order, as HostCpuState names
// them (hoststat.CPUColumns of them).
var cpuFields = [hoststat.CPUColumns]string{"User", "Nice", "Kernel", "Idle", "Wait", "HardwareInterrupt", "SoftwareInterrupt"}

func (h *hostSource) cpuStates() ([]model.Object, error) {
	shares, err := h.cpus.Read()
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %w", err)
	}
	out := make([]model.Object, 0, len(shares))
	for _, c := range shares {
		o := model.Object{"Index": c.Index, "Total": c.Total}
		for i, name := range cpuFields {
			o[name] = c.Columns[i]
		}
		out = append(out, o)
	}
	return out, nil
}

func (h *hostSource) memory() ([]model.Object, error) {
	m, err := hoststat.ReadMemory(h.proc)
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %w", err)
	}
	return []model.Object{{"Physical": m.Total, "Used": m.Used, "Free": m.Available}}, nil
}

// processes lists every process of the host: swmgr, the daemons it runs
// (FRR, chronyd) and the rest, as OpenConfig's procmon does.
func (h *hostSource) processes() ([]model.Object, error) {
	boot, err := h.bootTime()
	if err != nil {
		return nil, err
	}
	mem, err := hoststat.Meminfo(h.proc)
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %w", err)
	}
	entries, err := os.ReadDir(h.proc)
	if err != nil {
		return nil, fmt.Errorf("gnmi: host state: %w", err)
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	since := now.Sub(h.procsAt).Seconds()
	seen := make(map[int64]procTimes, len(entries))
	var out []model.Object
	page := int64(os.Getpagesize())
	for _, e := range entries {
		pid, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		st, err := parseProcStat(filepath.Join(h.proc, e.Name(), "stat"))
		if err != nil {
			continue // the process ended
		}
		cmdline, _ := os.ReadFile(filepath.Join(h.proc, e.Name(), "cmdline"))
		args := []string{}
		for _, a := range bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0}) {
			if len(a) > 0 {
				args = append(args, string(a))
			}
		}
		ticks := st.utime + st.stime
		seen[pid] = procTimes{ticks: ticks, start: st.start}
		// Its share of one CPU since the last read, or since it started.
		var util float64
		if last, ok := h.procs[pid]; ok && last.start == st.start && since > 0 {
			util = float64(ticks-min(last.ticks, ticks)) / clockTicks / since
		} else if age := float64(now.Unix()-boot) - float64(st.start)/clockTicks; age > 0 {
			util = float64(ticks) / clockTicks / age
		}
		rss := st.rss * page
		memUtil := int64(0)
		if mem["MemTotal"] > 0 {
			memUtil = rss * 100 / mem["MemTotal"]
		}
		out = append(out, model.Object{
			"Pid": pid, "Name": st.comm, "Args": args,
			"StartTime":      boot*int64(time.Second) + int64(st.start)*int64(time.Second)/clockTicks,
			"CpuUsageUser":   int64(st.utime) * int64(time.Second) / clockTicks,
			"CpuUsageSystem": int64(st.stime) * int64(time.Second) / clockTicks,
			"CpuUtilization": min(int64(util*100+0.5), 100),
			"MemoryUsage":    rss, "MemoryUtilization": memUtil,
		})
	}
	h.procs, h.procsAt = seen, now
	return out, nil
}

// procStat is what /proc/<pid>/stat tells of a process.
type procStat struct {
	comm                string
	utime, stime, start uint64 // clock ticks; start since boot
	rss                 int64  // pages
}

func parseProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	// The name is in parentheses and may hold spaces and parentheses
	// itself: the fields follow the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("%s: no name", path)
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime 22, rss 24.
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("%s: %d fields", path, len(f)+2)
	}
	u := func(i int) uint64 { n, _ := strconv.ParseUint(f[i-3], 10, 64); return n }
	rss, _ := strconv.ParseInt(f[24-3], 10, 64)
	return procStat{comm: string(b[open+1 : end]), utime: u(14), stime: u(15), start: u(22), rss: rss}, nil
}

// simulatedSensors are the simulated switch's: a CPU's and the board's,
// at steady temperatures.
var simulatedSensors = []model.Object{
	{"Name": "CPU0", "Type": "CPU", "Description": "simulated CPU temperature sensor", "Temperature": "45.0", "AlarmThreshold": int64(95)},
	{"Name": "Board", "Type": "SENSOR", "Description": "simulated board temperature sensor", "Temperature": "38.0", "AlarmThreshold": int64(80)},
}

// components are the host's temperature sensors: each hwmon device's
// temp<N>_input, named by the device and its label.
func (h *hostSource) components() []model.Object {
	if h.simulated {
		out := make([]model.Object, len(simulatedSensors))
		for i, o := range simulatedSensors {
			out[i] = o.Clone()
		}
		return out
	}
	var out []model.Object
	devs, _ := filepath.Glob(filepath.Join(h.sys, "class", "hwmon", "hwmon*"))
	for _, dev := range devs {
		name := readTrimmed(filepath.Join(dev, "name"))
		inputs, _ := filepath.Glob(filepath.Join(dev, "temp*_input"))
		for _, in := range inputs {
			base := strings.TrimSuffix(in, "_input")
			milli, err := strconv.ParseInt(readTrimmed(in), 10, 64)
			if err != nil {
				continue
			}
			label := readTrimmed(base + "_label")
			if label == "" {
				label = filepath.Base(base)
			}
			typ := "SENSOR"
			if name == "coretemp" || name == "k10temp" || name == "cpu_thermal" {
				typ = "CPU"
			}
			crit, _ := strconv.ParseInt(readTrimmed(base+"_crit"), 10, 64)
			out = append(out, model.Object{
				"Name": name + " " + label, "Type": typ,
				"Description": fmt.Sprintf("hwmon %s (%s) %s", filepath.Base(dev), name, filepath.Base(base)),
				"Temperature": strconv.FormatFloat(float64(milli)/1000, 'f', 1, 64), "AlarmThreshold": crit / 1000,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Str("Name") < out[j].Str("Name") })
	return out
}

func readTrimmed(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
