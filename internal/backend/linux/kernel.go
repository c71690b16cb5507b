// Package linux makes swmgr's configuration real on a Linux switch: its
// front-panel ports are kernel netdevs (switchdev ASICs offload what the
// kernel is told), and every dataplane kind becomes netlink and tc state.
//
// The package has two layers. The kernel layer (Kernel, Tx and one file per
// kind: port.go, addr.go, vrf.go, vlan.go, loopback.go, route.go, span.go)
// works on plain Go types and knows nothing of the object model; each kind
// has a pure capability check, an idempotent ensure/remove whose every
// kernel change is recorded with its exact inverse in a Tx, and a state
// read. The adapter (backend.go) maps model objects onto those types and
// implements backend.Backend; when the engine's per-kind driver registry
// lands, each kind file becomes one driver.
//
// Everything works inside one network namespace (the switch's), given by
// name or the process's own. VRFs are VRF devices where the kernel has
// them, else one network namespace per VRF (probed at start, see
// Features).
package linux

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Kernel is the switch's network namespace and what swmgr knows of it.
type Kernel struct {
	nsName string // "" for the process's own namespace
	ns     netns.NsHandle
	h      *netlink.Handle
	feat   Features
	// vrfNSPrefix names the namespaces of VRFs when the kernel has no VRF
	// devices: <prefix><vrf>.
	vrfNSPrefix string

	// FailAt, if set, is asked before each kernel change of a Tx with the
	// change's number in that Tx (1-based); an error fails the change.
	// Tests use it to fail a commit midway.
	FailAt func(n int, what string) error

	linkDumps atomic.Int64 // PortStates calls, for the state benchmark

	mu      sync.Mutex
	vrfNS   map[string]*nsHandle // netns-mode VRFs by name
	tables  map[string]uint32    // device-mode VRFs: name -> table
	ethtool *ethtoolFamily
	devlink *devlinkFamily
}

type nsHandle struct {
	name string
	ns   netns.NsHandle
	h    *netlink.Handle
}

// KernelOptions say which namespace to manage and how.
type KernelOptions struct {
	// Netns is the switch's network namespace (as in `ip netns`); "" is
	// the process's own.
	Netns string
	// VRFNetnsPrefix prefixes the namespaces made for VRFs when the kernel
	// has no VRF devices; default "<Netns>-vrf-" or "swmgr-vrf-".
	VRFNetnsPrefix string
	// ForceVRFNetns uses a namespace per VRF even where the kernel has VRF
	// devices (tests of the fallback on a stock kernel).
	ForceVRFNetns bool
}

// OpenKernel opens the switch's namespace and probes what its kernel can do.
func OpenKernel(o KernelOptions) (*Kernel, error) {
	k := &Kernel{nsName: o.Netns, vrfNS: map[string]*nsHandle{}, tables: map[string]uint32{}, vrfNSPrefix: o.VRFNetnsPrefix}
	if k.vrfNSPrefix == "" {
		k.vrfNSPrefix = "swmgr-vrf-"
		if o.Netns != "" {
			k.vrfNSPrefix = o.Netns + "-vrf-"
		}
	}
	var err error
	if o.Netns == "" {
		k.ns, err = netns.Get()
	} else {
		k.ns, err = netns.GetFromName(o.Netns)
	}
	if err != nil {
		return nil, fmt.Errorf("network namespace %q: %w", o.Netns, err)
	}
	if k.h, err = netlink.NewHandleAt(k.ns); err != nil {
		k.ns.Close()
		return nil, fmt.Errorf("netlink in namespace %q: %w", o.Netns, err)
	}
	if k.feat, err = ProbeFeatures(); err != nil {
		k.Close()
		return nil, err
	}
	if o.ForceVRFNetns {
		k.feat.VRFDevice = false
	}
	if err := k.adoptVRFs(); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// Features reports what the kernel can do.
func (k *Kernel) Features() Features { return k.feat }

// Handle is the netlink handle of the switch's namespace.
func (k *Kernel) Handle() *netlink.Handle { return k.h }

// Close releases the namespace handles (it changes nothing in the kernel).
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, v := range k.vrfNS {
		v.h.Close()
		v.ns.Close()
	}
	k.vrfNS = map[string]*nsHandle{}
	if k.devlink != nil {
		k.devlink.close()
		k.devlink = nil
	}
	if k.ethtool != nil {
		k.ethtool.close()
		k.ethtool = nil
	}
	if k.h != nil {
		k.h.Close()
	}
	return k.ns.Close()
}

// namespaces returns the handle of the switch namespace and of every VRF
// namespace, the switch's first.
func (k *Kernel) namespaces() []*nsHandle {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := []*nsHandle{{name: "", ns: k.ns, h: k.h}}
	names := make([]string, 0, len(k.vrfNS))
	for n := range k.vrfNS {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, k.vrfNS[n])
	}
	return out
}

// handleOf returns the handle whose namespace holds the VRF's interfaces:
// the switch's for the default VRF and in VRF-device mode.
func (k *Kernel) handleOf(vrf string) (*netlink.Handle, error) {
	if isDefaultVRF(vrf) || k.feat.VRFDevice {
		return k.h, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	v := k.vrfNS[vrf]
	if v == nil {
		return nil, fmt.Errorf("VRF %s does not exist", vrf)
	}
	return v.h, nil
}

func isDefaultVRF(vrf string) bool { return vrf == "" || vrf == "default" }

// findLink looks a netdev up by name in the switch namespace and then in
// each VRF namespace (a port moves into its VRF's namespace).
func (k *Kernel) findLink(name string) (*netlink.Handle, netlink.Link, error) {
	var notFound netlink.LinkNotFoundError
	for _, n := range k.namespaces() {
		l, err := n.h.LinkByName(name)
		if err == nil {
			return n.h, l, nil
		}
		if !errors.As(err, &notFound) {
			return nil, nil, fmt.Errorf("look up %s: %w", name, err)
		}
	}
	return nil, nil, fmt.Errorf("netdev %s does not exist: %w", name, errNoLink)
}

var errNoLink = errors.New("no such netdev")

// withNetns runs fn on a thread of its own, which fn may move to another
// network namespace (netns.NewNamed does), and brings the thread back to
// swmgr's namespace after: for the few operations netlink handles cannot
// do (making a named namespace). A thread that cannot go back is not
// unlocked: it dies with its goroutine rather than serve others in the
// wrong namespace.
func withNetns(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("return to own namespace: %w", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}
