package linux

import (
	"fmt"
	"maps"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/swmgr/swmgr/internal/model"
)

// How long the kernel must be quiet after a change event before swmgr
// reconciles (a burst of events from one `ip` command is one repair), and
// how often it reconciles anyway (VRF namespaces are not watched).
const (
	reconcileQuiet = 150 * time.Millisecond
	reconcileEvery = 30 * time.Second
)

// watch follows the switch namespace's link, address and route events:
// link state changes count as port up/down events, and any change starts
// a reconciliation.
func (b *Backend) watch() error {
	links := make(chan netlink.LinkUpdate, 256)
	addrs := make(chan netlink.AddrUpdate, 256)
	routes := make(chan netlink.RouteUpdate, 256)
	done := make(chan struct{})
	errs := func(err error) {
		select {
		case <-b.stop:
			return // the subscriptions' sockets closing as the backend stops
		default:
		}
		b.log.Warn("linux backend: netlink watch", "err", err)
	}
	if err := netlink.LinkSubscribeWithOptions(links, done, netlink.LinkSubscribeOptions{Namespace: &b.k.ns, ErrorCallback: errs}); err != nil {
		return fmt.Errorf("watch links: %w", err)
	}
	if err := netlink.AddrSubscribeWithOptions(addrs, done, netlink.AddrSubscribeOptions{Namespace: &b.k.ns, ErrorCallback: errs}); err != nil {
		close(done)
		return fmt.Errorf("watch addresses: %w", err)
	}
	if err := netlink.RouteSubscribeWithOptions(routes, done, netlink.RouteSubscribeOptions{Namespace: &b.k.ns, ErrorCallback: errs}); err != nil {
		close(done)
		return fmt.Errorf("watch routes: %w", err)
	}
	// Seed the up/down state so the first event is a transition.
	if states, err := b.k.PortStates(b.ports); err == nil {
		b.evMu.Lock()
		for _, st := range states {
			b.events[st.Netdev] = &linkEvents{up: st.OperUp}
		}
		b.evMu.Unlock()
	}
	go func() {
		defer close(b.done)
		defer close(done)
		var quiet <-chan time.Time
		every := time.NewTicker(reconcileEvery)
		defer every.Stop()
		for {
			select {
			case <-b.stop:
				return
			case u, ok := <-links:
				if !ok {
					links = nil
					continue
				}
				port, moved := b.linkEvent(u)
				b.forgetState()
				if moved {
					b.publishPortState(port)
				}
				quiet = time.After(reconcileQuiet)
			case _, ok := <-addrs:
				if !ok {
					addrs = nil
					continue
				}
				quiet = time.After(reconcileQuiet)
			case _, ok := <-routes:
				if !ok {
					routes = nil
					continue
				}
				quiet = time.After(reconcileQuiet)
			case <-quiet:
				quiet = nil
				b.Reconcile()
			case <-every.C:
				b.Reconcile()
			}
		}
	}()
	return nil
}

// linkEvent counts a port's up and down events; it says which port
// moved, if one did.
func (b *Backend) linkEvent(u netlink.LinkUpdate) (port string, moved bool) {
	a := u.Link.Attrs()
	port = b.ports.Port(a.Name)
	if port == "" {
		return "", false
	}
	up := operUp(u.Link)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	b.evMu.Lock()
	defer b.evMu.Unlock()
	ev := b.events[a.Name]
	if ev == nil {
		ev = &linkEvents{}
		b.events[a.Name] = ev
	}
	moved = up != ev.up
	switch {
	case up && !ev.up:
		ev.numUp++
		ev.lastUp = now
	case !up && ev.up:
		ev.numDown++
		ev.lastDwn = now
	}
	ev.up = up
	return port, moved
}

// publishPortState hands a port's state to Options.OnStateChange when its
// link went up or down (a LAG member's loss among them), for the change
// feed's clients.
func (b *Backend) publishPortState(port string) {
	if b.opts.OnStateChange == nil {
		return
	}
	st, err := b.portState(model.Object{"IntfRef": port})
	if err != nil {
		b.log.Warn("linux backend: a port's state for the change feed", "port", port, "err", err)
		return
	}
	// The state form is the configuration with the state beside it.
	o := model.Object{"IntfRef": port}
	b.mu.Lock()
	maps.Copy(o, b.applied["Port"][port])
	b.mu.Unlock()
	maps.Copy(o, st)
	b.opts.OnStateChange("Port", o)
}

// Reconcile puts back what the applied configuration says and the kernel
// no longer has (someone ran `ip addr del` or `ip link set down`): every
// applied object is ensured again, in kind order, in one Tx. What swmgr
// does not manage is not touched. It returns what it changed.
func (b *Backend) Reconcile() []string {
	changed := b.reconcile()
	if len(changed) > 0 {
		b.log.Info("reconciled the kernel with the configuration", "changes", len(changed), "what", changed)
		if b.opts.OnReconcile != nil {
			// Outside b.mu: the callback writes the config log through the
			// engine, whose commits may be waiting for b.mu in Apply.
			b.opts.OnReconcile(changed)
		}
	}
	return changed
}

func (b *Backend) reconcile() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tx := b.k.Begin()
	for _, kind := range reconcileOrder {
		for _, o := range b.applied[kind] {
			if err := drivers[kind].ensure(b, tx, o, o); err != nil {
				b.log.Warn("reconcile", "kind", kind, "object", o, "err", err)
			}
		}
	}
	tx.Commit()
	if len(tx.Changed) > 0 {
		b.forgetState()
	}
	return tx.Changed
}

// reconcileOrder is apply order: what others use first.
var reconcileOrder = []string{"Port", "LaPortChannel", "Vrf", "Vlan", "LogicalIntf", "IPv4Intf", "IPv4Unnumbered", "IPv6Intf", "NDPGlobal", "IPv4Route", "IPv6Route", "Span"}
