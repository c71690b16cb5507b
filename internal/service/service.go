// Package service is swmgr's composition root: the one place that
// assembles the service, used by `swmgr serve`, by package testserver and
// so by every test that runs the service.
//
// Open builds the providers, binds every declared kind to them in one
// table (Table), checks it against the declarations, and wires the engine,
// its history and candidates, the configuration lifecycle and the REST
// handler over it. The engine applies through a router (backend.Router)
// over the table's drivers, with the Linux dataplane, when it is the
// dataplane, as the transactional provider whose kernel transaction holds
// each commit's other changes. The providers are:
//
//   - the dataplane: the Linux backend (the kernel of a network namespace)
//     or the simulated switch;
//   - the daemons: BGP, NTP and the host settings of SystemParam, run by
//     FRR, chronyd and the host (Linux dataplane, when chosen) or simulated;
//   - the accounts: User and UserPassword, on any dataplane, over swmgr's
//     own account files or the host's accounts;
//   - the archive scheduler: ConfigArchiveServer's driver and state;
//   - the lifecycle: SaveConfig, ResetConfig, ResetConfigToFile and
//     SystemParam's saved revision;
//   - the history and the config log: Rollback, ClearConfigLog, ConfigLog;
//   - the service's own states: SystemStatus, SystemSwVersion, IPv4Route
//     and LLDP state;
//   - central AAA (package aaa): Tacacs, TacacsGlobal, RadiusServer,
//     AAAGlobal and SyslogCollector, followed through the change feed: the
//     remote logins the front ends' verifier asks (Service.AAA), the
//     accounting of every commit, the syslog forwarder;
//   - zero-touch provisioning (package ztp): ZtpState, ZtpRearm;
//   - the intent (package intent): IntentSource, followed through the
//     change feed, DriftState, IntentFetch and CheckCompliance.
//
// A front end (REST, gNMI, and any later one) is handed the built Service:
// its Engine, History, Candidates and Lifecycle, and its Table, through
// which it runs actions and reads state-only kinds.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/swmgr/swmgr/internal/aaa"
	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/auth"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/backend/linux"
	"github.com/swmgr/swmgr/internal/backend/sim"
	"github.com/swmgr/swmgr/internal/backend/useracct"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/daemon"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/dhcrelay"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/candidates"
	"github.com/swmgr/swmgr/internal/engine/history"
	"github.com/swmgr/swmgr/internal/engine/users"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/hoststat"
	"github.com/swmgr/swmgr/internal/intent"
	"github.com/swmgr/swmgr/internal/lifecycle"
	"github.com/swmgr/swmgr/internal/lldpd"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/obs"
	"github.com/swmgr/swmgr/internal/secrets"
	"github.com/swmgr/swmgr/internal/store"
	"github.com/swmgr/swmgr/internal/ztp"
)

// The dataplanes.
const (
	Sim   = "sim"
	Linux = "linux"
)

// Options say what to assemble.
type Options struct {
	Store   *store.Store // opened and checked by the caller
	Box     *secrets.Box // the data directory's key
	DataDir string
	Version string
	Log     *slog.Logger
	// Dataplane is Sim or Linux.
	Dataplane string
	// Ports is the simulated switch's number of front-panel ports.
	Ports int
	// Linux configures the Linux dataplane.
	Linux LinuxOptions
	// Accounts are the accounts User is bound to; OwnAccounts says they
	// are swmgr's own files (useracct.Options.Own).
	Accounts    accounts.Accounts
	OwnAccounts bool
	CLIShell    string
	// Ready says whether the service is ready (SystemStatus); nil: always.
	Ready func() bool
	// Lifecycle tunes the lifecycle (tests); its Engine, Sealer, DataDir,
	// Version and Log are set by Open.
	Lifecycle lifecycle.Options
	// Observer, if set, is told of every commit and backend apply
	// (metrics).
	Observer Observer
	// Kinds are declared beside model.Builtin's, and Drivers added to the
	// dataplane's (by dataplane, then kind name): a new kind's declaration
	// and driver, in tests that add one. A kind swmgr ships is declared in
	// package model and driven by its dataplane package.
	Kinds   []*model.Kind
	Drivers map[string]map[string]*backend.Driver
	// AAAChanged is called when the central AAA configuration changed
	// (and once at start): the logins verified under the old one are to
	// be checked again (auth.Verifier.ForgetAll).
	AAAChanged func()
	// Syslog, if set, is the forwarder behind the service's log, which
	// the SyslogCollectors configure.
	Syslog *aaa.Forwarder
	// CentralAAA, if set, is given the central AAA service once it
	// started: the front doors' verifier, built before the service, asks
	// it for remote logins (and fails loudly before).
	CentralAAA *bind.Once[aaa.Service]
	// Sessions, if set, ends the REST handler's change-feed streams when
	// their user's access ends (built with the verifier, before the
	// service).
	Sessions *auth.Sessions
	// ZTP configures zero-touch provisioning (the zero value: disabled;
	// its ZtpState says so); the caller starts it (Service.ZTP.Start)
	// once the switch's own first commits are made.
	ZTP ztp.Options
}

// LinuxOptions configure the Linux dataplane and its daemons.
type LinuxOptions struct {
	Netns string // the switch's network namespace ("" for swmgr's own)
	// PortMap is the port map file's content (nil: the default map),
	// PortMapName its name for messages.
	PortMap     []byte
	PortMapName string
	// FRRDir, when set, runs BGP in FRR with its files there; else BGP is
	// simulated.
	FRRDir string
	// ChronyDir, when set, runs NTP in chronyd with its files there
	// (ChronyNoClock: it never sets the clock); else NTP is simulated.
	ChronyDir     string
	ChronyNoClock bool
	// EtcDir, when set, applies the host settings (host name, time zone,
	// the resolver of DNSServer and DNSGlobal) to the files there; else
	// they are simulated.
	EtcDir string
	// LLDPDir, when set, runs LLDP in lldpd with its socket and log
	// there; else LLDP is simulated.
	LLDPDir string
	// ControlPlanePorts are the TCP ports of swmgr's listeners by
	// ControlPlaneAclRule Service (HTTPS, GNMI).
	ControlPlanePorts map[string]int
	// DHCPRelayDir, when set, runs DHCP relay in dhcrelay with its logs
	// there; else DHCP relay is simulated.
	DHCPRelayDir string
}

func (l LinuxOptions) options() linux.Options {
	lo := linux.Options{Kernel: linux.KernelOptions{Netns: l.Netns}, PortMap: l.PortMap, PortMapName: l.PortMapName, ControlPlanePorts: l.ControlPlanePorts}
	if l.FRRDir != "" {
		lo.FRR = &frr.Options{Dir: l.FRRDir}
	}
	if l.ChronyDir != "" {
		lo.Chrony = &chrony.Options{Dir: l.ChronyDir, NoClock: l.ChronyNoClock}
	}
	if l.EtcDir != "" {
		lo.System = &linux.SystemOptions{EtcDir: l.EtcDir}
	}
	if l.LLDPDir != "" {
		lo.LLDP = &lldpd.Options{Dir: l.LLDPDir}
	}
	if l.DHCPRelayDir != "" {
		lo.DHCPRelay = &dhcrelay.Options{Dir: l.DHCPRelayDir}
	}
	return lo
}

// Observer watches the engine (obs.Metrics is one).
type Observer interface {
	ObserveCommit(took time.Duration, changes int, err error)
	ObserveApply(took time.Duration, err error)
}

// Service is the assembled swmgr.
type Service struct {
	Engine     *engine.Engine
	History    *history.History
	Candidates *candidates.Staging
	Lifecycle  *lifecycle.Lifecycle
	Handler    *api.Server
	// AAA checks logins with the central servers (auth's remote
	// provider) and accounts every commit.
	AAA *aaa.Service
	// ZTP is zero-touch provisioning.
	ZTP *ztp.Service
	// Intent follows the intended configuration (IntentSource), computes
	// the drift from it and answers CheckCompliance.
	Intent *intent.Service
	// Table is every kind's bindings: the switchboard every front door
	// reads.
	Table *bind.Table
	// Accounts are the accounts provider's.
	Accounts accounts.Accounts
	// Backend is the dataplane's name.
	Backend string
	// Daemons reports the daemons the Linux dataplane supervises (FRR's,
	// chronyd); nil when none run.
	Daemons func() []daemon.Status
	// ExecIn is the command prefix that runs a program in a VRF of the
	// Linux dataplane ("default": its namespace), as the kernel holds the
	// VRF; nil on the simulated dataplane.
	ExecIn func(vrf string) ([]string, error)

	router  *backend.Router
	dataDir string
	// reconciled carries what the Linux dataplane's reconciliations put
	// back to logReconciles, which Close stops (stop, then logged).
	reconciled   chan []string
	stop, logged chan struct{}
	// feedStop ends the poller of the FeedPolled state kinds, which
	// closes feedPolled when it has.
	feedStop, feedPolled chan struct{}
}

// Open assembles the service on o and starts the engine, its history and
// candidates; the caller loads a startup configuration if it wants one,
// then starts the lifecycle (Lifecycle.Start) and serves. Close releases
// everything Open made.
//
// The table is bound in two steps: first the providers the engine applies
// through (the dataplane, the daemons, the accounts' User driver, the
// archive scheduler's and central AAA's config), whose composed drivers
// the engine takes; then those built on the engine (the lifecycle, the
// history, the config log, the accounts' UserPassword, central AAA's
// service, the service's own states), which add actions, sources and
// shares of state. Sealing checks it; the front doors read it.
func Open(ctx context.Context, o Options) (*Service, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	reg := model.Builtin()
	if len(o.Kinds) > 0 {
		var err error
		if reg, err = model.NewRegistry(append(reg.Kinds(), o.Kinds...)...); err != nil {
			return nil, err
		}
	}
	extra := o.Drivers[o.Dataplane]
	t := bind.NewTable(reg)
	states := &stateFeed{reg: reg}
	simulated := sim.New(sim.Options{Ports: o.Ports, Version: o.Version, Model: reg, OnStateChange: states.publish})
	accts := useracct.New(useracct.Options{Accounts: o.Accounts, Own: o.OwnAccounts, CLIShell: o.CLIShell})
	s := &Service{Table: t, Accounts: o.Accounts, Backend: o.Dataplane, dataDir: o.DataDir}
	calls := &obs.Calls{}
	st := &serviceStatus{started: time.Now(), version: o.Version, ready: o.Ready, backend: o.Dataplane, calls: calls,
		proc: "/proc", cpus: hoststat.NewCPUSampler("/proc", time.Second)}
	if st.ready == nil {
		st.ready = func() bool { return true }
	}
	var providers []bind.Provider
	var sourceAddr aaa.SourceAddrFunc // the address of an interface, as the dataplane knows it
	// The router applies a commit through the table's drivers; on Linux
	// the kernel's transaction goes first and the other providers' changes
	// are applied before it commits (backend.Router).
	var transactional backend.Transactional
	release := func() error { return nil }
	switch o.Dataplane {
	case Sim:
		providers = []bind.Provider{sim.Part{Of: sim.DaemonsProvider, Drivers: simulated.DaemonDrivers(), Actions: simulated.DaemonActions()}, accts, lifecycle.Archive(), aaa.Config(), intent.Config(),
			sim.Part{Of: sim.DataplaneProvider, Drivers: withExtra(simulated.Dataplane(), extra), Actions: simulated.DataplaneActions()}}
		sourceAddr = simulated.SourceAddr
		st.routes = simulated.Routes
	case Linux:
		lo := o.Linux.options()
		lo.Version, lo.Log, lo.Model = o.Version, o.Log, reg
		lo.Journal = filepath.Join(o.DataDir, datadir.LinuxJournal)
		// What a reconciliation puts back goes to the config log as an
		// entry of its own (API "reconcile"), through the engine's writer
		// once it runs.
		reconciled := make(chan []string, 16)
		lo.OnReconcile = func(changes []string) {
			select {
			case reconciled <- changes:
			default:
				o.Log.Warn("config log entry of a reconciliation dropped: too many at once")
			}
		}
		lo.OnStateChange = states.publish
		lin, err := linux.New(lo)
		if err != nil {
			return nil, fmt.Errorf("--backend linux: %w", err)
		}
		// The kinds the kernel has no part in are the simulated
		// dataplane's, kept and not run, and the daemons not run (no
		// --bgp, --ntp, --system, --lldp, --dhcp-relay) the simulated ones.
		// Each Linux part is bound after its simulated one, so that its
		// share of a kind's state says last (SystemParam: the kernel and
		// the up time over the simulated host settings', the host's
		// settings and up time over the kernel's).
		dataplane, daemons := lin.Dataplane(), lin.DaemonDrivers()
		dataplaneActions, daemonActions := lin.DataplaneActions(), lin.DaemonActions()
		providers = []bind.Provider{sim.Part{Of: sim.DataplaneProvider, Drivers: backend.Without(simulated.Dataplane(), dataplane), Actions: backend.Without(simulated.DataplaneActions(), dataplaneActions)},
			sim.Part{Of: sim.DaemonsProvider, Drivers: backend.Without(simulated.DaemonDrivers(), daemons), Actions: backend.Without(simulated.DaemonActions(), daemonActions)},
			linux.Part{Of: linux.DataplaneProvider, Drivers: withExtra(dataplane, extra), Actions: dataplaneActions}, linux.Part{Of: linux.DaemonsProvider, Drivers: daemons, Actions: daemonActions},
			accts, lifecycle.Archive(), aaa.Config(), intent.Config()}
		transactional, release = lin, lin.Close
		sourceAddr = lin.SourceAddr
		st.routes, st.daemons = lin.RouteTable, lin.Daemons
		st.learned = map[string]func(context.Context, []model.Object) ([]model.Object, error){"LLDPIntfState": lin.LLDPNeighbors}
		s.Daemons, s.ExecIn = lin.Daemons, lin.ExecIn
		s.reconciled = reconciled
		// In-band provisioning runs DHCP on the port map's netdevs.
		pm := lin.Ports()
		o.ZTP.InBand = ztp.InBand{Netns: lo.Kernel.Netns, Netdevs: func() []string {
			var devs []string
			for _, port := range pm.Ports() {
				devs = append(devs, pm.Netdev(port))
			}
			return devs
		}}
	default:
		return nil, fmt.Errorf("dataplane %q: use %s or %s", o.Dataplane, Sim, Linux)
	}
	if err := t.Bind(providers...); err != nil {
		return nil, errors.Join(err, release())
	}
	s.router = backend.NewRouter(o.Dataplane, t.Drivers(), transactional, release)
	eng := engine.New(reg, o.Store, s.router, o.Box, o.Log)
	if o.Observer != nil {
		eng.ObserveCommits(o.Observer.ObserveCommit)
		eng.ObserveApplies(o.Observer.ObserveApply)
	}
	lo := o.Lifecycle
	lo.Engine, lo.Sealer, lo.DataDir, lo.Version, lo.Log = eng, o.Box, o.DataDir, o.Version, o.Log
	lc, err := lifecycle.New(lo)
	if err != nil {
		eng.Close()
		return nil, errors.Join(err, s.router.Close())
	}
	fail := func(err error) (*Service, error) {
		lc.Close()
		eng.Close()
		return nil, errors.Join(fmt.Errorf("start: %w", err), s.router.Close())
	}
	hist, cands := history.New(eng), candidates.New(eng)
	st.eng = eng
	states.broker.Store(eng.Feed())
	s.AAA = aaa.New(aaa.Options{Source: eng, Log: o.Log, OnChange: o.AAAChanged, Syslog: o.Syslog, SourceAddr: sourceAddr, Instance: o.Box.Tag("aaa accounting"),
		LocalUser: func(ctx context.Context, name string) bool {
			ok, err := users.Exists(ctx, o.Store, name)
			return ok && err == nil
		}})
	s.ZTP = ztp.New(o.ZTP, eng, hist, lc, o.DataDir, o.Log)
	s.Intent = intent.New(intent.Options{Engine: eng, Lifecycle: lc, History: hist, Log: o.Log, DataDir: o.DataDir})
	if err := t.Bind(lc, hist, eng.ConfigLog(), users.Actions(eng, o.Accounts), s.AAA.Provider(reg), st, s.ZTP, s.Intent.Provider()); err != nil {
		return fail(err)
	}
	if err := t.Seal(); err != nil {
		return fail(err)
	}
	h := api.New(api.Options{Engine: eng, History: hist, Candidates: cands, Table: t, Calls: calls, Sessions: o.Sessions, Log: o.Log})
	for _, start := range []func(context.Context) error{eng.Start, cands.Start, hist.Start, s.AAA.Start, s.Intent.Start} {
		if err := start(ctx); err != nil {
			return fail(err)
		}
	}
	if o.CentralAAA != nil {
		o.CentralAAA.Set(s.AAA)
	}
	s.Engine, s.History, s.Candidates, s.Lifecycle, s.Handler = eng, hist, cands, lc, h
	if s.reconciled != nil {
		s.stop, s.logged = make(chan struct{}), make(chan struct{})
		go s.logReconciles(o.Log)
	}
	s.feedStop, s.feedPolled = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.feedPolled)
		states.pollForFeed(t.StateObjects, s.feedStop, feedPollEvery)
	}()
	return s, nil
}

// withExtra is ds with extra's drivers added.
func withExtra(ds, extra map[string]*backend.Driver) map[string]*backend.Driver {
	maps.Copy(ds, extra)
	return ds
}

// logReconciles writes what the Linux dataplane's reconciliations put back
// to the config log, one entry each, until Close stops it.
func (s *Service) logReconciles(log *slog.Logger) {
	defer close(s.logged)
	for {
		var c []string
		select {
		case c = <-s.reconciled:
		case <-s.stop:
			return
		}
		data := strings.Join(c, "; ")
		if len(data) > 2000 {
			data = data[:2000] + "..."
		}
		req := engine.Request{Meta: engine.Meta{Source: "reconcile", Comment: "the kernel differed from the configuration"},
			Log: &engine.LogInfo{API: "reconcile", Operation: "RECONCILE", Data: data}}
		if _, err := s.Engine.Commit(context.Background(), req); err != nil {
			log.Warn("config log entry of a reconciliation", "err", err)
		}
	}
}

// Close stops the lifecycle, the engine and the dataplane, in that order.
// The store is the caller's.
func (s *Service) Close() error {
	close(s.feedStop)
	<-s.feedPolled
	s.ZTP.Close()
	s.Intent.Close()
	s.AAA.Close()
	s.Lifecycle.Close()
	if s.stop != nil {
		close(s.stop)
		<-s.logged
	}
	s.Engine.Close()
	return s.router.Close()
}
