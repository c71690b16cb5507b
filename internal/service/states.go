package service

import (
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/daemon"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/hoststat"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
)

// serviceStatus is the service's own states: what state/SystemStatus and
// state/SystemSwVersion report (FlexSwitch's clients poll the first until
// Ready and print the second in their banner), LLDP's state on every port,
// and the dataplane's routing table.
type serviceStatus struct {
	started time.Time
	version string
	eng     *engine.Engine
	calls   *obs.Calls // the REST calls served
	ready   func() bool
	backend string
	// routes lists the dataplane's routing table (the kernel's on Linux).
	routes func(ctx context.Context) ([]model.Object, error)
	// daemons reports the routing and NTP daemons the dataplane runs (the
	// Linux backend's FRR and chronyd); nil when it runs none.
	daemons func() []daemon.Status
	// learned adds, to a derived state kind's objects, what a daemon of
	// the dataplane learned (LLDPIntfState: the neighbors lldpd heard), by
	// kind name.
	learned map[string]func(ctx context.Context, derived []model.Object) ([]model.Object, error)
	// proc is where the host's CPU and memory are read (/proc); cpus keeps
	// the CPU times of the previous read, so that SystemStatus's
	// CpuUtilization is the time since.
	proc string
	cpus *hoststat.CPUSampler
}

// Name names the service's own states as a provider.
func (s *serviceStatus) Name() string { return "service states" }

// Bindings are the sources of the state-only kinds the service fills
// itself.
func (s *serviceStatus) Bindings() []bind.Binding {
	srcs := s.sources()
	rows := make([]bind.Binding, 0, len(srcs))
	for _, name := range slices.Sorted(maps.Keys(srcs)) {
		rows = append(rows, bind.Binding{Kind: name, Source: srcs[name]})
	}
	return rows
}

// sources returns the service's own state sources, by state kind name.
func (s *serviceStatus) sources() map[string]bind.Source {
	out := map[string]bind.Source{}
	for _, k := range s.eng.Registry().Kinds() {
		if k.Class == model.State && k.Source == model.SourceService && k.Derived != nil {
			out[k.Name] = s.derived(k.Derived, s.learned[k.Name])
		}
	}
	for name, src := range map[string]bind.Source{
		"SystemStatusState": func(ctx context.Context) ([]model.Object, error) {
			o := s.status(ctx)
			if err := s.host(o); err != nil {
				return nil, err
			}
			return []model.Object{o}, nil
		},
		"SystemSwVersionState": func(ctx context.Context) ([]model.Object, error) {
			return []model.Object{swVersion(s.version)}, nil
		},
		"IPv4RouteState": s.routes,
	} {
		out[name] = src
	}
	return out
}

func (s *serviceStatus) status(ctx context.Context) model.Object {
	ready, reason := s.ready(), ""
	if !ready {
		reason = "starting: the backend is being reconciled with the stored configuration"
	}
	calls := s.calls
	start := s.started.UTC().Round(0).String()
	part := func(name string, enable bool, state, why string) model.Object {
		o := model.Object{"Name": name, "Enable": enable, "State": state, "Reason": why, "RestartCount": int64(0),
			"StartTime": "", "KeepAlive": "", "RestartTime": "", "RestartReason": ""}
		if enable {
			o["StartTime"] = start
		}
		return o
	}
	return model.Object{
		"Name":           s.hostname(ctx),
		"Ready":          ready,
		"Reason":         reason,
		"UpTime":         time.Since(s.started).Round(time.Second).String(),
		"NumCreateCalls": strconv.FormatUint(calls.Create.Load(), 10),
		"NumDeleteCalls": strconv.FormatUint(calls.Delete.Load(), 10),
		"NumUpdateCalls": strconv.FormatUint(calls.Update.Load(), 10),
		"NumGetCalls":    strconv.FormatUint(calls.Get.Load(), 10),
		"NumActionCalls": strconv.FormatUint(calls.Action.Load(), 10),
		"FlexDaemons":    s.parts(part, ready, reason),
	}
}

// host fills SystemStatus's CPU and memory of the host.
func (s *serviceStatus) host(o model.Object) error {
	cpus, err := s.cpus.Read()
	if err != nil {
		return fmt.Errorf("SystemStatus: %w", err)
	}
	mem, err := hoststat.ReadMemory(s.proc)
	if err != nil {
		return fmt.Errorf("SystemStatus: %w", err)
	}
	o["CpuUtilization"], o["MemoryTotal"], o["MemoryUsed"] = cpus[0].Total, mem.Total, mem.Used
	return nil
}

// parts lists swmgr's parts: the store, the backend, the daemons it runs
// for routing and NTP (or why there are none), the archive scheduler.
func (s *serviceStatus) parts(part func(string, bool, string, string) model.Object, ready bool, reason string) []model.Object {
	out := []model.Object{part("store", true, "up", ""), part("backend-"+s.backend, true, upIf(ready), reason)}
	var running []daemon.Status
	if s.daemons != nil {
		running = s.daemons()
	}
	has := map[string]bool{}
	for _, d := range running {
		has[d.Name] = true
		o := part(d.Name, true, d.State, "")
		o["StartTime"], o["RestartCount"], o["RestartReason"] = timeString(d.StartTime), int64(d.RestartCount), d.RestartReason
		o["RestartTime"] = timeString(d.RestartTime)
		out = append(out, o)
	}
	// Without a daemon the settings are kept and simulated: say so rather
	// than claim a daemon runs.
	if !has["bgpd"] {
		out = append(out, part("routing", false, "down", "no routing daemon runs: BGP settings are kept by the simulated switch (swmgr serve --backend linux --bgp frr runs FRR)"))
	}
	if !has["chronyd"] {
		out = append(out, part("ntp", false, "down", "no NTP daemon runs: NtpServer settings are kept by the simulated switch (swmgr serve --backend linux --ntp chrony runs chronyd)"))
	}
	return append(out, part("archive", true, "up", "")) // serve always runs the archive scheduler
}

func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Round(0).String()
}

func upIf(ready bool) string {
	if ready {
		return "up"
	}
	return "starting"
}

// hostname is SystemParam's Hostname, FlexSwitch's system name.
func (s *serviceStatus) hostname(ctx context.Context) string {
	name := ""
	_, err := s.eng.Snapshot(ctx, []string{model.Hostname.Kind}, nil, func(_ *model.Kind, o model.Object) error {
		name = o.Str(model.Hostname.Field)
		return nil
	})
	if err != nil {
		return ""
	}
	return name
}

// swVersion names swmgr's version and the commit it was built from.
func swVersion(version string) model.Object {
	repo := model.Object{"Name": "swmgr", "Sha1": "", "Branch": "", "Time": ""}
	if bi, ok := debug.ReadBuildInfo(); ok {
		repo["Name"] = bi.Main.Path
		for _, st := range bi.Settings {
			switch st.Key {
			case "vcs.revision":
				repo["Sha1"] = st.Value
			case "vcs.time":
				repo["Time"] = st.Value
			}
		}
	}
	return model.Object{"FlexswitchVersion": version, "Repos": []model.Object{repo}}
}

// derived is the source of a state kind derived from the running
// configuration (model.Derivation).
func (s *serviceStatus) derived(d *model.Derivation, learned func(context.Context, []model.Object) ([]model.Object, error)) bind.Source {
	return func(ctx context.Context) ([]model.Object, error) {
		cfg := map[string][]model.Object{}
		_, err := s.eng.Snapshot(ctx, d.From, nil, func(k *model.Kind, o model.Object) error {
			cfg[k.Name] = append(cfg[k.Name], o)
			return nil
		})
		if err != nil {
			return nil, err
		}
		objs := d.Func(cfg)
		if learned != nil {
			return learned(ctx, objs)
		}
		return objs, nil
	}
}
