// Package sim is a simulated switch: the default backend, needing no root.
//
// It behaves like a small fixed-configuration switch with N 40G front-panel
// ports that can be broken out. It keeps the applied configuration in memory
// (the engine replays the stored configuration into it at every start),
// enforces the limits real hardware has (supported speeds, lane speeds of a
// breakout, four mirror sessions), and derives operational state from the
// applied configuration: a port's OperState follows its AdminState, its
// counters grow while it is up, and so on.
package sim

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/useracct"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/resolvconf"
)

// MaxSpanSessions is how many mirror sessions the simulated ASIC has.
const MaxSpanSessions = 4

var supportedSpeeds = map[int64]bool{1000: true, 10000: true, 25000: true, 40000: true, 50000: true, 100000: true}

// Options configure a simulated switch.
type Options struct {
	Ports   int    // front-panel ports, fpPort1..fpPort<Ports>
	Version string // reported as SwVersion
	// Fault, if set, is called before each change is applied; an error it
	// returns fails the change as a hardware error would. Tests use it.
	Fault func(backend.Change) error
	// Accounts, if set, are the switch's user accounts, which User objects
	// are applied to (see users.go). Without them users are only recorded.
	Accounts accounts.Accounts
	// OwnAccounts says the accounts belong to the simulated switch alone
	// (account files in its data directory): an account that a new User
	// finds already there is a leftover of a removed store, and is
	// replaced. Never set it for the host's accounts.
	OwnAccounts bool
	// CLIShell is the login shell of a User whose DefaultShell is CLI.
	CLIShell string
	// Model is the registry whose interface kinds name the interfaces
	// (model.Interface); nil: model.Builtin().
	Model *model.Registry
	// OnStateChange is told of a port whose link went up or down (its
	// AdminState applied), as the port's state form; nil: nobody is.
	OnStateChange func(kind string, o model.Object)
}

type portState struct {
	ifIndex            int64
	mac                string
	operUp             bool
	upSince            time.Time
	numUp, numDown     int64
	lastUp, lastDown   string
	inOctets, outOctet int64 // accumulated while up, before upSince
}

// Sim is a simulated switch.
type Sim struct {
	opts    Options
	started time.Time

	mu      sync.Mutex
	applied map[string]map[string]model.Object // kind -> key -> object
	ports   map[string]*portState
	times   map[string]*objectTimes     // kind NUL key -> when the object was created and last changed
	kinds   map[string]*model.Kind      // the kinds of the changes applied, by name
	logical map[string]int64            // LogicalIntf name -> its interface id (the low bits of its IfIndex)
	users   *useracct.Provider          // Options.Accounts, for Drivers
	dns     resolvconf.Config           // the resolver configuration the switch would use
	intfs   backend.Interfaces[simIntf] // the interfaces of Options.Model (interfaces.go); used under mu
}

// New makes a simulated switch.
func New(opts Options) *Sim {
	if opts.Ports <= 0 {
		opts.Ports = 32
	}
	if opts.Model == nil {
		opts.Model = model.Builtin()
	}
	s := &Sim{opts: opts, started: time.Now(), applied: map[string]map[string]model.Object{}, ports: map[string]*portState{}, times: map[string]*objectTimes{}, kinds: map[string]*model.Kind{}, logical: map[string]int64{},
		users: useracct.New(useracct.Options{Accounts: opts.Accounts, Own: opts.OwnAccounts, CLIShell: opts.CLIShell, Fault: opts.Fault})}
	s.intfs = backend.Interfaces[simIntf]{Model: opts.Model, ByKind: s.interfaceKinds()}
	return s
}

// tracked are the kinds whose applied objects the simulated hardware needs
// to remember: ports, the mirror sessions and VLANs it carries, the local
// AS, and the interfaces and static routes of its routing table.
var tracked = map[string]bool{"Port": true, "LaPortChannel": true, "Span": true, "BGPGlobal": true, "Vlan": true, "IPv4Intf": true, "IPv4Route": true, "IPv6Intf": true, "IPv6Route": true,
	"BGPv4Neighbor": true, "BGPv6Neighbor": true, "BGPv4PeerGroup": true, "VxlanEndpoint": true, "VxlanInstance": true, "EvpnL3Vni": true,
	"Acl": true, "AclRule": true, "BfdGlobal": true, "BfdSessionParam": true, "BfdSession": true, "DhcpRelayIntf": true,
	"IPv4Unnumbered": true}

// Name implements backend.Backend.
func (s *Sim) Name() string { return "sim" }

// Close implements backend.Backend.
func (s *Sim) Close() error { return nil }

func mac(port, sub int) string {
	return fmt.Sprintf("02:00:5e:%02x:%02x:%02x", port>>8, port&0xff, sub)
}

// Drivers implements backend.Backend: the whole simulated switch, for
// tests and tools that drive it alone: its dataplane and daemons, the
// accounts of Options.Accounts (or Users only recorded), and archive
// servers only recorded. swmgr itself binds the dataplane and the daemons
// beside the other providers (package service).
func (s *Sim) Drivers() map[string]*backend.Driver {
	ds := s.Dataplane()
	for name, d := range s.DaemonDrivers() {
		ds[name] = merge(ds[name], d)
	}
	for name, d := range s.users.Drivers() {
		ds[name] = d
	}
	// Kinds no part of the simulated switch drives (archive servers) are
	// only recorded.
	for _, k := range model.Builtin().Kinds() {
		if k.Class == model.Config && ds[k.Name] == nil {
			ds[k.Name] = &backend.Driver{Apply: s.record}
		}
	}
	return ds
}

// merge is a driver with a's fields, and b's where a has none.
func merge(a, b *backend.Driver) *backend.Driver {
	if a == nil {
		return b
	}
	m := *a
	if m.Apply == nil {
		m.Apply, m.Check, m.Replay = b.Apply, b.Check, b.Replay
	}
	if m.Discover == nil {
		m.Discover = b.Discover
	}
	if m.State == nil {
		m.State = b.State
	}
	return &m
}

// Dataplane returns the drivers of the simulated dataplane: ports, VLANs,
// VRFs, addresses, routes, loopbacks, LLDP, mirror sessions, and what the
// switch says of itself (SystemParam's discovery and state). Kinds the
// simulated hardware does nothing with are only recorded.
func (s *Sim) Dataplane() map[string]*backend.Driver {
	record := func() *backend.Driver { return &backend.Driver{Apply: s.record} }
	ds := map[string]*backend.Driver{
		"SystemParam": {Discover: s.discoverSystem},
		"Port":        {Check: s.checkPort, Apply: s.applyPort, Discover: s.discoverPorts, State: s.portState, Replay: true},
		"Vlan":        {Apply: s.record, State: s.vlanState, Replay: true},
		// A LAG and its members' LACP state (lag.go).
		"LaPortChannel":                 {Check: checkLAG, Apply: s.record, State: s.lagState, Replay: true},
		"LaPortChannelIntfRefListState": {List: s.lagMembers},
		"Vrf":                           record(),
		"IPv4Intf":                      {Apply: s.record, State: s.ipv4State, Replay: true},
		"IPv4Route":                     {Apply: s.record, Replay: true},
		"IPv6Intf":                      {Apply: s.record, State: s.ipv6State, Replay: true},
		"IPv6Route":                     {Apply: s.record, Replay: true},
		// The IPv6 routing table; no neighbour answers the simulated
		// switch, so its neighbour tables are empty.
		"IPv6RouteState": {List: s.RoutesV6},
		"NDPEntryState":  {List: noNeighbors},
		"ArpEntryState":  {List: noNeighbors},
		// No frame crosses the simulated switch: it learns no address.
		"MacTableEntryState": {List: noNeighbors},
		"LogicalIntf":        {Apply: s.record, Replay: true}, // its interface id (IfIndex) is given again at start
		"Span":               {Check: checkSpan, Apply: s.record, Replay: true},
	}
	maps.Copy(ds, s.vxlanDrivers())      // evpn.go
	maps.Copy(ds, s.aclDrivers())        // acl.go
	maps.Copy(ds, s.unnumberedDrivers()) // unnumbered.go
	maps.Copy(ds, s.ndpDrivers())        // ndp.go
	for _, name := range compatStateKinds {
		if ds[name] != nil {
			s.withCompatState(name, ds[name])
		}
	}
	return ds
}

// DaemonDrivers returns the drivers of the simulated daemons: BGP, NTP,
// LLDP and DHCP relay settings, the host settings of SystemParam and the resolver (DNSServer,
// DNSGlobal), kept and given a plausible state, with nothing run.
func (s *Sim) DaemonDrivers() map[string]*backend.Driver {
	ds := map[string]*backend.Driver{
		"SystemParam":    {Apply: s.record, State: s.systemState},
		"BGPGlobal":      {Apply: s.record, State: s.bgpGlobalState, Replay: true},
		"BGPVrf":         {Apply: s.record},
		"BGPv4PeerGroup": {Apply: s.record},
		"BGPv4Neighbor":  {Apply: s.record, State: s.bgpNeighborState},
		// BGP over IPv6, the aggregates, BGP's tables (bgp6.go).
		"BGPv6PeerGroup":  {Apply: s.record},
		"BGPv6Neighbor":   {Apply: s.record, State: s.bgpNeighborState},
		"BGPv4Aggregate":  {Apply: s.record},
		"BGPv6Aggregate":  {Apply: s.record},
		"BGPv4RouteState": {List: noNeighbors},
		"BGPv6RouteState": {List: noNeighbors},
		"NtpServer":       {Apply: s.record, State: ntpState},
		"DNSServer":       {Apply: s.applyDNSServer, State: s.dnsServerState, Replay: true},
		"DNSGlobal":       {Apply: s.applyDNSGlobal, State: s.dnsGlobalState, Replay: true},
		// LLDP's settings, kept with no agent run: no neighbor.
		"LLDPGlobal": {Apply: s.record},
		"LLDPIntf":   {Apply: s.record},
		// Routing policy, kept (the model's checks and constraints are
		// what the Linux backend's FRR would refuse).
		"PolicyPrefixSet":  {Apply: s.record},
		"PolicyCondition":  {Apply: s.record},
		"PolicyStmt":       {Apply: s.record},
		"PolicyDefinition": {Apply: s.record},
		// The DHCP relay's settings, kept with no relay run.
		"DhcpRelayGlobal":          {Apply: s.record},
		"DhcpRelayIntf":            {Apply: s.record, Replay: true},
		"DhcpRelayIntfServerState": {List: s.relayServers},
		// No client sends the simulated switch a request.
		"DhcpRelayHostDhcpState": {List: noNeighbors},
	}
	maps.Copy(ds, s.evpnDrivers()) // evpn.go
	maps.Copy(ds, s.bfdDrivers())  // bfd.go
	for _, name := range compatStateKinds {
		if ds[name] != nil {
			s.withCompatState(name, ds[name])
		}
	}
	return ds
}

// withCompatState makes d's State also give FlexSwitch's fields of the
// kind (compat.go).
func (s *Sim) withCompatState(name string, d *backend.Driver) {
	state := d.State
	d.State = func(ctx context.Context, o model.Object) (model.Object, error) {
		st := model.Object{}
		if state != nil {
			got, err := state(ctx, o)
			if err != nil {
				return nil, err
			}
			if got != nil {
				st = got
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		kind := s.kinds[name] // the model's, known once an object was applied
		if kind == nil {
			kind = &model.Kind{Name: name}
		}
		s.fillCompatState(kind, o, st)
		return st, nil
	}
}

// Discover returns what the switch has by itself, by kind name: its
// front-panel ports and the read-only fields of SystemParam.
func (s *Sim) Discover(ctx context.Context) (map[string][]model.Object, error) {
	ports, _ := s.discoverPorts(ctx)
	sys, _ := s.discoverSystem(ctx)
	return map[string][]model.Object{"Port": ports, "SystemParam": sys}, nil
}

func (s *Sim) discoverPorts(ctx context.Context) ([]model.Object, error) {
	ports := make([]model.Object, 0, s.opts.Ports)
	for i := 1; i <= s.opts.Ports; i++ {
		ports = append(ports, model.Object{
			"IntfRef":   fmt.Sprintf("fpPort%d", i),
			"IfIndex":   int64(i),
			"MacAddr":   mac(i, 0),
			"Speed":     int64(40000),
			"MediaType": "QSFP+",
		})
	}
	return ports, nil
}

func (s *Sim) discoverSystem(ctx context.Context) ([]model.Object, error) {
	return []model.Object{{"SwVersion": s.opts.Version, "SwitchMac": mac(0, 0)}}, nil
}

// Apply applies changes in order, all or nothing, each checked first
// against the switch's applied configuration: the whole of a backend, for
// tests and tools that drive the simulated switch without an engine.
func (s *Sim) Apply(ctx context.Context, changes []backend.Change) error {
	ds := s.Drivers()
	for i, c := range changes {
		if d := ds[c.Kind.Name]; d != nil && d.Check != nil && c.Op != backend.Delete {
			if err := d.Check(s.appliedView(c), c); err != nil {
				for j := i - 1; j >= 0; j-- {
					backend.Revert(ctx, ds, changes[j])
				}
				return err
			}
		}
		if err := backend.ApplyCommit(ctx, ds, &backend.Commit{Changes: []backend.Change{c}}); err != nil {
			for j := i - 1; j >= 0; j-- {
				if uerr := backend.Revert(ctx, ds, changes[j]); uerr != nil {
					return fmt.Errorf("sim: undo after %v failed: %w", err, uerr)
				}
			}
			return err
		}
	}
	return nil
}

// State returns the operational fields of obj's state form.
func (s *Sim) State(ctx context.Context, kind *model.Kind, obj model.Object) (model.Object, error) {
	d := s.Drivers()[kind.Name]
	if d == nil || d.State == nil {
		return model.Object{}, nil
	}
	return d.State(ctx, obj)
}

// appliedView is the applied configuration with c applied on top.
func (s *Sim) appliedView(c backend.Change) model.View {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := appliedView{}
	for kind, byKey := range s.applied {
		v[kind] = map[string]model.Object{}
		for k, o := range byKey {
			v[kind][k] = o
		}
	}
	if v[c.Kind.Name] == nil {
		v[c.Kind.Name] = map[string]model.Object{}
	}
	if c.Op == backend.Delete {
		delete(v[c.Kind.Name], c.Key)
	} else {
		v[c.Kind.Name][c.Key] = c.After
	}
	return v
}

type appliedView map[string]map[string]model.Object

func (v appliedView) Get(kind, key string) model.Object { return v[kind][key] }

func (v appliedView) Each(kind string, fn func(string, model.Object) bool) error {
	for k, o := range v[kind] {
		if !fn(k, o) {
			break
		}
	}
	return nil
}

func (s *Sim) fault(c backend.Change) error {
	if s.opts.Fault != nil {
		return s.opts.Fault(c)
	}
	return nil
}

// record remembers a change of a tracked kind; other kinds have no effect
// on the simulated hardware.
func (s *Sim) record(ctx context.Context, c backend.Change) (model.Object, error) {
	if err := s.fault(c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remember(c, nil)
	return nil, nil
}

// remember keeps c's object (with the fields the switch filled) if its kind
// is tracked. Called with s.mu held.
func (s *Sim) remember(c backend.Change, filled model.Object) {
	s.noteChange(c)
	if !tracked[c.Kind.Name] {
		return
	}
	byKey := s.applied[c.Kind.Name]
	if byKey == nil {
		byKey = map[string]model.Object{}
		s.applied[c.Kind.Name] = byKey
	}
	if c.Op == backend.Delete {
		delete(byKey, c.Key)
		return
	}
	o := c.After.Clone()
	for n, v := range filled {
		o[n] = v
	}
	byKey[c.Key] = o
}

func refused(status int, kind, field, format string, args ...any) error {
	return apierr.New(status, apierr.CodeBackend, kind, field, "the switch refused: "+format, args...)
}

// checkPort enforces what the simulated ports can do, on the resulting
// configuration: ports that exist, supported speeds, lane speeds, and
// sub-ports that follow their port's breakout.
func (s *Sim) checkPort(cfg model.View, c backend.Change) error {
	o := c.After
	name := o.Str("IntfRef")
	n, sub, _ := model.ParsePortName(name)
	if n > s.opts.Ports {
		return refused(http.StatusBadRequest, "Port", "IntfRef", "%s does not exist; this switch has fpPort1..fpPort%d", name, s.opts.Ports)
	}
	speed := o.Int("Speed")
	if !supportedSpeeds[speed] {
		return refused(http.StatusBadRequest, "Port", "Speed", "Speed %d is not supported; use 1000, 10000, 25000, 40000, 50000 or 100000", speed)
	}
	mode := o.Str("BreakOutMode")
	if sub != 0 {
		parent := cfg.Get("Port", fmt.Sprintf("fpPort%d", n))
		if parent == nil || parent.Str("BreakOutMode") != mode {
			return refused(http.StatusBadRequest, "Port", "BreakOutMode", "%s belongs to the breakout of fpPort%d; change BreakOutMode there", name, n)
		}
	}
	if max := model.LaneSpeed(mode); (sub != 0 || strings.HasPrefix(mode, "1x")) && speed > max {
		return refused(http.StatusBadRequest, "Port", "Speed", "Speed %d is more than a %s lane can carry (%d)", speed, mode, max)
	}
	if sub == 0 {
		for i := 1; i <= 4; i++ {
			child := cfg.Get("Port", fmt.Sprintf("%ss%d", name, i))
			if child != nil && child.Str("BreakOutMode") != mode {
				return refused(http.StatusConflict, "Port", "BreakOutMode", "%s still has sub-port %ss%d", name, name, i)
			}
		}
	}
	return nil
}

// checkSpan: the ASIC has MaxSpanSessions mirror sessions.
func checkSpan(cfg model.View, c backend.Change) error {
	if c.After.Str("AdminState") != "UP" || c.Op == backend.Update && c.Before.Str("AdminState") == "UP" {
		return nil
	}
	active := 0
	cfg.Each("Span", func(_ string, sp model.Object) bool {
		if sp.Str("AdminState") == "UP" {
			active++
		}
		return true
	})
	if active > MaxSpanSessions {
		return refused(http.StatusConflict, "Span", "AdminState", "the switch has %d mirror sessions and all are in use", MaxSpanSessions)
	}
	return nil
}

// applyPort keeps the port's link state (OperState follows AdminState) and
// reports the read-only fields the hardware gives the port.
func (s *Sim) applyPort(ctx context.Context, c backend.Change) (model.Object, error) {
	if err := s.fault(c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := c.Key
	if c.Op == backend.Delete {
		delete(s.ports, name)
		s.remember(c, nil)
		return nil, nil
	}
	p := s.ports[name]
	if p == nil {
		n, sub, _ := model.ParsePortName(name)
		p = &portState{ifIndex: int64(n), mac: mac(n, 0)}
		if sub != 0 {
			p.ifIndex, p.mac = int64(1000*n+sub), mac(n, sub)
		}
		s.ports[name] = p
	}
	filled := model.Object{"IfIndex": p.ifIndex, "MacAddr": p.mac}
	now := time.Now().UTC().Round(0)
	up := c.After.Str("AdminState") == "UP"
	moved := up != p.operUp
	switch {
	case up && !p.operUp:
		p.operUp, p.upSince = true, now
		p.numUp++
		p.lastUp = now.String()
	case !up && p.operUp:
		ms := now.Sub(p.upSince).Milliseconds()
		p.inOctets += ms * 125
		p.outOctet += ms * 100
		p.operUp = false
		p.numDown++
		p.lastDown = now.String()
	}
	if moved && s.opts.OnStateChange != nil { // under s.mu, which the callback does not take
		o := c.After.Clone()
		maps.Copy(o, filled)
		maps.Copy(o, p.state(name))
		s.opts.OnStateChange("Port", o)
	}
	s.remember(c, filled)
	return filled, nil
}

func (s *Sim) portState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.ports[o.Str("IntfRef")]
	if p == nil {
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.CodeNotReady, "Port", "", "port %s is not known to the switch yet", o.Str("IntfRef"))
	}
	return p.state(o.Str("IntfRef")), nil
}

// state is the port's state fields now (the caller holds s.mu).
func (p *portState) state(name string) model.Object {
	in, out := p.inOctets, p.outOctet
	if p.operUp {
		ms := time.Since(p.upSince).Milliseconds()
		in, out = in+ms*125, out+ms*100
	}
	st := model.Object{}
	st["Name"] = name
	st["OperState"] = upDown(p.operUp)
	st["NumUpEvents"], st["NumDownEvents"] = p.numUp, p.numDown
	st["LastUpEventTime"], st["LastDownEventTime"] = p.lastUp, p.lastDown
	st["IfInOctets"], st["IfOutOctets"] = in, out
	st["IfInUcastPkts"], st["IfOutUcastPkts"] = in/500, out/500
	st["PresentInHW"] = "YES"
	return st
}

// ipv4State: an address is up while its interface is and its AdminState
// is UP.
func (s *Sim) ipv4State(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.intf(o.Str("IntfRef"))
	up := in.up && o.Str("AdminState") == "UP"
	st := model.Object{"OperState": upDown(up), "L2IntfType": in.l2Type, "L2IntfId": in.l2ID}
	if in.ifIndex != 0 {
		st["IfIndex"] = in.ifIndex
	}
	if up {
		st["NumUpEvents"] = int64(1)
	}
	if p := in.port; p != nil {
		if up {
			st["LastUpEventTime"] = p.lastUp
		}
		st["LastDownEventTime"] = p.lastDown
	}
	return st, nil
}

// ipv6State is an IPv6Intf's state: up as its interface, with the
// link-local address its MAC gives (modified EUI-64, RFC 4291) when
// LinkIp is on.
func (s *Sim) ipv6State(ctx context.Context, o model.Object) (model.Object, error) {
	st, err := s.ipv4State(ctx, o)
	if err != nil {
		return nil, err
	}
	ll := ""
	if o.Bool("LinkIp") {
		s.mu.Lock()
		in := s.intf(o.Str("IntfRef"))
		s.mu.Unlock()
		ll = linkLocal(mac(int(in.ifIndex), 0))
	}
	return model.Object{"OperState": st["OperState"], "IfIndex": st["IfIndex"], "L2IntfType": st["L2IntfType"], "L2IntfId": st["L2IntfId"], "LinkLocalIp": ll}, nil
}

// linkLocal is the fe80::/64 address of a MAC address (modified EUI-64).
func linkLocal(macAddr string) string {
	hw, err := net.ParseMAC(macAddr)
	if err != nil || len(hw) != 6 {
		return ""
	}
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15] = hw[0]^0x02, hw[1], hw[2], 0xff, 0xfe, hw[3], hw[4], hw[5]
	return netip.AddrFrom16(b).String()
}

func noNeighbors(context.Context) ([]model.Object, error) { return []model.Object{}, nil }

// vlanIfIndex is the interface index of a VLAN interface.
func vlanIfIndex(vid int64) int64 { return int64(0x10000000) + vid }

// vlanState: a VLAN is up when it is enabled and, with AutoState UP, one of
// its ports is up.
func (s *Sim) vlanState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up, why := s.vlanUp(o)
	return model.Object{"VlanName": fmt.Sprintf("vlan%d", o.Int("VlanId")), "OperState": upDown(up), "IfIndex": vlanIfIndex(o.Int("VlanId")), "SysInternalDescription": why}, nil
}

// vlanUp says whether a VLAN's interface is up, and why; the caller holds
// s.mu.
func (s *Sim) vlanUp(o model.Object) (bool, string) {
	if o.Str("AdminState") != "UP" {
		return false, "AdminState is DOWN"
	}
	if o.Str("AutoState") == "DOWN" {
		return true, "AdminState is UP; AutoState DOWN keeps the interface up without member ports"
	}
	for _, name := range append(append([]string(nil), o.List("IntfList")...), o.List("UntagIntfList")...) {
		if s.intf(name).up {
			return true, "member " + name + " is up"
		}
	}
	return false, "no member is up (AutoState UP)"
}

func (s *Sim) bgpGlobalState(ctx context.Context, o model.Object) (model.Object, error) {
	st := model.BGPGlobalInEffect(o)
	st["AS"] = o.Str("ASNum")
	return st, nil
}

func (s *Sim) bgpNeighborState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// What is in effect where the configuration says "the default": the
	// global AS, the default timers.
	st := model.BGPNeighborInEffect(o, s.applied["BGPGlobal"]["default"].Str("ASNum"))
	la, _ := model.ParseASN(st.Str("LocalAS"))
	pa, _ := model.ParseASN(o.Str("PeerAS"))
	if la != pa {
		st["PeerType"] = int64(1)
	}
	st["SessionState"] = int64(1) // Idle: a simulated switch has no peers to reach
	st["PrefixesReceived"], st["PrefixesAccepted"], st["PrefixesInstalled"], st["PrefixesAdvertised"] = int64(0), int64(0), int64(0), int64(0)
	return st, nil
}

// ntpState is a server the simulated switch cannot reach: polled at
// MinPoll, no sample yet.
func ntpState(ctx context.Context, o model.Object) (model.Object, error) {
	return model.Object{"Status": "unreachable (simulated switch)", "Stratum": int64(16), "PollSec": int64(1) << o.Int("MinPoll")}, nil
}

func (s *Sim) systemState(ctx context.Context, o model.Object) (model.Object, error) {
	return model.Object{"Distro": distro(), "Kernel": kernel(), "UpTime": time.Since(s.started).Round(time.Second).String()}, nil
}

func upDown(up bool) string {
	if up {
		return "UP"
	}
	return "DOWN"
}

func distro() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "unknown"
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return "Linux " + strings.TrimSpace(string(b))
}

// applyDNSServer adds or removes a name server of the switch's resolver
// configuration, which DNSGlobal's state shows.
func (s *Sim) applyDNSServer(ctx context.Context, c backend.Change) (model.Object, error) {
	if err := s.fault(c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remember(c, nil)
	switch c.Op {
	case backend.Create:
		s.dns.SetServer(c.After.Str("IPAddr"), true)
	case backend.Delete:
		s.dns.SetServer(c.Before.Str("IPAddr"), false)
	}
	return nil, nil
}

func (s *Sim) applyDNSGlobal(ctx context.Context, c backend.Change) (model.Object, error) {
	if err := s.fault(c); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remember(c, nil)
	if c.Op == backend.Delete {
		s.dns.Domain = ""
	} else {
		s.dns.Domain = c.After.Str("Domain")
	}
	return nil, nil
}

func (s *Sim) dnsServerState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.Object{"InUse": s.dns.InUse(o.Str("IPAddr"))}, nil
}

func (s *Sim) dnsGlobalState(ctx context.Context, o model.Object) (model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.Object{"ResolvConf": string(s.dns.Render())}, nil
}
