package model

import (
	"strings"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Central logins and the management services: TACACS+ (FlexSwitch's
// Tacacs and TacacsGlobal, with FlexSwitch's field names, types and
// defaults), RADIUS and the order of login methods (swmgr's: FlexSwitch
// had neither), syslog forwarding and the resolver. Who may log in is an
// admin's business: every kind here is written by admins only.

// AuthMethods are the remote login methods AAAGlobal's AuthOrder lists.
var AuthMethods = []string{"tacacs+", "radius"}

var severities = []string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// SeverityLevel is the RFC 5424 number of a syslog severity name (0
// emerg .. 7 debug), or -1.
func SeverityLevel(name string) int {
	for i, s := range severities {
		if s == name {
			return i
		}
	}
	return -1
}

func aaaKinds() []*Kind {
	return []*Kind{
		{
			Name: "TacacsGlobal", Class: Config, Singleton: true, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"tacacs", "global"}, Prompt: []string{"tacacs", "global"}},
			Doc: "Whether logins are checked against the Tacacs servers (TACACS+, RFC 8907), and how long a server may take. Enable is the string \"true\" or \"false\", as FlexSwitch had it.",
			Fields: []*Field{
				{Name: "ProfileName", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "Enable", Type: String, Default: "false", Enum: []string{"true", "false"}, Doc: "\"true\": logins are checked against the Tacacs servers (AAAGlobal's AuthOrder says where they come in the order)"},
				{Name: "Timeout", Type: Int, Default: int64(10), Range: rng(1, 60), Doc: "seconds a server may take to connect and answer before the next one is tried"},
			},
			StateOnly: []*Field{
				{Name: "OperStatus", Type: String, Doc: "UP when a server answered the last login it was asked, DOWN when none did, \"\" before any login"},
				{Name: "NumActiveSessions", Type: Int, Doc: "TACACS+ exchanges under way"},
			},
		},
		{
			Name: "Tacacs", Class: Config, Role: RoleAdmin,
			Metrics: &Metrics{Subsystem: "tacacs_server", Labels: []MetricLabel{{Field: "ServerIp", Label: "server"}}, Doc: "TACACS+ server"},
			CLI:     &CLICommand{Words: []string{"tacacs", "server"}, Prompt: []string{"tacacs", "server"}},
			Doc:     "A TACACS+ server (RFC 8907) that authenticates logins, gives the user's role (its priv-lvl: see docs/aaa.md) and receives accounting records. Servers are asked in the order they were created; the next is tried only when one does not answer.",
			Fields: []*Field{
				{Name: "ServerIp", Type: String, Key: true, Format: FormatIPHost, Doc: "the server's address"},
				{Name: "SourceIntf", Type: String, Default: "ma1", Format: FormatIfName, Doc: "the interface whose IPv4 address is the source of the connections to the server (on the Linux backend the kernel's address of that interface, on the simulated switch its IPv4Intf's), read at each connection; an interface without one: the routing table's source, and the log says why"},
				{Name: "AuthService", Type: String, Default: "ppp", Enum: []string{"login", "enable", "ppp", "arap", "pt", "rcmd", "x25", "nasi", "fwproxy"}, Doc: "the service named in the authentication and authorization requests"},
				{Name: "Secret", Type: String, Secret: Sealed, MaxLen: 256, Doc: "the shared key that obfuscates the packets (RFC 8907 section 4.5); write-only, stored encrypted"},
				{Name: "Port", Type: Int, Default: int64(49), Range: rng(1, 65535), Doc: "TCP port"},
				{Name: "PrivilegeLevel", Type: Int, Default: int64(15), Range: rng(1, 15), Doc: "the priv_lvl swmgr asks for in its requests"},
				{Name: "Debug", Type: Int, Default: int64(0), Range: rng(0, 1), Doc: "1 logs every exchange with the server (never the password or the secret)"},
			},
			StateOnly: append([]*Field{
				{Name: "ConnFailReason", Type: String, Doc: "why the last exchange with the server failed; \"\" when it answered"},
			}, serverAccountingState()...),
		},
		{
			Name: "RadiusServer", Class: Config, Role: RoleAdmin,
			Metrics: &Metrics{Subsystem: "radius_server", Labels: []MetricLabel{{Field: "ServerIp", Label: "server"}}, Doc: "RADIUS server"},
			CLI:     &CLICommand{Words: []string{"radius", "server"}, Prompt: []string{"radius", "server"}},
			Doc:     "A RADIUS server (RFC 2865; accounting RFC 2866) that authenticates logins and gives the user's role (Service-Type or Filter-Id: see docs/aaa.md). Servers are asked by Priority (lowest first, then creation order); the next is tried only when one does not answer.",
			Fields: []*Field{
				{Name: "ServerIp", Type: String, Key: true, Format: FormatIPHost, Doc: "the server's address"},
				{Name: "Port", Type: Int, Default: int64(1812), Range: rng(1, 65535), Doc: "UDP port of authentication"},
				{Name: "AcctPort", Type: Int, Default: int64(1813), Range: rng(0, 65535), Doc: "UDP port of accounting; 0 sends no accounting to this server"},
				{Name: "Secret", Type: String, Required: true, Secret: Sealed, MaxLen: 128, Doc: "the shared secret; write-only, stored encrypted"},
				{Name: "Timeout", Type: Int, Default: int64(5), Range: rng(1, 60), Doc: "seconds to wait for each answer"},
				{Name: "Retries", Type: Int, Default: int64(2), Range: rng(0, 10), Doc: "requests sent again before the server counts as not answering"},
				{Name: "Priority", Type: Int, Default: int64(1), Range: rng(1, 64), Doc: "lower is asked first"},
			},
			StateOnly: append([]*Field{
				{Name: "ConnFailReason", Type: String, Doc: "why the last exchange with the server failed; \"\" when it answered"},
			}, serverAccountingState()...),
		},
		{
			Name: "AAAGlobal", Class: Config, Singleton: true, Role: RoleAdmin,
			Metrics: &Metrics{Subsystem: "aaa", Doc: "Central AAA"},
			CLI:     &CLICommand{Words: []string{"aaa"}, Prompt: []string{"aaa"}},
			Doc:     "The order of login methods and accounting. A login is checked by the first method of AuthOrder that has a server configured (Tacacs only when TacacsGlobal Enable is \"true\"); a server's answer, yes or no, is final. The next method is tried only when no server of one answers, and the switch's local users only when no server of any method answered (logged at warning).",
			Fields: []*Field{
				{Name: "ProfileName", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "AuthOrder", Type: StringList, Default: []string{"tacacs+", "radius"}, Doc: "remote methods in the order they are tried: tacacs+, radius; local users always come last"},
				{Name: "Accounting", Type: Bool, Default: true, Doc: "send an accounting record of every commit and CLI command to the servers of AuthOrder"},
				{Name: "CacheSeconds", Type: Int, Default: int64(30), Range: rng(0, 300), Doc: "how long a remote login is trusted before the server is asked again; 0: every request; any change of the AAA configuration forgets them at once"},
			},
			Check: func(o Object) error {
				for _, m := range o.List("AuthOrder") {
					known := false
					for _, a := range AuthMethods {
						known = known || a == m
					}
					if !known {
						return apierr.BadRequest(apierr.CodeInvalidValue, "AAAGlobal", "AuthOrder", "AuthOrder: %q is not a login method; use %s (local users always come last)", m, strings.Join(AuthMethods, ", "))
					}
				}
				return nil
			},
			StateOnly: []*Field{
				{Name: "AccountingSent", Type: Int, Doc: "accounting records a server acknowledged since start", Metric: &Metric{Name: "accounting_sent_total", Counter: true}},
				{Name: "AccountingDropped", Type: Int, Doc: "accounting records dropped since start: the queue was full, every server refused them, or none answered after three attempts", Metric: &Metric{Name: "accounting_dropped_total", Counter: true}},
				{Name: "AccountingQueued", Type: Int, Doc: "records waiting to be sent", Metric: &Metric{Name: "accounting_queued"}},
				{Name: "AccountingRetrying", Type: Int, Doc: "records waiting to be sent again to a method none of whose servers answered (the records behind them do not wait for them)", Metric: &Metric{Name: "accounting_retrying"}},
				{Name: "LocalFallbacks", Type: Int, Doc: "logins checked against local users because no server answered, since start", Metric: &Metric{Name: "local_fallbacks_total", Counter: true}},
			},
		},
		{
			Name: "SyslogCollector", Class: Config, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"syslog", "collector"}, Prompt: []string{"syslog", "collector"}},
			Doc: "A syslog collector that receives swmgr's log lines, sent by swmgr itself as RFC 5424 messages (UDP: RFC 5426, one message per datagram; TCP: RFC 6587 octet counting).",
			Fields: []*Field{
				{Name: "ServerIpAddr", Type: String, Key: true, Format: FormatIPHost, Doc: "the collector's address"},
				{Name: "Port", Type: Int, Default: int64(514), Range: rng(1, 65535)},
				{Name: "Transport", Type: String, Default: "UDP", Enum: []string{"UDP", "TCP"}},
				{Name: "Severity", Type: String, Default: "info", Enum: severities, Doc: "the least severe level sent"},
				{Name: "Facility", Type: Int, Default: int64(16), Range: rng(0, 23), Doc: "RFC 5424 facility; 16 is local0"},
			},
			StateOnly: []*Field{
				{Name: "Sent", Type: Int, Doc: "messages sent since start"},
				{Name: "Dropped", Type: Int, Doc: "messages dropped since start (queue full, collector unreachable)"},
				{Name: "LastError", Type: String},
			},
		},
		{
			Name: "DNSServer", Class: Config, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"dns", "server"}, Prompt: []string{"dns", "server"}},
			Doc: "A name server the switch's resolver asks, in the order created (the resolver uses the first three).",
			Fields: []*Field{
				{Name: "IPAddr", Type: String, Key: true, Format: FormatIPHost, Doc: "the server's address"},
			},
			StateOnly: []*Field{
				{Name: "InUse", Type: Bool, Doc: "the resolver configuration names it (one of the first three)"},
			},
		},
		{
			Name: "AccountCommand", Class: Action, Role: RoleReader, RecordsCommands: true, NotLogged: true,
			Doc: "Takes the accounting record of one command line a user ran in the CLI (the CLI sends one per command, shows included): it is queued for the accounting servers as every commit's record is (docs/aaa.md), naming the user who calls it (the request's, never the body's), with the values of secret words (secret, password, ...) masked. It changes nothing and is not written to the config log. At most 32 records a second per user (bursts of 256); past that 429, counted as dropped.",
			Fields: []*Field{
				{Name: "Command", Type: String, Required: true, MaxLen: 1024, Doc: "the command line as typed, secret values masked"},
				{Name: "Context", Type: String, MaxLen: 512, Doc: "the mode and context it ran in, as the CLI's `where` says (enable config interface fpPort1)"},
				{Name: "Session", Type: String, MaxLen: 64, Doc: "the CLI session's id (letters, digits, - and _): the records of one session share it"},
				{Name: "Seq", Type: Int, Default: int64(0), Range: rng(0, 1<<53), Doc: "the command's number in its session"},
			},
			Check: func(o Object) error {
				for _, r := range o.Str("Session") {
					if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
						return apierr.BadRequest(apierr.CodeInvalidValue, "AccountCommand", "Session", "Session: only letters, digits, - and _, not %q", r)
					}
				}
				return nil
			},
		},
		{
			Name: "DNSGlobal", Class: Config, Singleton: true, Role: RoleAdmin,
			CLI: &CLICommand{Words: []string{"dns", "global"}, Prompt: []string{"dns", "global"}},
			Doc: "The resolver's domain: names without a dot are looked up in it.",
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "Domain", Type: String, Format: FormatHostname, MaxLen: 253, Doc: "the search domain; \"\" for none"},
			},
			StateOnly: []*Field{
				{Name: "ResolvConf", Type: String, Text: TextLines, Doc: "the resolver configuration in effect, as written"},
			},
		},
	}
}

// serverAccountingState are the accounting counters of one Tacacs or
// RadiusServer, also exported as metrics.
func serverAccountingState() []*Field {
	return []*Field{
		{Name: "AccountingSent", Type: Int, Doc: "accounting records the server acknowledged since start", Metric: &Metric{Name: "accounting_sent_total", Counter: true}},
		{Name: "AccountingRefused", Type: Int, Doc: "accounting records the server answered with an error since start: each is not sent to it again (the next server of its method is asked)", Metric: &Metric{Name: "accounting_refused_total", Counter: true}},
		{Name: "AccountingUnanswered", Type: Int, Doc: "attempts to send the server an accounting record that it did not answer (connection refused, timed out) since start", Metric: &Metric{Name: "accounting_unanswered_total", Counter: true}},
	}
}
