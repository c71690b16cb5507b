package model

// systemKinds are FlexSwitch's readiness and version objects, read by its
// CLI, config monitor and lab tools before anything else: they poll
// state/SystemStatus until Ready and print state/SystemSwVersion in their
// banner. The service itself fills them (its own states, bound as sources
// in the binding table), not the backend.
func systemKinds() []*Kind {
	return []*Kind{
		{
			Name: "SystemStatusState", Class: State, Source: SourceService, Singleton: true,
			CLI: &CLICommand{Words: []string{"systemstatus"}},
			Doc: "The service's readiness and health: Ready is false until the backend has been reconciled with the stored configuration at start. The Num*Calls counters count REST calls since start, as decimal strings as FlexSwitch sent them. CpuUtilization and the Memory fields are the host's (the web page's system view shows them).",
			Fields: []*Field{
				{Name: "Name", Type: String, Doc: "the switch's host name"},
				{Name: "Ready", Type: Bool},
				{Name: "Reason", Type: String, Doc: "why the service is not ready; \"\" when it is"},
				{Name: "UpTime", Type: String, Doc: "time since the service started, as a Go duration (1h2m3s)"},
				{Name: "NumCreateCalls", Type: String},
				{Name: "NumDeleteCalls", Type: String},
				{Name: "NumUpdateCalls", Type: String},
				{Name: "NumGetCalls", Type: String},
				{Name: "NumActionCalls", Type: String},
				{Name: "CpuUtilization", Type: Int, Doc: "percent of all the host's CPUs' time spent working (not idle, not waiting for I/O) since the previous read of SystemStatus (reads within a second answer the same figure; the first is since boot), as top shows it (/proc/stat)"},
				{Name: "MemoryTotal", Type: Int, Doc: "the host's memory, bytes (/proc/meminfo's MemTotal)"},
				{Name: "MemoryUsed", Type: Int, Doc: "the host's memory in use, bytes: MemTotal less MemAvailable (what can be had without swapping)"},
				{Name: "FlexDaemons", Type: RecordList, Doc: "swmgr's parts: store, backend, routing, NTP, archive", Sub: []*Field{
					{Name: "Name", Type: String},
					{Name: "Enable", Type: Bool, Doc: "the part runs in this configuration of swmgr"},
					{Name: "State", Type: String, Doc: "up, starting, restarting, down"},
					{Name: "Reason", Type: String},
					{Name: "StartTime", Type: String},
					{Name: "KeepAlive", Type: String},
					{Name: "RestartCount", Type: Int},
					{Name: "RestartTime", Type: String},
					{Name: "RestartReason", Type: String},
				}},
			},
		},
		{
			Name: "SystemSwVersionState", Class: State, Source: SourceService, Singleton: true,
			CLI: &CLICommand{Words: []string{"version"}},
			Doc: "The software version: FlexswitchVersion is swmgr's version; Repos names the source it was built from.",
			Fields: []*Field{
				{Name: "FlexswitchVersion", Type: String},
				{Name: "Repos", Type: RecordList, Sub: []*Field{
					{Name: "Name", Type: String},
					{Name: "Sha1", Type: String},
					{Name: "Branch", Type: String},
					{Name: "Time", Type: String, Doc: "build (commit) time"},
				}},
			},
		},
	}
}

// Hostname is where the switch's host name is configured: SystemParam's
// Hostname, which SystemStatus reports as its Name.
var Hostname = struct{ Kind, Field string }{"SystemParam", "Hostname"}

// BrokenOut reports whether a port object is a front-panel port split into
// sub-ports by its BreakOutMode.
func BrokenOut(port Object) bool {
	_, sub, _ := ParsePortName(port.Str("IntfRef"))
	return sub == 0 && breakoutModes[port.Str("BreakOutMode")].Lanes > 1
}

// LaneSpeed is the fastest a port can run in a BreakOutMode, Mb/s (0 for
// no such mode).
func LaneSpeed(mode string) int64 { return breakoutModes[mode].Speed }

// BreakoutModeOf is the BreakOutMode that splits a port into lanes
// sub-ports of speed Mb/s, or, when none runs at that speed, the fastest
// that splits it into lanes ("" when none does).
func BreakoutModeOf(lanes int, speed int64) string {
	best := ""
	for mode, m := range breakoutModes {
		if m.Lanes != lanes {
			continue
		}
		if m.Speed == speed {
			return mode
		}
		if best == "" || m.Speed > breakoutModes[best].Speed {
			best = mode
		}
	}
	return best
}
