package linux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/dhcrelay"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/lldpd"
	"github.com/swmgr/swmgr/internal/model"
)

// Options configure the Linux backend.
type Options struct {
	Kernel KernelOptions
	// PortMap is the port map file's content; nil uses DefaultPortMap.
	PortMap     []byte
	PortMapName string // for messages
	Version     string // SwVersion
	// Journal is the apply journal's path (see journal.go); "" keeps none.
	Journal string
	// OnReconcile is told what a reconciliation put back (for the config
	// log); nil only logs.
	OnReconcile func(changes []string)
	// OnStateChange is told of a change of state the switch made on its
	// own (a BFD session going down), as the state object of kind;
	// nil only logs.
	OnStateChange func(kind string, o model.Object)
	Log           *slog.Logger
	// StateCache is how long one link dump answers port state reads
	// (default 200 ms): a GET of every port's state costs one dump.
	StateCache time.Duration
	// FRR, when set, runs BGPGlobal, BGPVrf and BGPv4Neighbor in FRR
	// (bgp.go); its Netns defaults to the switch's. Nil leaves them to
	// another provider (the service binds the simulated daemons).
	FRR *frr.Options
	// Chrony, when set, runs NtpServer in chronyd (ntp.go); its Netns
	// defaults to the switch's. Nil leaves it to another provider.
	Chrony *chrony.Options
	// System, when set, applies SystemParam's Hostname and Timezone to
	// the host (system.go). Nil leaves them to another provider.
	System *SystemOptions
	// LLDP, when set, runs LLDPGlobal and LLDPIntf in lldpd (lldp.go);
	// its Netns defaults to the switch's. Nil leaves them to another
	// provider.
	LLDP *lldpd.Options
	// DHCPRelay, when set, runs DhcpRelayGlobal and DhcpRelayIntf in
	// dhcrelay (dhcprelay.go); its Netns defaults to the switch's. Nil
	// leaves them to another provider.
	DHCPRelay *dhcrelay.Options
	// Model is the registry whose interface kinds name the interfaces
	// (model.Interface); nil: model.Builtin().
	Model *model.Registry
	// ControlPlanePorts are the TCP ports of swmgr's listeners by
	// ControlPlaneAclRule Service (HTTPS, GNMI, SSH); a service missing
	// takes DefaultControlPlanePorts's.
	ControlPlanePorts map[string]int
}

// Backend is swmgr's Linux backend: the adapter between the object model
// and the kernel layer. Each kind's mapping lives with the kind (kinds.go);
// this file holds what is common: routing changes to kinds, the check
// phase, all-or-nothing application, and state. It applies only its own
// kinds (the dataplane's and the daemons' it runs): it is the service's
// transactional provider (backend.Transactional), and the router applies
// the other providers' changes of a commit inside its kernel transaction.
type Backend struct {
	k     *Kernel
	ports *PortMap
	opts  Options
	log   *slog.Logger
	start time.Time
	intfs backend.Interfaces[netdev] // the interfaces of Options.Model as netdevs
	acl   aclRunner                  // the ACLs nftables holds (acl.go)

	mu      sync.Mutex // serialises kernel transactions (apply, reconcile)
	applied map[string]map[string]model.Object
	// applyingPorts are the Ports of the changes apply is making, by
	// IntfRef: what a change of another kind reads of a port (a member
	// leaving its LAG takes its Port's AdminState) is the commit's, not
	// the applied one, when the commit changes it too.
	applyingPorts map[string]model.Object
	// applyingAddrs are likewise the IPv4Intfs of the changes (nil: a
	// delete): the address a loopback lends to an unnumbered interface
	// made in the same commit (unnumbered.go).
	applyingAddrs map[string]model.Object
	replayed      bool // the first Apply (the engine's replay) has run
	batches       int  // batches of several commits applied in one pass
	// crashAfterKernel, set by tests, makes Apply stop after its kernel
	// changes as a kill -9 would: no rollback, the journal left behind.
	crashAfterKernel bool

	stateMu   sync.Mutex
	stateAt   time.Time
	stateDump map[string]PortState
	evMu      sync.Mutex
	events    map[string]*linkEvents

	// daemonDrivers are the kinds run by daemons or host settings
	// (bgp.go, ntp.go, system.go), present when their options are.
	daemonDrivers map[string]*driver
	bgp           *bgpRunner
	bfd           *bfdRunner
	ntp           *ntpRunner
	lldp          *lldpRunner
	relay         *relayRunner
	dns           *dnsRunner

	stop chan struct{}
	done chan struct{}
}

// driverOf is the kind's driver on this backend (nil: another provider's).
func (b *Backend) driverOf(kind string) *driver {
	if d := drivers[kind]; d != nil {
		return d
	}
	return b.daemonDrivers[kind]
}

type linkEvents struct {
	up              bool
	numUp, numDown  int64
	lastUp, lastDwn string
}

// New opens the switch's namespace, probes the kernel and resolves the
// port map (refusing unknown netdevs and duplicates).
func New(opts Options) (*Backend, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.StateCache == 0 {
		opts.StateCache = 200 * time.Millisecond
	}
	if opts.Model == nil {
		opts.Model = model.Builtin()
	}
	k, err := OpenKernel(opts.Kernel)
	if err != nil {
		return nil, err
	}
	netdevs, err := k.Netdevs()
	if err != nil {
		k.Close()
		return nil, err
	}
	devlinkPorts, err := k.DevlinkPorts()
	if err != nil {
		k.Close()
		return nil, err
	}
	split := splitParents(netdevs, devlinkPorts)
	for parent := range split {
		netdevs = append(netdevs, parent) // a split port is still a port
	}
	var pm *PortMap
	if opts.PortMap != nil {
		pm, err = ParsePortMap(opts.PortMap)
		if err == nil {
			err = pm.Check(netdevs)
		}
		if err != nil {
			k.Close()
			return nil, fmt.Errorf("port map %s: %w", opts.PortMapName, err)
		}
	} else if pm, err = DefaultPortMap(netdevs); err != nil {
		k.Close()
		return nil, fmt.Errorf("default port map: %w", err)
	}
	for parent, subs := range split {
		if port := pm.Port(parent); port != "" {
			pm.setSubports(port, subs)
		}
	}
	if pm.Len() == 0 {
		k.Close()
		return nil, fmt.Errorf("no front-panel ports: no netdev is named swp<N> or fpPort<N> in namespace %q; give a --port-map", opts.Kernel.Netns)
	}
	b := &Backend{k: k, ports: pm, opts: opts, log: opts.Log, start: time.Now(),
		applied: map[string]map[string]model.Object{}, events: map[string]*linkEvents{},
		stop: make(chan struct{}), done: make(chan struct{})}
	b.intfs = backend.Interfaces[netdev]{Model: opts.Model, ByKind: b.interfaceNetdevs()}
	b.log.Info("linux backend", "netns", opts.Kernel.Netns, "ports", pm.Len(), "kernel", k.Features().String())
	if err := k.EnableForwarding(); err != nil {
		k.Close()
		return nil, err
	}
	if err := b.startDaemons(); err != nil {
		k.Close()
		return nil, err
	}
	if err := b.watch(); err != nil {
		b.stopDaemons()
		k.Close()
		return nil, err
	}
	return b, nil
}

// Kernel is the kernel layer under the backend.
func (b *Backend) Kernel() *Kernel { return b.k }

// Ports is the port map in use.
func (b *Backend) Ports() *PortMap { return b.ports }

// Name implements backend.Backend.
func (b *Backend) Name() string { return "linux" }

// Close implements backend.Backend: it stops watching the kernel and
// leaves the kernel as it is.
func (b *Backend) Close() error {
	close(b.stop)
	<-b.done
	b.stopDaemons()
	return b.k.Close()
}

// Drivers implements backend.Backend: the backend's own drivers, its
// dataplane's and its daemons', composed as the binding table composes
// them (the other kinds are other providers').
func (b *Backend) Drivers() map[string]*backend.Driver {
	return bind.Compose(Part{Of: DataplaneProvider, Drivers: b.Dataplane()}, Part{Of: DaemonsProvider, Drivers: b.DaemonDrivers()})
}

// Dataplane returns the drivers of the kernel's kinds (kinds.go), with
// the discovery of Port and SystemParam and the kernel's share of
// SystemParam's state (the kernel, the up time). Every dataplane driver
// asks for the stored objects at each start, which is the start's
// reconciliation (each kind's ensure changes only what differs). Changes
// themselves go through ApplyTransactions: one kernel transaction per
// commit.
func (b *Backend) Dataplane() map[string]*backend.Driver {
	out := b.wrap(drivers)
	port := *out["Port"]
	port.Discover = func(ctx context.Context) ([]model.Object, error) {
		found, err := b.Discover(ctx)
		return found["Port"], err
	}
	out["Port"] = &port
	for name, list := range b.stateLists() {
		out[name] = &backend.Driver{List: list}
	}
	for name, list := range b.evpnStateLists() {
		out[name] = &backend.Driver{List: list}
	}
	out["LaPortChannelIntfRefListState"] = &backend.Driver{List: func(context.Context) ([]model.Object, error) { return b.lagMembers() }}
	out["SystemParam"] = &backend.Driver{
		Discover: func(ctx context.Context) ([]model.Object, error) {
			found, err := b.Discover(ctx)
			return found["SystemParam"], err
		},
		// The kernel's features (how VRFs, loopbacks and mirrors are made)
		// and the up time; the host settings' share (system.go), bound
		// after it, says the distribution and the host's up time.
		State: func(context.Context, model.Object) (model.Object, error) {
			return model.Object{"Kernel": b.kernelDescription(), "UpTime": time.Since(b.start).Round(time.Second).String()}, nil
		},
	}
	return out
}

// DaemonDrivers returns the drivers of the kinds run by daemons or host settings
// (bgp.go, ntp.go, system.go): those whose options were given.
func (b *Backend) DaemonDrivers() map[string]*backend.Driver {
	out := b.wrap(b.daemonDrivers)
	for name, list := range b.daemonLists() {
		out[name] = &backend.Driver{List: list}
	}
	if b.bfd != nil {
		out["BfdSessionState"] = &backend.Driver{List: b.bfdSessions}
	}
	if b.relay != nil {
		out["DhcpRelayIntfServerState"] = &backend.Driver{List: b.relayServers}
		out["DhcpRelayHostDhcpState"] = &backend.Driver{List: b.relayHosts}
	}
	return out
}

func (b *Backend) wrap(own map[string]*driver) map[string]*backend.Driver {
	out := map[string]*backend.Driver{}
	for name, d := range own {
		ld := &backend.Driver{
			Replay: true,
			Check: func(_ model.View, c backend.Change) error {
				return refusal(c.Kind.Name, d.check(b, changeOf(c)))
			},
			Apply: func(ctx context.Context, c backend.Change) (model.Object, error) {
				return nil, b.Apply(ctx, []backend.Change{c})
			},
		}
		if d.state != nil {
			state := d.state
			ld.State = func(ctx context.Context, o model.Object) (model.Object, error) { return state(b, o) }
		} else {
			ld.State = func(context.Context, model.Object) (model.Object, error) { return model.Object{}, nil }
		}
		if d.check == nil {
			ld.Check = nil
		}
		out[name] = ld
	}
	return out
}

// Owns implements backend.Transactional: the kinds of the dataplane and
// of the daemons and host settings it runs.
func (b *Backend) Owns(kind string) bool { return b.driverOf(kind) != nil }

// ApplyBatch implements backend.Batcher for the backend's own kinds:
// ApplyTransactions with nothing else in the transactions.
func (b *Backend) ApplyBatch(ctx context.Context, commits []*backend.Commit) (int, error) {
	return b.ApplyTransactions(ctx, commits, nil)
}

// ApplyTransactions implements backend.Transactional: each commit in one
// kernel transaction, in order, stopping at the first that fails; then
// (nil: nothing) is given the commits of each transaction before it
// commits. The engine's first batch is its replay of the stored
// configuration, which apply treats as the start's recovery and
// reconciliation.
//
// The apply journal holds every commit of the batch, written before the
// first: the store records the batch after the backend applied all of it,
// so a kill -9 in between must undo all of it at the next start, not only
// the last commit.
func (b *Backend) ApplyTransactions(ctx context.Context, commits []*backend.Commit, then func(ctx context.Context, first, end int) error) (int, error) {
	// inTx is then for the commits [first, end) of one transaction.
	inTx := func(first, end int) func(context.Context) error {
		if then == nil {
			return nil
		}
		return func(ctx context.Context) error { return then(ctx, first, end) }
	}
	start := 0
	b.mu.Lock()
	replayed := b.replayed
	b.mu.Unlock()
	if !replayed && len(commits) > 0 {
		// The replay recovers from the previous journal before it writes one.
		if err := b.apply(ctx, commits[0].Changes, true, inTx(0, 1)); err != nil {
			return 0, err
		}
		commits[0].Filled = make([]model.Object, len(commits[0].Changes))
		start = 1
	}
	if start == len(commits) {
		return start, nil
	}
	var all []backend.Change
	for _, c := range commits[start:] {
		all = append(all, c.Changes...)
	}
	if err := b.writeJournal(all); err != nil {
		return start, err
	}
	// The batch's commits in one pass: one kernel Tx and one configuration
	// per daemon (one FRR transaction for ten BGP commits). Should it fail,
	// the Tx has undone all of it, and the commits are applied again one by
	// one, which finds the commit that fails and applies those before it:
	// each stays all or nothing.
	if len(commits)-start > 1 {
		if err := b.apply(ctx, all, false, inTx(start, len(commits))); err == nil {
			for i := start; i < len(commits); i++ {
				commits[i].Filled = make([]model.Object, len(commits[i].Changes))
			}
			b.mu.Lock()
			b.batches++
			b.mu.Unlock()
			return len(commits), nil
		}
	}
	for i := start; i < len(commits); i++ {
		if err := b.apply(ctx, commits[i].Changes, false, inTx(i, i+1)); err != nil {
			return i, err
		}
		commits[i].Filled = make([]model.Object, len(commits[i].Changes))
	}
	return len(commits), nil
}

// OnePassBatches is how many batches of several commits were applied in
// one pass (one kernel Tx, one configuration per daemon).
func (b *Backend) OnePassBatches() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.batches
}

// Discover implements backend.Backend: the mapped ports as the kernel has
// them, and the switch MAC (the first port's).
func (b *Backend) Discover(ctx context.Context) (map[string][]model.Object, error) {
	states, err := b.k.PortStates(b.ports)
	if err != nil {
		return nil, err
	}
	var ports []model.Object
	mac := ""
	for _, p := range b.ports.Ports() {
		if n, sub, _ := model.ParsePortName(p); sub != 0 && b.ports.splitInto(fmt.Sprintf("fpPort%d", n)) > 0 {
			continue // a split port's sub-ports come from its BreakOutMode
		}
		st := states[p]
		o := model.Object{"IntfRef": p, "IfIndex": int64(st.IfIndex), "AdminState": upDownState(st.AdminUp), "Mtu": int64(st.MTU), "PresentInHW": "YES"}
		if n := b.ports.splitInto(p); n > 0 {
			o["BreakOutMode"] = b.splitMode(p, n)
			ports = append(ports, o) // its own netdev is gone while split
			continue
		}
		if st.MAC != "" {
			o["MacAddr"] = st.MAC
			if mac == "" {
				mac = st.MAC
			}
		}
		if st.Alias != "" {
			o["Description"] = st.Alias
		}
		if b.k.feat.EthtoolNetlink {
			if caps, err := b.k.Caps(st.Netdev); err == nil && caps.Speed >= 10 && caps.Speed <= 100000 {
				o["Speed"] = caps.Speed
				o["Duplex"] = map[bool]string{true: "Full_Duplex", false: "Half_Duplex"}[caps.FullDuplex]
				o["Autoneg"] = map[bool]string{true: "ON", false: "OFF"}[caps.Autoneg]
			}
		}
		ports = append(ports, o)
	}
	found := map[string][]model.Object{"Port": ports, "SystemParam": {{"SwVersion": b.opts.Version, "SwitchMac": mac}}}
	if b.daemonDrivers["SystemParam"] != nil {
		b.discoverSystem(found["SystemParam"][0])
	}
	return found, nil
}

// splitMode is the BreakOutMode of a port found split into subs.
func (b *Backend) splitMode(port string, n int) string {
	var speed int64
	if b.k.feat.EthtoolNetlink {
		if caps, err := b.k.Caps(b.ports.Netdev(port + "s1")); err == nil {
			speed = caps.Speed
		}
	}
	return model.BreakoutModeOf(n, speed)
}

func upDownState(up bool) string {
	if up {
		return "UP"
	}
	return "DOWN"
}

// refusal turns the kernel layer's refusal into the client's 400.
func refusal(kind string, err error) error {
	var r *Refusal
	if errors.As(err, &r) {
		return apierr.New(http.StatusBadRequest, apierr.CodeBackend, kind, r.Field, "the switch refused: %s", r.Msg)
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae // a daemon that does not answer: 503
	}
	return err
}

// Check is the pure check phase of a batch of changes: what the switch
// cannot do, refused before any kernel change.
func (b *Backend) Check(ctx context.Context, changes []backend.Change) error {
	for _, c := range changes {
		d := b.driverOf(c.Kind.Name)
		if d == nil || c.Op == backend.Delete {
			continue
		}
		if err := d.check(b, changeOf(c)); err != nil {
			return refusal(c.Kind.Name, err)
		}
	}
	return nil
}

// Apply checks everything, then makes every change in one kernel Tx
// (undone entirely if one fails). The changes are of the backend's own
// kinds.
func (b *Backend) Apply(ctx context.Context, changes []backend.Change) error {
	return b.apply(ctx, changes, true, nil)
}

// apply is Apply; journal false when the caller journaled the changes;
// then, if set, runs once every change is made and before the Tx commits
// (the other providers' changes of the same commits), and undoes the Tx if
// it fails.
func (b *Backend) apply(ctx context.Context, changes []backend.Change, journal bool, then func(context.Context) error) error {
	if err := b.Check(ctx, changes); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	tx := b.k.Begin()
	replay := !b.replayed
	if replay {
		b.replayed = true
		if err := b.recover(tx, changes); err != nil {
			return err
		}
	}
	if journal {
		if err := b.writeJournal(changes); err != nil {
			return err
		}
	}
	b.applyingPorts, b.applyingAddrs = map[string]model.Object{}, map[string]model.Object{}
	defer func() { b.applyingPorts, b.applyingAddrs = nil, nil }()
	for _, c := range changes {
		switch {
		case c.Kind.Name == "Port" && c.Op != backend.Delete:
			b.applyingPorts[c.Key] = c.After
		case c.Kind.Name == "IPv4Intf":
			b.applyingAddrs[c.Key] = c.After
		}
	}
	for _, c := range changes {
		d := b.driverOf(c.Kind.Name)
		var err error
		switch {
		case d == nil:
			err = fmt.Errorf("the Linux backend has no driver of %s: the router applies it through its provider", c.Kind.Name)
		case c.Op == backend.Delete:
			err = d.remove(b, tx, c.Before)
		default:
			err = d.ensure(b, tx, c.After, c.Before)
		}
		if err != nil {
			err = refusal(c.Kind.Name, fmt.Errorf("%s %s %s: %w", c.Op, c.Kind.Name, c.Key, err))
			if rerr := tx.Rollback(); rerr != nil {
				return fmt.Errorf("%w; and undoing the earlier kernel changes failed: %v", err, rerr)
			}
			return err
		}
	}
	// What the batch made takes NDPGlobal's timers (ndp.go).
	if err := b.ndpFollow(tx, changes); err != nil {
		err = refusal("NDPGlobal", err)
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("%w; and undoing the earlier kernel changes failed: %v", err, rerr)
		}
		return err
	}
	// The relay's upstream interfaces are the VRFs' routed interfaces of
	// the moment: a batch that changes the dataplane sends them again.
	if b.relay != nil && slices.ContainsFunc(changes, func(c backend.Change) bool { return drivers[c.Kind.Name] != nil }) {
		b.relayStage(tx)
	}
	// The daemons get the batch's changes of their kinds at once.
	if kind, err := tx.flush(); err != nil {
		err = refusal(kind, err)
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("%w; and undoing the earlier changes failed: %v", err, rerr)
		}
		return err
	}
	if b.crashAfterKernel {
		return errors.New("simulated crash after the kernel changes")
	}
	if then != nil {
		if err := then(ctx); err != nil {
			if rerr := tx.Rollback(); rerr != nil {
				return fmt.Errorf("%w; and undoing the kernel changes failed: %v", err, rerr)
			}
			return err
		}
	}
	tx.Commit()
	b.forgetState()
	if replay && len(tx.Changed) > 0 {
		// The start's replay repaired the kernel: a reconciliation.
		b.log.Info("start: reconciled the kernel with the stored configuration", "changes", len(tx.Changed), "what", tx.Changed)
		if b.opts.OnReconcile != nil {
			go b.opts.OnReconcile(tx.Changed) // the engine is starting: do not wait for it
		}
	}
	for _, c := range changes {
		if drivers[c.Kind.Name] == nil {
			continue
		}
		byKey := b.applied[c.Kind.Name]
		if byKey == nil {
			byKey = map[string]model.Object{}
			b.applied[c.Kind.Name] = byKey
		}
		if c.Op == backend.Delete {
			delete(byKey, c.Key)
		} else {
			byKey[c.Key] = c.After.Clone()
		}
	}
	return nil
}

// State is the state of o, an object of one of the backend's own kinds
// (empty for another's).
func (b *Backend) State(ctx context.Context, kind *model.Kind, o model.Object) (model.Object, error) {
	if d := b.driverOf(kind.Name); d != nil && d.state != nil {
		return d.state(b, o)
	}
	return model.Object{}, nil
}

// kernelDescription is the kernel's release and the features the backend
// found in it (how VRFs, loopbacks and mirrors are made).
func (b *Backend) kernelDescription() string {
	return kernelRelease() + " (" + b.k.Features().String() + ")"
}

func kernelRelease() string {
	r, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "Linux"
	}
	return "Linux " + strings.TrimSpace(string(r))
}

// portState answers from one link dump shared by the reads of a short
// window, so listing every port's state costs one dump.
func (b *Backend) portState(o model.Object) (model.Object, error) {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	if b.stateDump == nil || time.Since(b.stateAt) > b.opts.StateCache {
		dump, err := b.k.PortStates(b.ports)
		if err != nil {
			return nil, err
		}
		b.stateDump, b.stateAt = dump, time.Now()
	}
	name := o.Str("IntfRef")
	st, ok := b.stateDump[name]
	if !ok || !st.Present {
		return model.Object{"Name": name, "OperState": "DOWN", "PresentInHW": "NO"}, nil
	}
	out := model.Object{
		"Name": name, "OperState": upDownState(st.OperUp), "PresentInHW": "YES",
		"IfInOctets": int64(st.InOctets), "IfInUcastPkts": int64(st.InPkts), "IfInDiscards": int64(st.InDrops), "IfInErrors": int64(st.InErrors),
		"IfOutOctets": int64(st.OutOctets), "IfOutUcastPkts": int64(st.OutPkts), "IfOutDiscards": int64(st.OutDrops), "IfOutErrors": int64(st.OutErrors),
	}
	if ev := b.linkEvents(st.Netdev); ev != nil {
		out["NumUpEvents"], out["NumDownEvents"] = ev.numUp, ev.numDown
		out["LastUpEventTime"], out["LastDownEventTime"] = ev.lastUp, ev.lastDwn
	}
	return out, nil
}

func (b *Backend) linkEvents(dev string) *linkEvents {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	if ev := b.events[dev]; ev != nil {
		c := *ev
		return &c
	}
	return nil
}

// netdev is what the Linux dataplane makes of an interface of the switch:
// a netdev, or a loopback (the LogicalIntf's name, made a netdev by
// LoopbackNetdev in its VRF).
type netdev struct {
	name     string
	loopback bool
}

// interfaceNetdevs is how each of the model's interface kinds becomes a
// netdev (backend.Interfaces); a new interface kind adds its entry here.
func (b *Backend) interfaceNetdevs() map[string]func(name, key string) (netdev, error) {
	return map[string]func(name, key string) (netdev, error){
		"Port": func(name, _ string) (netdev, error) {
			if d := b.ports.Netdev(name); d != "" {
				return netdev{name: d}, nil
			}
			return netdev{}, &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("%s has no netdev on this switch (see the port map)", name)}
		},
		// A VLAN's interface is the bridge's SVI netdev (vlan.go); the
		// key is its VlanId.
		"Vlan": func(_, key string) (netdev, error) {
			id, err := strconv.Atoi(key)
			return netdev{name: SVIName(id)}, err
		},
		"LogicalIntf": func(name, _ string) (netdev, error) { return netdev{name: name, loopback: true}, nil },
		// A LAG's interface is its bond, named as the LAG (lag.go).
		"LaPortChannel": func(name, _ string) (netdev, error) { return netdev{name: name}, nil },
	}
}

// netdevOf resolves an interface reference: a mapped port, a loopback,
// or an SVI vlan<N>.
func (b *Backend) netdevOf(ref string) (dev string, loopback bool, err error) {
	d, err := b.intfs.Resolve(ref)
	return d.name, d.loopback, err
}

type changeOf backend.Change

func (c changeOf) before() model.Object { return c.Before }
func (c changeOf) after() model.Object  { return c.After }

// forgetState drops the cached link dump: the kernel changed.
func (b *Backend) forgetState() {
	b.stateMu.Lock()
	b.stateDump = nil
	b.stateMu.Unlock()
}

// recover undoes what an apply interrupted by a crash left in the kernel
// that the store never recorded; replay is the engine's replay (every
// stored object, as a create).
func (b *Backend) recover(tx *Tx, replay []backend.Change) error {
	entries, err := b.readJournal()
	if err != nil || len(entries) == 0 {
		return err
	}
	stored := map[string]map[string]model.Object{}
	for _, c := range replay {
		if stored[c.Kind.Name] == nil {
			stored[c.Kind.Name] = map[string]model.Object{}
		}
		stored[c.Kind.Name][c.Key] = c.After
	}
	if err := b.undoUnrecorded(tx, entries, stored); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	if len(tx.Changed) > 0 {
		b.log.Warn("undid kernel changes of an apply the store did not record (swmgr stopped in the middle of it)", "changes", tx.Changed)
	}
	return nil
}
