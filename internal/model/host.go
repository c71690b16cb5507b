package model

// HostKinds are what the switch's Linux host tells about itself that
// OpenConfig collectors ask for: the clock and boot time, whether NTP
// keeps the clock, the CPUs' utilization, the memory, the processes, the
// temperature sensors. They
// are state-only kinds of the gNMI front end's OpenConfig origin
// (OpenConfigLeaves maps their fields), read from /proc and /sys when
// asked, not REST kinds: the REST API and its CLI, OpenAPI and Ansible
// modules do not list them (docs/gnmi.md says why).
func HostKinds() []*Kind {
	percent := func(name string) *Field {
		return &Field{Name: name, Type: Int, Doc: "percent since the previous read (since boot at the first)"}
	}
	return []*Kind{
		{
			Name: "HostSystemState", Class: State, Source: SourceService, Singleton: true,
			Doc: "The host's clock, boot time and software.",
			Fields: []*Field{
				{Name: "BootTime", Type: Int, Doc: "nanoseconds since the Unix epoch (/proc/stat btime)"},
				{Name: "CurrentDatetime", Type: String, Doc: "RFC 3339 with the offset from UTC"},
				{Name: "UpTime", Type: Int, Doc: "nanoseconds since boot (/proc/uptime)"},
				{Name: "SoftwareVersion", Type: String, Doc: "swmgr's version"},
			},
		},
		{
			Name: "HostNtpState", Class: State, Source: SourceService, Singleton: true,
			Doc: "NTP as a whole: swmgr runs chronyd with the NtpServers configured, and without one the clock is not synchronised.",
			Fields: []*Field{
				{Name: "Enabled", Type: Bool, Doc: "an NtpServer is configured"},
			},
		},
		{
			Name: "HostCpuState", Class: State, Source: SourceService,
			Doc: "One CPU's utilization (/proc/stat), and ALL for them together.",
			Fields: []*Field{
				{Name: "Index", Type: String, Doc: "ALL, or the CPU's number"},
				percent("Total"), percent("User"), percent("Kernel"), percent("Nice"), percent("Idle"),
				percent("Wait"), percent("HardwareInterrupt"), percent("SoftwareInterrupt"),
			},
		},
		{
			Name: "HostMemoryState", Class: State, Source: SourceService, Singleton: true,
			Doc: "The host's memory (/proc/meminfo), bytes.",
			Fields: []*Field{
				{Name: "Physical", Type: Int, Doc: "MemTotal"},
				{Name: "Used", Type: Int, Doc: "MemTotal less MemAvailable"},
				{Name: "Free", Type: Int, Doc: "MemAvailable"},
			},
		},
		{
			Name: "HostProcessState", Class: State, Source: SourceService,
			Doc: "One process of the host (/proc/<pid>).",
			Fields: []*Field{
				{Name: "Pid", Type: Int},
				{Name: "Name", Type: String},
				{Name: "Args", Type: StringList},
				{Name: "StartTime", Type: Int, Doc: "nanoseconds since the Unix epoch"},
				{Name: "CpuUsageUser", Type: Int, Doc: "CPU time in user mode, nanoseconds"},
				{Name: "CpuUsageSystem", Type: Int, Doc: "CPU time in the kernel, nanoseconds"},
				{Name: "CpuUtilization", Type: Int, Doc: "percent of one CPU since the previous read (since the process started at the first)"},
				{Name: "MemoryUsage", Type: Int, Doc: "resident bytes"},
				{Name: "MemoryUtilization", Type: Int, Doc: "percent of the physical memory"},
			},
		},
		{
			Name: "HostComponentState", Class: State, Source: SourceService,
			Doc: "A temperature sensor (/sys/class/hwmon); the simulated switch simulates its CPU's and its board's.",
			Fields: []*Field{
				{Name: "Name", Type: String},
				{Name: "Type", Type: String, Doc: "SENSOR, or CPU for a CPU's sensor"},
				{Name: "Description", Type: String},
				{Name: "Temperature", Type: String, Doc: "degrees Celsius, one decimal"},
				{Name: "AlarmThreshold", Type: Int, Doc: "degrees Celsius at which it alarms (hwmon's crit); 0: none given"},
			},
		},
	}
}

// NtpEnabledBy is the configuration kind of reg whose objects turn NTP on
// (HostNtpState's Enabled): swmgr runs chronyd while one exists.
func NtpEnabledBy(reg *Registry) *Kind { return reg.Lookup(Config, "NtpServer") }

// HostRegistry indexes HostKinds.
func HostRegistry() (*Registry, error) { return NewRegistry(HostKinds()...) }
