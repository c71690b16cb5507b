package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/frr"
	"github.com/swmgr/swmgr/internal/model"
)

// NDPGlobal on the Linux backend. A timer at FlexSwitch's factory value
// leaves the platform's own (model.NDPTimersOf); any other is applied:
// ReachableTime and RetransmitInterval to the kernel's IPv6 neighbour
// table parameters (net.ipv6.neigh.<dev>.base_reachable_time_ms and
// retrans_time_ms) of every interface swmgr manages, in the switch's
// namespace and every VRF's, and to net.ipv6.neigh.default where the
// switch's namespace is the initial one (the kernel keeps that one default
// for every namespace: a netdev made or moved anywhere copies it, so in a
// namespace of its own swmgr gives each new interface the timers itself,
// in the commit that makes it or moves it: ndpFollow);
// RouterAdvertisementInterval to FRR (zebra's `ipv6 nd ra-interval`) on
// the interfaces of the BGP-unnumbered neighbors, where FRR sends router
// advertisements. A timer set back to its factory value gives the kernel
// its own default (RFC 4861's, model.Kernel*) back and takes the line out
// of FRR. Each write records its inverse in the Tx; reconciliation writes
// again what someone changed by hand.

// ndpSysctls are the neighbour table parameters NDPGlobal sets.
var ndpSysctls = []struct {
	name   string
	timer  func(model.NDPTimers) int64
	kernel int64 // the kernel's default
}{
	{"base_reachable_time_ms", func(t model.NDPTimers) int64 { return t.ReachableMs }, model.KernelReachableTimeMs},
	{"retrans_time_ms", func(t model.NDPTimers) int64 { return t.RetransMs }, model.KernelRetransTimeMs},
}

// readSysctls reads files under /proc/sys (paths relative to it, like
// net/ipv6/neigh/default/retrans_time_ms) in the namespace ns; one that
// does not exist there is left out.
func (k *Kernel) readSysctls(ns netns.NsHandle, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	err := withNetns(func() error {
		if err := netns.Set(ns); err != nil {
			return err
		}
		for _, p := range paths {
			b, err := os.ReadFile(filepath.Join("/proc/sys", p))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("sysctl %s: %w", sysctlName(p), err)
			}
			out[p] = strings.TrimSpace(string(b))
		}
		return nil
	})
	return out, err
}

// writeSysctl writes a file under /proc/sys in the namespace ns.
func (k *Kernel) writeSysctl(ns netns.NsHandle, path, value string) error {
	err := withNetns(func() error {
		if err := netns.Set(ns); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join("/proc/sys", path), []byte(value), 0o644)
	})
	if err != nil {
		return fmt.Errorf("sysctl %s: %w", sysctlName(path), err)
	}
	return nil
}

// setSysctl changes a sysctl of ns from old to value, with its inverse.
func (tx *Tx) setSysctl(ns netns.NsHandle, path, old, value string) error {
	return tx.change(fmt.Sprintf("set %s %s", sysctlName(path), value),
		func() error { return tx.k.writeSysctl(ns, path, value) },
		func() error { return tx.k.writeSysctl(ns, path, old) })
}

// sysctlName is sysctl(8)'s name of a path under /proc/sys.
func sysctlName(path string) string { return strings.ReplaceAll(path, "/", ".") }

// maxTickMs is the longest clock tick of a Linux kernel (HZ 100).
const maxTickMs = 10

// sameTicks says the kernel holds ms already: it keeps these timers in
// clock ticks and reads back the next tick's ms (1001 ms is 1004 at
// 250 Hz), so a value read back less than a tick above it is it, not a
// change by hand to write again at every reconciliation.
func sameTicks(read string, ms int64) bool {
	v, err := strconv.ParseInt(read, 10, 64)
	return err == nil && v >= ms && v < ms+maxTickMs
}

// routedIntfKinds are the kinds that make an interface routed (its
// IntfRef): an address, or one borrowed.
var routedIntfKinds = []string{"IPv4Intf", "IPv4Unnumbered", "IPv6Intf"}

// ndpNetdevs are the interfaces whose neighbour tables NDPGlobal sets:
// every port's netdev and the netdev of every routed interface (applied,
// or in more: a VLAN interface, a LAG), loopbacks aside (they have no
// neighbours). Callers hold b.mu.
func (b *Backend) ndpNetdevs(more ...model.Object) []string {
	var devs []string
	for _, p := range b.ports.Ports() {
		if dev := b.ports.Netdev(p); dev != "" {
			devs = append(devs, dev)
		}
	}
	intfs := more
	for _, kind := range routedIntfKinds {
		for _, o := range b.applied[kind] {
			intfs = append(intfs, o)
		}
	}
	for _, o := range intfs {
		if dev, lb, err := b.netdevOf(o.Str("IntfRef")); err == nil && !lb {
			devs = append(devs, dev)
		}
	}
	slices.Sort(devs)
	return slices.Compact(devs)
}

// ensureNDP gives the kernel NDPGlobal's timers; before (nil on create)
// says which were applied, so that a timer set back to its factory value
// gets the kernel's default back.
func (tx *Tx) ensureNDP(devs []string, after, before model.Object) error {
	want, had := model.NDPTimersOf(after), model.NDPTimers{}
	if before != nil {
		had = model.NDPTimersOf(before)
	}
	for _, s := range ndpSysctls {
		v := s.timer(want)
		if v == 0 {
			if s.timer(had) == 0 {
				continue // the kernel's own, never changed
			}
			v = s.kernel
		}
		value := strconv.FormatInt(v, 10)
		for _, n := range tx.k.namespaces() {
			paths := make([]string, 0, len(devs)+1)
			for _, dev := range append([]string{"default"}, devs...) {
				paths = append(paths, "net/ipv6/neigh/"+dev+"/"+s.name)
			}
			have, err := tx.k.readSysctls(n.ns, paths)
			if err != nil {
				return err
			}
			for _, p := range paths { // in order: default first
				if old, ok := have[p]; ok && !sameTicks(old, v) {
					if err := tx.setSysctl(n.ns, p, old, value); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// ndpInEffect reads the timers in effect from the switch's namespace:
// net.ipv6.neigh.default's where the namespace has one (the initial
// namespace alone has: the kernel keeps one default for all, which a
// netdev made in any namespace copies), else the first interface's.
func (b *Backend) ndpInEffect(o model.Object) (model.Object, error) {
	b.mu.Lock()
	devs := append([]string{"default"}, b.ndpNetdevs()...)
	b.mu.Unlock()
	var paths []string
	for _, dev := range devs {
		for _, s := range ndpSysctls {
			paths = append(paths, "net/ipv6/neigh/"+dev+"/"+s.name)
		}
	}
	have, err := b.k.readSysctls(b.k.ns, paths)
	if err != nil {
		return nil, err
	}
	var read [2]int64
	for i := 0; i < len(paths); i += len(ndpSysctls) {
		if _, ok := have[paths[i]]; ok {
			read[0], _ = strconv.ParseInt(have[paths[i]], 10, 64)
			read[1], _ = strconv.ParseInt(have[paths[i+1]], 10, 64)
			break
		}
	}
	return model.NDPInEffect(o, read[0], read[1]), nil
}

// stageNDP gives FRR's stage the NDPGlobal whose advertisement interval
// changed (a reconciliation, which ensures the same object again, stages
// nothing); without FRR there is no advertisement to time.
func (b *Backend) stageNDP(tx *Tx, o model.Object) {
	if b.bgp == nil {
		return
	}
	b.bgp.mu.Lock()
	cur := b.bgp.applied["NDPGlobal"][frr.DefaultVRF]
	b.bgp.mu.Unlock()
	if cur != nil && model.NDPTimersOf(cur).RAInterval == model.NDPTimersOf(o).RAInterval {
		return
	}
	st := b.bgpStage(tx, "NDPGlobal")
	st["NDPGlobal"] = map[string]model.Object{frr.DefaultVRF: o.Clone()}
}

// raIntervals are the router advertisement intervals FRR is given: the
// NDPGlobal's, when not its factory value, on the interface of every
// neighbor by interface (BGP unnumbered, where FRR sends advertisements).
func raIntervals(neighbors []frr.Neighbor, ndp map[string]model.Object) []frr.RAInterval {
	secs := model.NDPTimersOf(ndp[frr.DefaultVRF]).RAInterval
	if secs == 0 {
		return nil
	}
	var out []frr.RAInterval
	for _, n := range neighbors {
		if n.NeighborAddress == "" && n.IntfRef != "" && !slices.ContainsFunc(out, func(r frr.RAInterval) bool { return r.Interface == n.IntfRef }) {
			out = append(out, frr.RAInterval{Interface: n.IntfRef, Seconds: uint32(secs)})
		}
	}
	return out
}

// ndpDriver is the NDPGlobal kind on the Linux backend.
var ndpDriver = &driver{
	// The model refuses what the kernel should not be given (a
	// RetransmitInterval that floods); the kernel takes every other value.
	check: func(*Backend, changeView) error { return nil },
	ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
		if err := tx.ensureNDP(b.ndpNetdevs(), after, before); err != nil {
			return err
		}
		b.stageNDP(tx, after)
		return nil
	},
	// NDPGlobal is a singleton, never deleted by a client; the start's
	// recovery removes one the store never recorded: the kernel's own
	// timers back.
	remove: func(b *Backend, tx *Tx, before model.Object) error {
		factory := model.Object{"ReachableTime": int64(model.NDPFactoryReachableTime), "RetransmitInterval": int64(model.NDPFactoryRetransmitInterval), "RouterAdvertisementInterval": int64(model.NDPFactoryRAInterval)}
		if err := tx.ensureNDP(b.ndpNetdevs(), factory, before); err != nil {
			return err
		}
		b.stageNDP(tx, factory)
		return nil
	},
	state: func(b *Backend, o model.Object) (model.Object, error) {
		st, err := b.ndpInEffect(o)
		if err == nil && b.bgp == nil {
			st["RouterAdvertisementIntervalInEffect"] = int64(0) // no routing daemon sends any
		}
		return st, err
	},
}

// ndpFollow gives what a batch made (a VRF's new namespace, a port moved
// into it) NDPGlobal's timers: the batch's NDPGlobal, else the applied
// one. A batch of no dataplane change, or timers all the kernel's own,
// costs nothing. Callers hold b.mu.
func (b *Backend) ndpFollow(tx *Tx, changes []backend.Change) error {
	var cur model.Object
	for _, o := range b.applied["NDPGlobal"] {
		cur = o
	}
	dataplane := false
	var intfs []model.Object
	for _, c := range changes {
		switch {
		case c.Kind.Name == "NDPGlobal" && c.Op != backend.Delete:
			cur = c.After
		case drivers[c.Kind.Name] != nil:
			dataplane = true
			if slices.Contains(routedIntfKinds, c.Kind.Name) && c.Op != backend.Delete {
				intfs = append(intfs, c.After)
			}
		}
	}
	if t := model.NDPTimersOf(cur); cur == nil || !dataplane || (t.ReachableMs == 0 && t.RetransMs == 0) {
		return nil
	}
	return tx.ensureNDP(b.ndpNetdevs(intfs...), cur, cur)
}
