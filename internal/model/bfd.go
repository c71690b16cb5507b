package model

import (
	"github.com/swmgr/swmgr/internal/apierr"
)

// The BFD kinds follow FlexSwitch's (bfdObjects.go of its models): the
// same names, JSON types and defaults, so that the SDK's createBfdSession
// and createBfdSessionParam, which send every field, are accepted as they
// are. Intervals are milliseconds, as FlexSwitch's; their ranges are what
// the routing daemon's BFD (FRR's bfdd) takes: 10 ms to 60 s, a detection
// multiplier of 2 to 255.

// DefaultBfdParam is the BfdSessionParam a session or a BGP neighbour
// names by default. Without an object of that name it stands for the BFD
// daemon's own defaults (BfdDefault*).
const DefaultBfdParam = "default"

// The BFD daemon's defaults, in effect for a session whose parameters are
// DefaultBfdParam when no BfdSessionParam of that name exists (FRR's
// bfdd: 300 ms each way, 3 packets missed).
const (
	BfdDefaultInterval   = 300
	BfdDefaultMultiplier = 3
)

// bfdStates are a BFD session's states (RFC 5880 section 4.1), as
// FlexSwitch's state objects spell them.
var bfdStates = []string{"admin_down", "down", "init", "up"}

func bfdKinds() []*Kind {
	interval := func(name string, def int64, doc string) *Field {
		return &Field{Name: name, Type: Int, Default: def, Range: rng(10, 60000), Doc: doc}
	}
	return []*Kind{
		{
			Name: "BfdGlobal", Class: Config, Singleton: true,
			Doc: "BFD on the switch. Enable false removes every BFD session (BfdSession objects and BGP neighbours' BfdEnable are kept, and run again once BFD is enabled).",
			CLI: &CLICommand{Words: []string{"bfd"}, Prompt: []string{"bfd"}},
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "Enable", Type: Bool, Default: true, CLI: "enable"},
			},
			Metrics: &Metrics{Subsystem: "bfd", Doc: "BFD", Labels: []MetricLabel{{Field: "Vrf", Label: "vrf"}}},
			StateOnly: []*Field{
				{Name: "NumTotalSessions", Type: Int, Doc: "sessions, configured and those BGP asked for", Metric: &Metric{Name: "sessions"}},
				{Name: "NumUpSessions", Type: Int, Doc: "sessions up", Metric: &Metric{Name: "sessions_up"}},
				{Name: "NumDownSessions", Type: Int, Doc: "sessions down or coming up"},
				{Name: "NumAdminDownSessions", Type: Int, Doc: "sessions shut down"},
			},
		},
		{
			Name: "BfdSessionParam", Class: Config,
			Doc: "Named BFD parameters, which BfdSession ParamName and BGPv4Neighbor BfdSessionParam name. \"default\" is named by default; without an object of that name it means the BFD daemon's defaults (300 ms, multiplier 3). A parameter set in use cannot be deleted.",
			CLI: &CLICommand{Words: []string{"bfd", "profile"}, Prompt: []string{"bfd", "profile"}},
			Fields: []*Field{
				{Name: "Name", Type: String, Key: true, Format: FormatRoutingName, Doc: "the parameters' name"},
				interval("RequiredMinRxInterval", 1000, "ms: the shortest interval between received packets the switch asks for"),
				interval("DesiredMinTxInterval", 1000, "ms: the interval between sent packets the switch would like"),
				{Name: "LocalMultiplier", Type: Int, Default: int64(3), Range: rng(2, 255), Doc: "packets missed before the session is down"},
				{Name: "RequiredMinEchoRxInterval", Type: Int, Range: rng(0, 60000), Doc: "ms; 0: no echo packets received; else 10..60000"},
				{Name: "DemandEnabled", Type: Bool, NotYet: "BFD demand mode: FRR's bfdd has none"},
				{Name: "AuthenticationEnabled", Type: Bool, NotYet: "BFD authentication: FRR's bfdd has none"},
				{Name: "AuthType", Type: String, Default: "simple", Enum: []string{"simple", "keyedmd5", "metmd5", "keyedsha1", "metsha1"}},
				{Name: "AuthKeyId", Type: Int, Default: int64(1), Range: rng(0, 255)},
				{Name: "AuthData", Type: String, Secret: Sealed, Text: TextSecret, MaxLen: 64, Doc: "the authentication key; write-only, stored encrypted (FlexSwitch's SDK sends \"snaproute\")"},
			},
			Check: func(o Object) error {
				if n := o.Int("RequiredMinEchoRxInterval"); n != 0 && n < 10 {
					return apierr.BadRequest(apierr.CodeInvalidValue, "BfdSessionParam", "RequiredMinEchoRxInterval", "RequiredMinEchoRxInterval: %d is not allowed; use 0 (no echo) or 10..60000 ms", n)
				}
				return nil
			},
		},
		{
			Name: "BfdSession", Class: Config,
			Doc: "A BFD session the switch runs on its own, with the peer at IpAddr (BGP neighbours with BfdEnable have theirs without one).",
			CLI: &CLICommand{Words: []string{"bfd", "session"}, Prompt: []string{"bfd", "session"}},
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Key: true, Format: FormatIPHost, Doc: "the peer's address"},
				{Name: "Interface", Type: String, Text: TextName, Default: "None", MaxLen: 32, Doc: "the interface the session runs on (a port or a VLAN interface); None: the one the route to IpAddr takes"},
				{Name: "Owner", Type: String, Default: "user", Enum: []string{"user"}, Doc: "who asked for the session: user (sessions of BGP are not objects)"},
				{Name: "PerLink", Type: Bool, NotYet: "per-link sessions on a LAG's members"},
				{Name: "ParamName", Type: String, Format: FormatRoutingName, Default: DefaultBfdParam, Ref: "BfdSessionParam", RefImplied: DefaultBfdParam, Doc: "the BfdSessionParam the session runs with"},
			},
		},
		{
			Name: "BfdSessionState", Class: State,
			CLI: &CLICommand{Words: []string{"bfd", "peers"},
				Brief: []string{"IpAddr:Peer", "IfName:Interface", "SessionState:State", "DesiredMinTxInterval:TxMs", "RequiredMinRxInterval:RxMs", "RemoteDiscriminator:RemoteId", "ToDownCount:Downs", "LastChange"},
				Shows: []CLIShow{{Words: []string{"bfd", "peers", "brief"}, Doc: "Every BFD session: peer, interface, state, intervals in effect, ups and downs",
					Columns: []string{"IpAddr:Peer", "IfName:Interface", "SessionState:State", "DesiredMinTxInterval:TxMs", "RequiredMinRxInterval:RxMs", "DetectionMultiplier:Mult", "ToUpCount:Ups", "ToDownCount:Downs", "LastChange:Since"}}}},
			Metrics: &Metrics{Subsystem: "bfd_session", Doc: "BFD session", Labels: []MetricLabel{{Field: "IpAddr", Label: "peer"}, {Field: "IfName", Label: "interface"}}},
			Doc:     "One BFD session: those of BfdSession objects and those BGP neighbours with BfdEnable asked for.",
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Doc: "the peer's address"},
				{Name: "IfName", Type: String, Doc: "the interface (\"\": any)"},
				{Name: "Vrf", Type: String},
				{Name: "LocalIpAddr", Type: String, Doc: "the switch's address of the session (\"\" until known)"},
				{Name: "Owner", Type: String, Doc: "user (a BfdSession) or bgp"},
				{Name: "ParamName", Type: String, Doc: "the parameters it runs with"},
				{Name: "SessionState", Type: String, Enum: bfdStates, Doc: "1 while the session is up, else 0", Metric: &Metric{Name: "up", Is: "up"}},
				{Name: "RemoteSessionState", Type: String, Doc: "the state the peer last said it was in (\"\" before it said one)"},
				{Name: "LocalDiagType", Type: String, Doc: "why the session last went down (RFC 5880 diagnostic), as the BFD daemon says it"},
				{Name: "LocalDiscriminator", Type: Int},
				{Name: "RemoteDiscriminator", Type: Int, Doc: "0 until the peer answers"},
				{Name: "DesiredMinTxInterval", Type: Int, Doc: "ms, in effect"},
				{Name: "RequiredMinRxInterval", Type: Int, Doc: "ms, in effect"},
				{Name: "DetectionMultiplier", Type: Int},
				{Name: "RemoteMinRxInterval", Type: Int, Doc: "ms, as the peer asked"},
				{Name: "RemoteMinTxInterval", Type: Int, Doc: "ms, as the peer asked"},
				{Name: "RemoteDetectionMultiplier", Type: Int},
				{Name: "ToUpCount", Type: Int, Doc: "times the session came up", Metric: &Metric{Name: "up_changes_total", Counter: true}},
				{Name: "ToDownCount", Type: Int, Doc: "times the session went down", Metric: &Metric{Name: "down_changes_total", Counter: true}},
				{Name: "LastChange", Type: String, Doc: "when the session entered its state (RFC 3339; to the second)"},
			},
		},
		{
			Name: "ResetBfdSession", Class: Action, Role: RoleOperator,
			Doc: "Takes a BFD session down and lets it come up again (its peer sees it go to AdminDown, which does not end the BGP session it protects).",
			Fields: []*Field{
				{Name: "IpAddr", Type: String, Required: true, Format: FormatIPHost, Doc: "the peer's address"},
				{Name: "IfName", Type: String, Text: TextName, MaxLen: 32, Doc: "the interface, where two sessions share the address (\"\": any)"},
			},
		},
	}
}
