package linux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/chrony"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// Options configure the Linux backend.
type Options struct {
	Kernel KernelOptions
	// PortMap is the port map file's content; nil uses DefaultPortMap.
	PortMap     []byte
	PortMapName string // for messages
	Version     string // SwVersion
	// Others gets the changes and state reads of the kinds that are not
	// the dataplane's (users, BGP, NTP, system settings: the sibling
	// issue's), so they behave as on the simulated switch meanwhile.
	Others backend.Backend
	// Journal is the apply journal's path (see journal.go); "" keeps none.
	Journal string
	// OnReconcile is told what a reconciliation put back (for the config
	// log); nil only logs.
	OnReconcile func(changes []string)
	Log         *slog.Logger
	// StateCache is how long one link dump answers port state reads
	// (default 200 ms): a GET of every port's state costs one dump.
	StateCache time.Duration
	// FRR, when set, runs BGPGlobal, BGPVrf and BGPv4Neighbor in FRR
	// (bgp.go); its Netns defaults to the switch's. Nil leaves them to
	// Others.
	FRR *frr.Options
	// Chrony, when set, runs NtpServer in chronyd (ntp.go); its Netns
	// defaults to the switch's. Nil leaves it to Others.
	Chrony *chrony.Options
	// System, when set, applies SystemParam's Hostname and Timezone to
	// the host (system.go). Nil leaves them to Others.
	System *SystemOptions
}

// Backend is swmgr's Linux backend: the adapter between the object model
// and the kernel layer. Each kind's mapping lives with the kind (kinds.go);
// this file holds what is common: routing changes to kinds, the check
// phase, all-or-nothing application, and state.
type Backend struct {
	k      *Kernel
	ports  *PortMap
	opts   Options
	log    *slog.Logger
	others backend.Backend
	start  time.Time

	mu       sync.Mutex // serialises kernel transactions (apply, reconcile)
	applied  map[string]map[string]model.Object
	replayed bool // the first Apply (the engine's replay) has run
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
	ntp           *ntpRunner

	stop chan struct{}
	done chan struct{}
}

// driverOf is the kind's driver on this backend (nil: Others').
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
	k, err := OpenKernel(opts.Kernel)
	if err != nil {
		return nil, err
	}
	netdevs, err := k.Netdevs()
	if err != nil {
		k.Close()
		return nil, err
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
	if len(pm.byPort) == 0 {
		k.Close()
		return nil, fmt.Errorf("no front-panel ports: no netdev is named swp<N> or fpPort<N> in namespace %q; give a --port-map", opts.Kernel.Netns)
	}
	b := &Backend{k: k, ports: pm, opts: opts, log: opts.Log, others: opts.Others, start: time.Now(),
		applied: map[string]map[string]model.Object{}, events: map[string]*linkEvents{},
		stop: make(chan struct{}), done: make(chan struct{})}
	b.log.Info("linux backend", "netns", opts.Kernel.Netns, "ports", len(pm.byPort), "kernel", k.Features().String())
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
	err := b.k.Close()
	if b.others != nil {
		err = errors.Join(err, b.others.Close())
	}
	return err
}

// Replays implements backend.Backend: the stored dataplane objects are
// handed over at every start, which is the start's reconciliation (each
// kind's ensure changes only what differs).
func (b *Backend) Replays(kind *model.Kind) bool {
	if b.driverOf(kind.Name) != nil {
		return true
	}
	return b.others != nil && b.others.Replays(kind)
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
		st := states[p]
		o := model.Object{"IntfRef": p, "IfIndex": int64(st.IfIndex), "AdminState": upDownState(st.AdminUp), "Mtu": int64(st.MTU), "PresentInHW": "YES"}
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
	if b.others != nil {
		more, err := b.others.Discover(ctx)
		if err != nil {
			return nil, err
		}
		for kind, objs := range more {
			if _, ours := found[kind]; !ours {
				found[kind] = objs
			}
		}
	}
	return found, nil
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

// Apply implements backend.Backend: check everything, then make every
// dataplane change in one kernel Tx (undone entirely if one fails), then
// hand the other kinds' changes to Others (and undo the Tx if that fails).
func (b *Backend) Apply(ctx context.Context, changes []backend.Change) error {
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
	if err := b.writeJournal(changes); err != nil {
		return err
	}
	var others []backend.Change
	for _, c := range changes {
		d := b.driverOf(c.Kind.Name)
		if d == nil {
			others = append(others, c)
			continue
		}
		var err error
		if c.Op == backend.Delete {
			err = d.remove(b, tx, c.Before)
		} else {
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
	if len(others) > 0 && b.others != nil {
		if err := b.others.Apply(ctx, others); err != nil {
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

// State implements backend.Backend.
func (b *Backend) State(ctx context.Context, kind *model.Kind, o model.Object) (model.Object, error) {
	if d := b.driverOf(kind.Name); d != nil {
		if d.state == nil {
			return model.Object{}, nil
		}
		return d.state(b, o)
	}
	if kind.Name == "SystemParam" {
		// The system settings are the sibling issue's; the kernel's
		// features (how VRFs, loopbacks and mirrors are made) are said here.
		st := model.Object{}
		if b.others != nil {
			if s, err := b.others.State(ctx, kind, o); err == nil {
				st = s
			}
		}
		st["Kernel"] = kernelRelease() + " (" + b.k.Features().String() + ")"
		st["UpTime"] = time.Since(b.start).Round(time.Second).String()
		return st, nil
	}
	if b.others == nil {
		return model.Object{}, nil
	}
	return b.others.State(ctx, kind, o)
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

// netdevOf resolves an interface reference: a mapped port, a loopback,
// or an SVI vlan<N>.
func (b *Backend) netdevOf(ref string) (dev string, loopback bool, err error) {
	if d := b.ports.Netdev(ref); d != "" {
		return d, false, nil
	}
	if portNameRE.MatchString(ref) {
		return "", false, &Refusal{Field: "IntfRef", Msg: fmt.Sprintf("%s has no netdev on this switch (see the port map)", ref)}
	}
	if svi.MatchString(ref) {
		return ref, false, nil
	}
	return ref, true, nil
}

var svi = regexp.MustCompile(`^vlan[1-9][0-9]{0,3}$`)

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
