package model

// systemKinds are FlexSwitch's readiness and version objects, read by its
// CLI, config monitor and lab tools before anything else: they poll
// state/SystemStatus until Ready and print state/SystemSwVersion in their
// banner. The service itself fills them (api.Server.HandleState), not the
// backend.
func systemKinds() []*Kind {
	return []*Kind{
		{
			Name: "SystemStatusState", Class: State, Source: SourceService, Singleton: true,
			CLI: &CLICommand{Words: []string{"systemstatus"}},
			Doc: "The service's readiness and health: Ready is false until the backend has been reconciled with the stored configuration at start. The Num*Calls counters count REST calls since start, as decimal strings as FlexSwitch sent them.",
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
