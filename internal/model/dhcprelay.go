package model

import (
	"net/netip"
	"slices"

	"github.com/swmgr/swmgr/internal/apierr"
)

// maxRelayServers bounds a relay interface's server list (SONiC and
// OpenSwitch allow 8 IPv4 servers per interface).
const maxRelayServers = 8

// dhcpRelayKinds are FlexSwitch's DHCP relay: DhcpRelayGlobal (on or off,
// the hop limit) and DhcpRelayIntf (the servers of one interface's
// clients), with the relayed counts as state.
//
// FlexSwitch keyed DhcpRelayIntf by IfIndex; swmgr keys it by the
// interface's name (IntfRef), as its other per-interface kinds are: an
// IfIndex is the kernel's number of the moment, which a configuration
// file could not carry from one switch (or one boot) to another.
func dhcpRelayKinds() []*Kind {
	return []*Kind{
		{
			Name: "DhcpRelayGlobal", Class: Config, Singleton: true,
			CLI: &CLICommand{Words: []string{"dhcp_relay"}, Prompt: []string{"dhcp_relay"}},
			Doc: "The DHCP relay agent (RFC 1542, option 82 of RFC 3046): when enabled, the DHCP requests of clients on each DhcpRelayIntf's interface are relayed to its servers. On the Linux backend with --dhcp-relay dhcrelay, Debian's dhcrelay relays them; elsewhere the simulated switch keeps the settings.",
			Fields: []*Field{
				{Name: "Vrf", Type: String, Key: true, Default: "default", Enum: []string{"default"}},
				{Name: "Enable", Type: Bool, CLI: "enable"},
				{Name: "HopCountLimit", Type: Int, Default: int64(32), Range: rng(1, 255), Doc: "requests that crossed more relays than this are dropped"},
			},
		},
		{
			Name: "DhcpRelayIntf", Class: Config,
			// EOS's and IOS's words in a port's context: each `ip
			// helper-address <server>` adds a server.
			CLI: &CLICommand{Words: []string{"ip", "helper-address"}, Prompt: []string{"ip", "helper"}, Value: "ServerIp", Parents: []string{"Port"}, Inherit: "IntfRef",
				Brief: []string{"IntfRef:Interface", "ServerIp:Servers", "Vrf:VRF", "TotalDhcpClientRx:Requests", "TotalDhcpClientTx:Answers"},
				Shows: []CLIShow{{Words: []string{"ip", "dhcp", "relay"}, Doc: "The relay interfaces: servers, VRF and the relayed counts",
					Columns: []string{"IntfRef:Interface", "Enable:Relays", "ServerIp:Servers", "Vrf:VRF", "TotalDhcpClientRx:From Clients", "TotalDhcpClientTx:To Clients", "TotalDhcpServerTx:To Servers", "TotalDhcpServerRx:From Servers"}}}},
			Doc: "DHCP relay on one interface: its clients' requests go to ServerIp, with option 82 whose circuit id names the interface the request came in on. The interface needs an IPv4 address (IPv4Intf): it is the relay's gateway address (giaddr), to which the servers answer.",
			Fields: []*Field{
				{Name: "IntfRef", Type: String, Key: true, Format: FormatIntfRef, Ref: "Port", Doc: "the clients' interface: a port, a VLAN interface (vlan10); FlexSwitch's IfIndex, by name"},
				{Name: "Enable", Type: Bool, Default: true, Doc: "relay on this interface (when DhcpRelayGlobal Enable)"},
				{Name: "ServerIp", Type: StringList, Required: true, Format: FormatIPv4Host, Doc: "the DHCP servers (1..8 unicast IPv4 addresses); each request goes to every one"},
				{Name: "Vrf", Type: String, Default: "default", Ref: "Vrf", RefImplied: "default", Format: FormatObjName, Doc: "the VRF the servers are reached in: the interface's own (IPv4Intf's Vrf), where the servers' answers to the gateway address arrive"},
			},
			Metrics:     &Metrics{Subsystem: "dhcp_relay", Labels: []MetricLabel{{Field: "IntfRef", Label: "interface"}}, Doc: "DHCP relay interface"},
			Check:       checkRelayServers,
			Constraints: []Constraint{relayOnAddressedIntf},
			StateDoc:    "The counts are the relay's since its configuration last changed: DHCP requests received from clients on the interface and answers sent to them. A server's requests and answers are DhcpRelayIntfServerState's.",
			StateOnly: []*Field{
				{Name: "TotalDrops", Type: Int, Doc: "client packets received and not relayed"},
				{Name: "TotalDhcpClientRx", Type: Int, Doc: "DHCP requests received from clients", Metric: &Metric{Name: "client_requests_total", Counter: true}},
				{Name: "TotalDhcpClientTx", Type: Int, Doc: "DHCP answers relayed to clients", Metric: &Metric{Name: "client_replies_total", Counter: true}},
				{Name: "TotalDhcpServerRx", Type: Int, Doc: "answers received from the servers (all of the interface's servers)", Metric: &Metric{Name: "server_replies_total", Counter: true}},
				{Name: "TotalDhcpServerTx", Type: Int, Doc: "requests relayed to the servers (all of the interface's servers)", Metric: &Metric{Name: "server_requests_total", Counter: true}},
			},
		},
		{
			Name: "DhcpRelayIntfServerState", Class: State, Source: SourceBackend,
			Doc: "One server of a DhcpRelayIntf and what the relay exchanged with it, since the relay's configuration last changed. Listed for every server of every DhcpRelayIntf.",
			CLI: &CLICommand{Words: []string{"dhcp_relay", "servers"},
				Brief: []string{"IntfRef:Interface", "ServerIp:Server", "Request:Requests", "Responses"}},
			Fields: []*Field{
				{Name: "IntfRef", Type: String, Key: true, Doc: "the clients' interface"},
				{Name: "ServerIp", Type: String, Key: true, Doc: "the server"},
				{Name: "Request", Type: Int, Doc: "requests relayed to the server (a server named on two interfaces counts the requests of both)"},
				{Name: "Responses", Type: Int, Doc: "answers received from the server (likewise)"},
			},
		},
		{
			Name: "DhcpRelayHostDhcpState", Class: State, Source: SourceBackend,
			Doc: "A DHCP client the relay heard on a DhcpRelayIntf's interface (by the hardware address in its requests) and what was relayed for it, since the relay's configuration last changed; a client not heard for a day is forgotten. FlexSwitch's per-message fields (offered and accepted addresses, time stamps) are not declared: dhcrelay does not report them.",
			CLI: &CLICommand{Words: []string{"dhcp_relay", "hosts"},
				Brief: []string{"MacAddr:Client", "IntfRef:Interface", "ClientRequests:Requests", "ClientResponses:Answers"}},
			Fields: []*Field{
				{Name: "MacAddr", Type: String, Key: true, Doc: "the client's hardware address (chaddr)"},
				{Name: "IntfRef", Type: String, Key: true, Doc: "the interface it was heard on"},
				{Name: "ClientRequests", Type: Int, Doc: "its requests received (each relayed to every server of the interface)"},
				{Name: "ClientResponses", Type: Int, Doc: "the servers' answers relayed to it"},
			},
		},
	}
}

// checkRelayServers: 1..8 distinct servers, none the switch's loopback
// network (a relay to itself).
func checkRelayServers(o Object) error {
	servers := o.List("ServerIp")
	if len(servers) == 0 || len(servers) > maxRelayServers {
		return apierr.BadRequest(apierr.CodeInvalidValue, "DhcpRelayIntf", "ServerIp", "ServerIp: give 1..%d DHCP servers, got %d", maxRelayServers, len(servers))
	}
	for i, s := range servers {
		if slices.Contains(servers[:i], s) {
			return apierr.BadRequest(apierr.CodeInvalidValue, "DhcpRelayIntf", "ServerIp", "ServerIp: %s is listed twice", s)
		}
		if a, err := netip.ParseAddr(s); err == nil && a.IsLoopback() {
			return apierr.BadRequest(apierr.CodeInvalidValue, "DhcpRelayIntf", "ServerIp", "ServerIp: %s is a loopback address: a DHCP server is another host, reached through an interface", s)
		}
	}
	return nil
}

// relayOnAddressedIntf: a DhcpRelayIntf's interface has an IPv4 address
// (the relay's gateway address, to which servers answer) in the VRF the
// relay reaches its servers in (a relay agent relays within one VRF: the
// answers come back to the gateway address, in the interface's VRF).
var relayOnAddressedIntf = Constraint{
	Name:  "relay-on-addressed-interface",
	Kinds: []string{"DhcpRelayIntf", "IPv4Intf"},
	Check: func(cfg View, changes []Change) error {
		var err error
		byRelay := changedKind(changes, "DhcpRelayIntf")
		eachErr := cfg.Each("DhcpRelayIntf", func(key string, o Object) bool {
			intf := o.Str("IntfRef")
			addr := cfg.Get("IPv4Intf", intf)
			switch {
			case addr == nil && byRelay:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "DhcpRelayIntf", "IntfRef", "IntfRef: %s has no IPv4 address (IPv4Intf): the relay's gateway address, to which the servers answer, is that address", intf)
			case addr == nil:
				err = apierr.Conflict(apierr.CodeReferenced, "IPv4Intf", "IPv4Intf %s: DhcpRelayIntf %s relays with this address; delete the relay first", intf, intf)
			case addr.Str("Vrf") != o.Str("Vrf") && byRelay:
				err = apierr.BadRequest(apierr.CodeInvalidValue, "DhcpRelayIntf", "Vrf", "Vrf: %s is in VRF %q, the servers in %q: a relay reaches its servers in the interface's VRF", intf, addr.Str("Vrf"), o.Str("Vrf"))
			case addr.Str("Vrf") != o.Str("Vrf"):
				err = apierr.Conflict(apierr.CodeInvalidValue, "IPv4Intf", "IPv4Intf %s: DhcpRelayIntf %s reaches its servers in VRF %q; change the relay's Vrf with the interface's", intf, intf, o.Str("Vrf"))
			}
			return err == nil
		})
		if eachErr != nil {
			return eachErr
		}
		return err
	},
}

// changedKind reports whether changes touch kind.
func changedKind(changes []Change, kind string) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Kind.Name == kind })
}
